// lib/tachyon/read: ProfileReader (versions 1 and 2), its public types, the replay run and node cache,
// the record decoder (JS twin of native/tachyon/read) and its binding, the tables, the version-2 path.
export { ProfileReader } from './reader';
export { readStringTable } from './strings';
export { MAX_TIMESTAMPS_PER_COLLECT } from './types';
export type {
  Collector,
  TypedCollector,
  Frame,
  InterpreterInfo,
  ProfileInfo,
  ReaderOptions,
  ReplayOptions,
  ReplayStats,
  Sample,
  ThreadInfo,
} from './types';
export { dumpProfile, dumpToJsonText, writeDumpJson, type Dump, type DumpFrame, type DumpSample } from './dump';
export {
  checkFrameIndex,
  v2Frames,
  readProfileV2,
  openProfileV2,
  isVersion2,
  stackCodingOf,
  type V2Info,
  type V2Profile,
  type V2ReadOptions,
  type V2SampleChunk,
} from './v2/index';
export type { NodeReplay, NodeVisitor, RunTimes, StackNodes } from './nodes';
export { openHeapTrace, heapTraceOf, heapTraceOfFile, heapTotalsOf, type HeapTraceOptions } from './heap-trace';
// For recover: the JS record decoder walks a damaged file record by record.
export { DecodeStatus, EVENT_STRIDE, EventKind, Result, type DecodeOutput } from './decoder-output';
export { RecordDecoderJs } from './records';
