/**
 * A version-2 file finalized from its writer's journal (recover()): the
 * sample blocks the last checkpoint names, and the trailer written from the
 * checkpoint's tables, counts, table coding and heap section exactly as
 * ProfileWriter.finalize writes its own (trailer.ts): what the writer would
 * have finalized right after its last flush().
 */
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import { SlotWriter } from '../../varint/index';
import { ZSTD_LEVEL } from '../format';
import { ZstdStream, concatBytes, decodeV2WriterState, reserveHeader, type FileOutput } from '../file/index';
import type { JournalState } from '../file/index';
import { COUNTER_COUNT, Counter } from './engines/index';
import { writeTrailer } from './trailer';

/** A table's bytes as the trailer reads a WriterStringTable or WriterFrameTable. */
const tableOf = (count: number, bytes: Uint8Array) => ({ count, encoded: { view: () => bytes } });

/**
 * The decoded sample blocks, handed to `write` a piece at a time (a region of
 * months is GBs: it is never held whole); returns the bytes handed.
 */
export type RegionCopy = (write: (bytes: Uint8Array) => void) => number;

/**
 * Writes the whole file to `out` from `copyRegion` (the decoded sample blocks)
 * and the journal's last checkpoint; returns its counts. Journal bytes the
 * trailer cannot code are ERR_TACHYON_JOURNAL_CORRUPT.
 */
export function writeFromJournal(
  out: FileOutput,
  copyRegion: RegionCopy,
  journal: JournalState,
): { samples: number; threads: number } {
  const state = decodeV2WriterState(journal.pendingRepeats);
  const h = journal.header;
  const slots = new SlotWriter(out, { littleEndian: true });
  const header = reserveHeader(slots);
  let regionBytes: number;
  if (h.compression === 'zstd') {
    const stream = new ZstdStream(ZSTD_LEVEL);
    try {
      regionBytes = copyRegion((piece) => stream.compress(piece, 'continue', out));
      stream.compress(new Uint8Array(0), 'end', out);
    } finally {
      stream.release();
    }
  } else {
    regionBytes = copyRegion((piece) => out.write(piece));
  }
  const counters = new Float64Array(COUNTER_COUNT);
  counters[Counter.totalSamples] = state.samples;
  counters[Counter.threadCount] = state.threads;
  counters[Counter.bytesWritten] = regionBytes;
  const heapSection = state.heapHeader === null ? null : concatBytes([state.heapHeader, journal.heapChunks]);
  try {
    writeTrailer({
      engine: { output: out, counters: () => counters },
      slots,
      header,
      formatVersion: 2,
      strings: tableOf(journal.stringCount, journal.strings),
      frames: tableOf(journal.frameCount, journal.frames),
      heapSection,
      internals: {
        compressTables: state.tablesLevel !== null,
        tablesLevel: state.tablesLevel ?? undefined,
        frameTable: state.frameTable,
      },
      compression: h.compression,
      littleEndian: true,
      stats: undefined,
      startTime: h.startTimeUs,
      interval: h.sampleIntervalUs,
      config: h.profilingConfig,
    });
  } catch (err) {
    // The trailer re-codes the journal's tables: bytes that are no tables fail there (a write error stays one).
    if (!isProfpackError(err) || err.code === ErrorCode.TACHYON_WRITE_IO) throw err;
    throw new ProfpackError(`the journal's tables do not code as version-2 tables: ${err.message}`, {
      code: ErrorCode.TACHYON_JOURNAL_CORRUPT,
      expected: 'the string and frame tables of a version-2 writer',
      cause: err,
    });
  }
  return { samples: state.samples, threads: state.threads };
}
