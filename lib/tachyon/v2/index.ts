/**
 * Format version 2 (issue 8, docs/format-v2.md): opt-in stack codings beyond
 * Tachyon version 1. Version 1 stays the default: CPython 3.15 reads only it.
 */
export { BlockKind, HeaderFlag, BLOCK_MAX_SAMPLES, CACHE_SIZE, CodewordTag, MTF_SIZE } from './format';
export { ByteSink, ByteSource } from './bytes';
export { PredictCoder, PredictDecoder, hash1, hash2 } from './predict';
export { StackTableCoder, StackTableDecoder } from './stacktable';
export { BLOCK_COLUMNS } from './format';
export { SampleBlockWriter, SampleBlockReader, type StackCoding, type V2Sample } from './blocks';
export { encodeStringTable, decodeStringTable, encodeFrameTable, decodeFrameTable, frameTableEntry, type FrameTableEntry, type FrameTableCoding } from './tables';
export { V2FileWriter, readProfileV2, openProfileV2, isVersion2, stackCodingOf, type V2WriterOptions, type V2Info, type V2Profile, type V2Stats, type V2ReadOptions, type V2SampleChunk } from './file';
export { replayIntoVersion1, frameSpecOf, type Version1Sink } from './downgrade';
