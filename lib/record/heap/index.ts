/** Recording V8's sampled heap: allocation and free events, near-OOM harvests, their pipe coding. */
export {
  HeapStacks,
  NO_STACK,
  type HeapAllocationBatch,
  type HeapEventSink,
  type HeapFreeBatch,
  type HeapMemorySample,
  type HeapRecordingInfo,
} from './events';
export { diffSamples, NO_SAMPLES, type LiveSamples, type SampleDiff } from './diff';
export { HeapSampler, type HeapPoll } from './sampler';
export { flattenHeapTree, HeapStackNumbers, type SamplingHeapNode } from './stacks';
export {
  heapSamplerChoice,
  NO_PARENT,
  probeHeapSampler,
  type FlatHeapProfile,
  type HeapSamplerChoice,
  type HeapSamplerKind,
  type NativeHeapSampler,
} from './probe';
export { HeapLimitWatcher, LIMIT_CHECK_MS, maxOldSpaceFlagMb, oldGenerationUse } from './limit';
export {
  checkHeapOptions,
  HEAP_POLLS,
  type HeapPolls,
  HEAP_SHORT_LIVED,
  type HeapShortLived,
  parseByteSize,
  DEFAULT_HEAP_INTERVAL_BYTES,
  DEFAULT_NEAR_LIMIT_RATIO,
  MIN_HEAP_INTERVAL_BYTES,
  MAX_HEAP_INTERVAL_BYTES,
  type HeapOptions,
} from './options';
export { encodeHeapFrame, HeapFrameReceiver, HEAP_FRAME_FLAG, type PollMemory } from './wire';
export {
  HeapRecorder,
  driveHarvests,
  POLL_CPU_SHARE,
  POLL_WALL_SHARE,
  POLL_HEADROOM_SHARE,
  NATIVE_POLL_SHARE,
  INSPECTOR_POLL_SHARES,
  NATIVE_POLL_SHARES,
  timedPollDue,
  type PollPace,
  type PollShares,
} from './recorder';
