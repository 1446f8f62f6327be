// lib/tachyon/file: the bytes on disk, both directions, both versions: header, stats block and footer
// (layout.ts parses, layout-writer.ts writes), zstd (regions.ts, zstd.ts), the buffered file output,
// the recovery journal (journal.ts).
export {
  parseLayout,
  checkTableCounts,
  readStatsBlock,
  openError,
  type FileBytes,
  type Layout,
  type ProfileInfo,
} from './layout';
export { reserveHeader, statsBlock, footer, type HeaderSlots, type StatsValues } from './layout-writer';
export { checkZstdRegion, ZstdRegionStream, OUTPUT_CHUNK } from './regions';
export { zstdCompress, zstdDecompress, zstdPrefix, ZstdPieces } from './zstd';
export { zstdBinding } from './zstd-binding';
export { FileOutput, CompressingSink, ZstdStream, ioError, type RecordSink, type ZstdDirective } from './output';
export {
  JOURNAL_SUFFIX,
  JournalWriter,
  parseJournal,
  concatBytes,
  type JournalHeader,
  type JournalState,
} from './journal';
