/** Recording this process's JS stacks with V8's sampler into Tachyon. */
export {
  startRecording,
  startWorkerAgent,
  defaultChannelName,
  type Recording,
  type RecordingOptions,
  type RecordingSummary,
} from './recorder';
export { V8Sampler } from './sampler';
export { ChunkIngester } from './ingest';
export { RecordEnv } from './preload-env';
export { runRecorded, PRELOAD_PATH, type RunRecordedOptions, type RunRecordedResult } from './run';
export {
  MAX_INTERVAL_US,
  MAX_TIMER_MS,
  checkRange,
  parseDuration,
  type RotateOptions,
  type RotatedFileStats,
  type OnFile,
} from './rotate';
export { checkHeapOptions, parseByteSize, DEFAULT_HEAP_INTERVAL_BYTES, HEAP_POLLS, type HeapPolls } from './heap/index';
