// lib/tachyon: CPython 3.15's Tachyon profile format (version 1) and profpack's version 2.
// The entry: code outside lib/tachyon imports only this file (docs/layout.md walks the folders).
export {
  ProfileReader,
  MAX_TIMESTAMPS_PER_COLLECT,
  type ReaderOptions,
  type Sample,
  type Collector,
  type TypedCollector,
  type InterpreterInfo,
  type ThreadInfo,
  type ReplayOptions,
  type ReplayStats,
  type Frame,
  type ProfileInfo,
  isVersion2,
} from './read/index';
export { dumpProfile, dumpToJsonText, writeDumpJson, type Dump, type DumpFrame, type DumpSample } from './read/index';
export {
  ProfileWriter,
  type ProfileWriterOptions,
  type SampleInterpreterInfo,
  type SampleThreadInfo,
  type FrameInfo as SampleFrameInfo,
  type LocationInfo as SampleLocationInfo,
  type FrameSpec,
  type StackTick,
  type WriterStats,
  type WriterState,
} from './write/index';
export { ModelWriter, type ModelWriterOptions } from './write/index';
export { openHeapTrace, heapTraceOf, heapTraceOfFile, heapTotalsOf, type HeapTraceOptions } from './read/index';
export { readStringTable } from './read/index';
export type { HeapTotals } from './codec/index';
export type { HeapFileSink, HeapSinkOptions, HeapSinkAllocations } from './write/index';
export { setDefaultHeapFrameOf } from './write/index';
export { flushTick } from './write/index';
export type { HeapSinkFrees, HeapSinkLive, HeapSinkMemory, HeapSinkStacks } from './write/index';
export type { NodeVisitor, RunTimes, StackNodes } from './read/index';
export type { ModelSection, ModelMeta, ModelLabel, ModelSampleType } from './codec/index';
export { V2_MAX_STACK_DEPTH } from './codec/index';
export { downgrade, type DowngradeOptions, type DowngradeResult } from './downgrade';
export {
  MAX_STACK_DEPTH,
  ProfilingMode,
  stacksAtCapNote,
  ThreadStatus,
  PROFILING_MODE_NAMES,
  CAPTURE_FEATURE_NAMES,
} from './format';
export * as v2 from './v2-api';
// For the format registry's content detection: the magic in either byte order.
export {
  hasTachyonMagic,
  hasPlaceholderHeader,
  defaultCompression,
  JOURNAL_SUFFIX,
  recoverCommand,
} from './file/index';
export { HeapQueryBudget } from './codec/index';
export { recover, RECOVER_INTERNALS, type RecoverOptions, type RecoverResult } from './recover/index';
