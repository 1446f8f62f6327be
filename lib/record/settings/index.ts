/** A recording's settings, shared by every end: ranges, rotation, the preload's environment, the scripts it starts. */
export {
  DEFAULT_FLUSH_INTERVAL_MS,
  MAX_INTERVAL_US,
  MAX_TIMER_MS,
  checkRange,
  checkRotate,
  parseDuration,
  safeOnFile,
  type OnFile,
  type RotateOptions,
  type RotatedFileStats,
} from './rotate';
export { checkCpu } from './cpu-option';
export { RecordEnv, childFile, type ChildRecording, type InlineRecording } from './preload-env';
export { PRELOAD_PATH, WRITER_PROCESS_PATH } from './scripts';

export {
  DEFAULT_HEAP_INTERVAL_BYTES,
  DEFAULT_NEAR_LIMIT_RATIO,
  HEAP_POLLS,
  HEAP_SHORT_LIVED,
  type HeapOptions,
  type HeapPolls,
  type HeapShortLived,
  MAX_HEAP_INTERVAL_BYTES,
  MIN_HEAP_INTERVAL_BYTES,
  checkHeapOptions,
  parseByteSize,
} from './heap-options';
