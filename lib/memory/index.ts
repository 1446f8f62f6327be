export {
  NO_HEAP_STACK,
  unsampledWeight,
  type HeapTraceMeta,
  type HeapLiveAtStart,
  type HeapAllocEvents,
  type HeapFreeEvents,
  type HeapEventBatch,
  type HeapTraceSource,
  type ExternalMemorySample,
} from '../profile/index';
export { HeapTraceCollector } from './collect';
export { LiveSet } from './live-set';
export { replayHeapTrace, type ReplayHandlers, type ReplaySummary } from './replay';
export {
  heapProfile,
  parseHeapMoment,
  HEAP_SAMPLE_TYPES,
  HEAP_TYPE_NAMES,
  type HeapMoment,
  type HeapProfileOptions,
  type HeapProfileInfo,
} from './profile';
export { leakSuspects, fitLine, type LeakSuspect, type LeakReport } from './leaks';
export { formatLeakTable } from './leak-table';
export {
  externalMemoryTrends,
  formatExternalLines,
  EXTERNAL_SUSPECT_MIN_BYTES,
  EXTERNAL_SUSPECT_MIN_FIT,
  type ExternalMemoryTrend,
} from './external';
export { openHeapFile, openHeapFiles, requireHeapFiles, ConcatenatedHeapTrace } from './open';
