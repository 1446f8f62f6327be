/** Recording this process's JS stacks with V8's sampler into Tachyon. */
export { startRecording, type Recording, type RecordingOptions, type RecordingSummary } from './start/index';
export { startWorkerAgent, defaultChannelName, V8Sampler } from './program/index';
export { ChunkIngester, type TickSink } from './writer/index';
export {
  RecordEnv,
  MAX_INTERVAL_US,
  MAX_TIMER_MS,
  checkRange,
  parseDuration,
  type RotateOptions,
  type RotatedFileStats,
  type OnFile,
} from './settings/index';
export { runRecorded, PRELOAD_PATH, type RunRecordedOptions, type RunRecordedResult } from './launch/index';
export { inProcessCommand, recordInProcess } from './launch/index';
export {
  checkHeapOptions,
  parseByteSize,
  DEFAULT_HEAP_INTERVAL_BYTES,
  HEAP_POLLS,
  type HeapPolls,
  HEAP_SHORT_LIVED,
  type HeapShortLived,
} from './settings/index';
