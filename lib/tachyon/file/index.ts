// lib/tachyon/file: the bytes on disk, both directions, both versions: header, stats block and footer
// (header.ts reads them for both versions, layout.ts holds version 1's checks, layout-writer.ts writes),
// version 1's string and frame table codec (tables.ts, over CPython's varints in cpython-varint.ts),
// zstd (inflate.ts: the one bounded decompression loop; regions.ts, zstd.ts), the buffered file output,
// the recovery journal (journal.ts).
export {
  parseLayout,
  checkTableCounts,
  openError,
  withRecoverHint,
  recoverCommand,
  notFinalizedError,
  hasPlaceholderHeader,
} from './layout';
export {
  bytesSource,
  hasTachyonMagic,
  layoutOf,
  offsetNumber,
  readFooter,
  readFooterU64,
  readHeader,
  readStatsBlock,
  tachyonVersion,
  type FileBytes,
  type HeaderFields,
  type Layout,
  type ProfileInfo,
} from './header';
export {
  parseStringTable,
  parseFrameTable,
  encodeStringEntry,
  encodeFrameEntry,
  endDelta,
  LOCATION_NOT_AVAILABLE,
  type DecodedFrameTable,
} from './tables';
export { readU32, readU64, readZigzag32, varint } from './cpython-varint';
export { reserveHeader, statsBlock, footer, type HeaderSlots, type StatsValues } from './layout-writer';
export { checkZstdRegion, ZstdRegionStream, OUTPUT_CHUNK } from './regions';
export { zstdCompress, zstdDecompress, zstdPrefix, ZstdPieces } from './zstd/index';
export { zstdBinding, defaultCompression, canWriteZstd, noZstdReason } from './zstd/index';
export { ZstdInflater, type InflateErrors, type InflateInput } from './zstd/index';
export { FileOutput, CompressingSink, ZstdStream, ioError, type RecordSink, type ZstdDirective } from './output';
export {
  JOURNAL_SUFFIX,
  JournalWriter,
  parseJournal,
  concatBytes,
  encodeV2WriterState,
  decodeV2WriterState,
  type JournalHeader,
  type JournalState,
  type V2WriterState,
} from './journal';
