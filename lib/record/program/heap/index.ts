/** Recording V8's sampled heap: allocation and free events, near-OOM harvests, their pipe coding. */
export { diffSamples, NO_SAMPLES, type LiveSamples, type SampleDiff } from './diff';
export { HeapSampler, monotonicUs, type HeapPoll } from './sampler';
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
export { ExternalSampler } from './external';
export {
  FASTEST_CLIMB_BYTES_PER_S,
  HeapLimitWatcher,
  LIMIT_CHECK_MS,
  LONGEST_LIMIT_CHECK_MS,
  maxOldSpaceFlagMb,
  oldGenerationUse,
} from './limit';
