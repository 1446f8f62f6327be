/** The profile model: typed, weighted, labelled samples in columnar batches (types.ts says why). */
export type { Frame, SampleType, Label, ThreadRef, ProfileMeta, SampleBatch, SamplerStats } from './types';
export { StackTable } from './stack-table';
export {
  FrameTable,
  ThreadTable,
  LabelSets,
  SourceTables,
  frameKey,
  threadKey,
  parseThreadKey,
  labelKeys,
  scriptPath,
} from './tables';
export { newBatch, sliceBatch, mapBatches, type ProfileSource } from './source';
export { ProfileBuilder, BATCH_ROWS } from './builder';
export {
  SampleTypes,
  sampleTypeName,
  nanosPerUnit,
  chooseSampleType,
  formatValue,
  sampleCountColumn,
  batchSamples,
  lastTickUs,
  timeColumnOrDefault,
} from './units';
export { ANONYMOUS, anonymousName, makeFrame, normalizeFrame, frameLabel, isEpochUs, NodeStatus } from './frames';
export { gapsToNext, GapWeigher } from './gaps';
export { ExactSums, roundExact, twoSumError } from './exact-sum';
export { PROFILER_FRAME_SUFFIXES, isProfilerFrame, withoutProfilerFrames } from './profiler-frames';
export { Remapper, type ProfileTarget, type RemapOptions } from './remap';
export { ThreadStatus } from './status';
export {
  NO_HEAP_STACK,
  unsampledWeight,
  type HeapTraceMeta,
  type HeapLiveAtStart,
  type HeapAllocEvents,
  type HeapFreeEvents,
  type HeapPollSpan,
  type HeapPollColumns,
  type HeapEventBatch,
  type HeapTraceSource,
  type ExternalMemorySample,
  type ExternalObjectCounts,
} from './heap-trace';
