// lib/tachyon/codec: profpack's version-2 codings (docs/format-v2.md): predicted stacks, the stack table,
// sample blocks and the tables' codings. Imports ../format and ../file only, never read/ or write/.
export { BlockKind, HeaderFlag, BLOCK_MAX_SAMPLES, CACHE_SIZE, CodewordTag, MTF_SIZE, BLOCK_COLUMNS } from './format';
export {
  BLOCK_MAX_BYTES,
  BLOCK_MAX_FRAMES,
  V2_MAX_STACK_DEPTH,
  HEADER_FLAGS_OFFSET,
  KNOWN_HEADER_FLAGS,
  MODEL_OFFSET_IN_FOOTER,
  HEAP_OFFSET_IN_FOOTER,
} from './format';
export { ByteSink, ByteSource } from './bytes';
export { PredictCoder, PredictDecoder, hash1, hash2 } from './predict';
export { StackTableDecoder } from './stacktable';
export { RecentStackCoder, RecentStackDecoder } from './recent';
export { SampleBlockWriter, type V2Sample } from './blocks';
export { blockKindOf, type StackCoding } from './format';
export { SampleBlockReader, type OnV2Sample } from './block-reader';
export {
  encodeStringTable,
  decodeStringTable,
  encodeFrameTable,
  decodeFrameTable,
  frameTableEntry,
  type FrameTableEntry,
  type FrameTableCoding,
} from './tables';
export { entryLocation, version2Tables } from './tables';
export { v2Native, type NativeEncoderHandle } from './native';
export {
  decodeModelSection,
  type ModelSection,
  type ModelMeta,
  type ModelLabel,
  type ModelSampleType,
} from './model/index';
export { ModelSectionEncoder } from './model/index';
export { HeapRecordFlag, encodeHeapChunk, encodeHeapHeader, type HeapTotals } from './heap/index';
export { HeapSectionDecoder, decodeHeapTotals } from './heap/index';
export { HeapSectionEncoder } from './heap/index';
export { HeapQueryBudget } from './heap/index';
