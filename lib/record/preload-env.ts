/** The variables `profpack record` passes its settings to the preload in. */
export const RecordEnv = {
  /** The pipe descriptor harvests go to (the writer is `profpack record` itself). */
  fd: 'PROFPACK_RECORD_FD',
  intervalUs: 'PROFPACK_RECORD_INTERVAL_US',
  harvestMs: 'PROFPACK_RECORD_HARVEST_MS',
  workers: 'PROFPACK_RECORD_WORKERS',
  channel: 'PROFPACK_RECORD_CHANNEL',
  /** Set: also record the heap, at this mean sampling interval in bytes. */
  heapIntervalBytes: 'PROFPACK_RECORD_HEAP_INTERVAL_BYTES',
  heapNearLimitRatio: 'PROFPACK_RECORD_HEAP_NEAR_LIMIT_RATIO',
} as const;
