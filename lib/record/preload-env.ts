/** The variables `profpack record` passes its settings to the preload in. */
export const RecordEnv = {
  out: 'PROFPACK_RECORD_OUT',
  intervalUs: 'PROFPACK_RECORD_INTERVAL_US',
  harvestMs: 'PROFPACK_RECORD_HARVEST_MS',
  compression: 'PROFPACK_RECORD_COMPRESSION',
  workers: 'PROFPACK_RECORD_WORKERS',
  channel: 'PROFPACK_RECORD_CHANNEL',
} as const;
