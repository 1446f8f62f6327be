// lib/tachyon/write: ProfileWriter (state and public calls), argument conversion, the stack interner,
// the engine contract and its JS / native / version-2 engines (native/tachyon/write, v2), the tables.
export { ProfileWriter } from './writer';
// For the recorder's inline writer, which runs the periodic flush from its own timer.
export { flushTick } from './lifetime';
export { setDefaultHeapFrameOf } from './heap-sink';
export type {
  FrameInfo,
  FrameSpec,
  SampleInterpreterInfo,
  LocationInfo,
  ProfileWriterOptions,
  StackTick,
  SampleThreadInfo,
  WriterState,
  WriterStats,
} from './types';
export { V2FileWriter, type V2WriterOptions, type V2Stats } from './v2-file-writer';
export { ModelWriter, type ModelWriterOptions } from './model-writer';
// For recover: a salvaged file's tables are written again.
export { WriterFrameTable, WriterStringTable } from './tables';
// For recover: a version-2 file finalized from its writer's journal.
export { writeFromJournal } from './journal-file';
export type {
  HeapFileSink,
  HeapSinkOptions,
  HeapSinkAllocations,
  HeapSinkFrees,
  HeapSinkLive,
  HeapSinkMemory,
  HeapSinkStacks,
} from './heap-sink';
