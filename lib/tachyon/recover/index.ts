/**
 * recover(): a finalized version-1 profile from one whose writer died before
 * finalize (SIGKILL, power, a write error). What is on disk then: 64 zero
 * header bytes, the sample records flushed so far (under zstd, an unended
 * frame whose flushed blocks decode), and, from ProfileWriter, the journal
 * (journal.ts) with the tables and held-back REPEAT runs of each flush.
 *
 * With the journal, every sample accepted before the last flush() is
 * recovered: the records up to that flush's region size plus its held-back
 * runs, with its tables. Records past the last flush are dropped even when
 * some reached the disk (a 512 KiB buffer drains on its own): their frames
 * and the runs held back with them are not known. Without a journal (a
 * CPython writer's file, or a journal lost), the complete records on disk are
 * kept and their frames are placeholders `<frame N>` in `<unknown>`; start
 * time and interval are 0 and 1000 µs unless given.
 *
 * Records are checked with the reader's record decoder of the chosen backend
 * (salvageRecords): the output is cut at the first record that does not
 * decode whole.
 *
 * A version-2 file (recoverV2 below) is rebuilt from its journal only: the
 * sealed blocks its last checkpoint names, finalized with the writer's own
 * trailer (write/journal-file.ts), heap events included.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { backend, nativeModule } from '../../backend';
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import {
  Compression,
  FORMAT_VERSION,
  FORMAT_VERSION_2,
  Header,
  HEADER_SIZE,
  RECORD_PREFIX_SIZE,
  NO_OPCODE,
  WRITER_PYTHON_VERSION,
  ZSTD_LEVEL,
  ZSTD_MAX_DECOMPRESSED,
} from '../format';
import { JOURNAL_SUFFIX, concatBytes, parseJournal, readHeader, zstdPrefix } from '../file/index';
import type { FileBytes, JournalState } from '../file/index';
import { BlockKind } from '../codec/index';
import { ProfileReader } from '../read/index';
import { FileOutput, ZstdStream, footer } from '../file/index';
import { WriterFrameTable, WriterStringTable } from '../write/index';
import { AtomicOutput, refuseInputAsOutput, writeFileAtomic } from '../../output-file';
import {
  IN_MEMORY_REGION,
  RegionPieces,
  copyRegion,
  measureRegion,
  readRegion,
  salvageStreaming,
  type RecordScan,
} from './region';
import { failure, openRanges, readInput, refuseWithoutJournal, unreadableResult } from './input';
import type { RecoverResult } from './input';
import { recoverV2 } from './v2';

export interface RecoverOptions {
  /** The journal (default `<inPath>.journal`; used when it exists). */
  journal?: string;
  backend?: 'native' | 'js';
  /** Without a journal: the header's start time and interval (default 0 and 1000). */
  startTimeUs?: bigint;
  sampleIntervalUs?: bigint;
  /** Cap on the decompressed sample region (default 1 GiB, as the reader's). */
  maxDecompressedSize?: number;
}

export type { RecoverResult } from './input';

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
type Backend = 'native' | 'js';

/**
 * Library-internal options (tests): `wrapInput` sees every read recover makes
 * of the profile, to show that a version-2 region is never read whole.
 */
export const RECOVER_INTERNALS = Symbol('profpack.recoverInternals');
export interface RecoverInternals {
  wrapInput?(source: FileBytes): FileBytes;
}

/**
 * Whether a sample region starts with a version-2 sample block (12 zero bytes,
 * kind 4, 5 or 6): version 1's record encodings are 0..3, so no version-1
 * region starts this way.
 */
function startsWithSampleBlock(region: Uint8Array | null): boolean {
  if (region === null || region.length < RECORD_PREFIX_SIZE) return false;
  for (let i = 0; i < RECORD_PREFIX_SIZE - 1; i++) if (region[i] !== 0) return false;
  const kind = region[RECORD_PREFIX_SIZE - 1]!;
  return kind === BlockKind.Predict || kind === BlockKind.StackTable || kind === BlockKind.StackTableRecent;
}

interface TachyonRecoverModule {
  /** native/tachyon/read/recover_scan.h: [end, samples, threads, maxFrame]. */
  salvageRecords(records: Uint8Array, littleEndian: boolean, startTimeUs: bigint): Float64Array;
}

const recoverNative = nativeModule<TachyonRecoverModule>('tachyonRecover');

/**
 * The longest prefix of records that the record decoder replays whole, and
 * what it holds: cut at the start of the first record that fails, decoded
 * again, until a prefix decodes whole. Twin of native/tachyon/read/recover_scan.h.
 */
export function salvageRecords(
  records: Uint8Array,
  littleEndian: boolean,
  startTimeUs: bigint,
  which: 'native' | 'js',
): RecordScan {
  if (which === 'native') {
    if (recoverNative === null)
      throw new ProfpackError('the native backend is not available', { code: ErrorCode.NATIVE_UNAVAILABLE });
    const [end, samples, threads, maxFrame] = recoverNative.salvageRecords(records, littleEndian, startTimeUs);
    return { end: end!, samples: samples!, threads: threads!, maxFrame: maxFrame! };
  }
  // The JS twin is the streaming scan over the buffer read as one raw region.
  return salvageStreaming(
    () => new RegionPieces(records, false, records.length),
    records.length,
    littleEndian,
    startTimeUs,
  );
}

/** The records to write: in memory, or handed over a piece at a time (a region too large to hold). */
type RecordBytes = Uint8Array | ((write: (bytes: Uint8Array) => void) => void);

function writeProfile(
  outPath: string,
  records: RecordBytes,
  compression: 'zstd' | 'none',
  tables: Tables,
  header: {
    startTimeUs: bigint;
    sampleIntervalUs: bigint;
    profilingConfig: number;
    littleEndian: boolean;
    samples: number;
    threads: number;
  },
  check: { backend: 'native' | 'js'; journaled: boolean },
): void {
  // Written beside outPath and renamed once whole: a failure leaves no 0-byte or half file.
  const file = new AtomicOutput(outPath, ErrorCode.TACHYON_RECOVER_FAILED);
  try {
    const out = new FileOutput(file.fd);
    out.write(new Uint8Array(HEADER_SIZE));
    if (compression === 'zstd') {
      const stream = new ZstdStream(ZSTD_LEVEL);
      if (typeof records === 'function') {
        records((bytes) => stream.compress(bytes, 'continue', out));
        stream.compress(new Uint8Array(0), 'end', out);
      } else {
        stream.compress(records, 'end', out);
      }
      stream.release();
    } else if (typeof records === 'function') {
      records((bytes) => out.write(bytes));
    } else {
      out.write(records);
    }
    const stringTableOffset = out.position;
    out.write(tables.strings);
    const frameTableOffset = out.position;
    out.write(tables.frames);
    const le = header.littleEndian;
    out.write(footer(tables.stringCount, tables.frameCount, out.position + 32, le));
    const h = new Uint8Array(HEADER_SIZE);
    const v = new DataView(h.buffer);
    v.setUint32(Header.magic, 0x54414348, le);
    v.setUint32(Header.version, FORMAT_VERSION, le);
    h.set(WRITER_PYTHON_VERSION, Header.pythonMajor);
    v.setBigUint64(Header.startTimeUs, header.startTimeUs, le);
    v.setBigUint64(Header.sampleIntervalUs, header.sampleIntervalUs, le);
    v.setBigUint64(Header.sampleCount, BigInt(header.samples), le);
    v.setUint32(Header.threadCount, header.threads, le);
    v.setBigUint64(Header.stringTableOffset, BigInt(stringTableOffset), le);
    v.setBigUint64(Header.frameTableOffset, BigInt(frameTableOffset), le);
    v.setUint32(Header.compressionType, compression === 'zstd' ? Compression.Zstd : Compression.None, le);
    v.setUint32(Header.profilingConfig, header.profilingConfig, le);
    out.writeAt(0, h);
  } catch (err) {
    file.abort();
    throw isProfpackError(err)
      ? err
      : failure(`writing ${outPath} failed: ${(err as Error).message}`, { path: outPath }, err);
  }
  try {
    replayWhole(file.writePath, check.backend);
  } catch (err) {
    file.abort();
    throw unreadableResult(err, outPath, check.journaled);
  }
  file.commit();
}

/** Opens and replays a profile, as CPython would read it: throws what the reader throws (or a count that differs). */
function replayWhole(path: string, which: Backend, samples?: number): void {
  const reader = ProfileReader.open(path, { backend: which });
  try {
    let seen = 0;
    reader.replay({ collect: (_, timestamps) => void (seen += timestamps.length) });
    if (samples !== undefined && seen !== samples)
      throw new Error(`${seen} samples replay where the journal counts ${samples}`);
  } finally {
    reader.close();
  }
}

const MAX_PLACEHOLDER_FRAMES = 1 << 20;

interface Tables {
  strings: Uint8Array;
  stringCount: number;
  frames: Uint8Array;
  frameCount: number;
}

/** The journal's tables, plus `<frame N>` in `<unknown>` for each frame id the records use that no table names. */
function tablesFor(journal: JournalState | null, maxFrame: number): Tables {
  const empty = new Uint8Array(0);
  const known: Tables = journal ?? { strings: empty, stringCount: 0, frames: empty, frameCount: 0 };
  if (maxFrame < known.frameCount) return known;
  // Each placeholder costs a frame entry: a garbage record naming frame 4e9 must not allocate billions.
  if (maxFrame - known.frameCount >= MAX_PLACEHOLDER_FRAMES) {
    throw failure(
      `the records use frame id ${maxFrame}, more than ${MAX_PLACEHOLDER_FRAMES} beyond ` +
        `the ${known.frameCount} frames any table names`,
    );
  }
  const names = new WriterStringTable();
  const frames = new WriterFrameTable();
  const unknown = known.stringCount + names.intern('<unknown>');
  for (let id = known.frameCount; id <= maxFrame; id++)
    frames.intern(unknown, known.stringCount + names.intern(`<frame ${id}>`), -1, -1, -1, -1, NO_OPCODE);
  return {
    strings: concatBytes([known.strings, names.encoded.view()]),
    stringCount: known.stringCount + names.count,
    frames: concatBytes([known.frames, frames.encoded.view()]),
    frameCount: maxFrame + 1,
  };
}

/**
 * Writes to `outPath` a finalized profile holding what `inPath` (a profile
 * whose writer died) can still give; see the file comment for exactly what.
 */
export function recover(inPath: string, outPath: string, options: RecoverOptions = {}): RecoverResult {
  if (typeof inPath !== 'string' || inPath === '' || typeof outPath !== 'string' || outPath === '') {
    throw new ProfpackError('recover(inPath, outPath) takes two file paths', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'two non-empty strings',
    });
  }
  if (options === null || typeof options !== 'object')
    throw new ProfpackError('options must be an object', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'RecoverOptions',
    });
  const which = options.backend ?? backend.name;
  if (which !== 'native' && which !== 'js')
    throw new ProfpackError(`backend must be 'native' or 'js', not ${String(which)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: "'native' | 'js'",
    });
  const cap = options.maxDecompressedSize ?? ZSTD_MAX_DECOMPRESSED;
  if (!Number.isSafeInteger(cap) || cap < 0)
    throw new ProfpackError(`maxDecompressedSize must be a byte count, got ${String(cap)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'a non-negative integer',
    });

  const journalPath = options.journal ?? inPath + JOURNAL_SUFFIX;
  refuseInputAsOutput(outPath, [inPath, journalPath]);
  const file = openRanges(inPath, 'profile');
  try {
    const internals = (options as { [RECOVER_INTERNALS]?: RecoverInternals })[RECOVER_INTERNALS];
    return recoverFrom(file, internals?.wrapInput?.(file) ?? file, inPath, outPath, journalPath, which, cap, options);
  } finally {
    file.close();
  }
}

function recoverFrom(
  file: FileBytes,
  input: FileBytes,
  inPath: string,
  outPath: string,
  journalPath: string,
  which: Backend,
  cap: number,
  options: RecoverOptions,
): RecoverResult {
  if (file.size < HEADER_SIZE)
    throw failure(`${inPath} has ${file.size} bytes, fewer than the 64 of a header: nothing was written`, {
      path: inPath,
    });
  const header = input.read(0, HEADER_SIZE);
  // The header is patched last: a written magic means finalize ran.
  const unfinished = header.subarray(0, 4).every((b) => b === 0);
  const journal = unfinished && fs.existsSync(journalPath) ? parseJournal(readInput(journalPath, 'journal')) : null;
  // The magic is still zero here: the version field is read little-endian.
  if (unfinished && (readHeader(header).version === FORMAT_VERSION_2 || journal?.header.formatVersion === 2)) {
    const region: FileBytes = {
      size: file.size - HEADER_SIZE,
      read: (start, end) => input.read(start + HEADER_SIZE, end + HEADER_SIZE),
    };
    if (input.readInto !== undefined) region.readInto = (out, start) => input.readInto!(out, start + HEADER_SIZE);
    return recoverV2(inPath, outPath, region, journal, which, cap);
  }
  // Version 1 (and a finalized file, copied) is read whole, as before.
  const bytes = input.read(0, file.size);
  if (!unfinished) {
    // A whole file is copied as it is.
    const reader = ProfileReader.fromBuffer(bytes, { backend: which });
    const info = reader.info;
    reader.close();
    writeFileAtomic(outPath, bytes, ErrorCode.TACHYON_RECOVER_FAILED);
    return {
      source: 'finalized',
      samples: Number(info.sampleCount),
      threads: info.threadCount,
      frames: info.frameCount,
      droppedBytes: 0,
      checkpoints: 0,
    };
  }

  const onDisk = bytes.subarray(HEADER_SIZE);
  const zstd = journal ? journal.header.compression === 'zstd' : ZSTD_MAGIC.every((b, i) => onDisk[i] === b);
  if (journal === null && startsWithSampleBlock(zstd ? zstdPrefix(onDisk, RECORD_PREFIX_SIZE) : onDisk))
    throw refuseWithoutJournal(inPath);
  const wanted = journal && journal.checkpoints > 0 ? Math.min(journal.regionBytes, cap) : cap;
  const littleEndian = journal?.header.littleEndian ?? os.endianness() === 'LE';
  const startTimeUs = journal?.header.startTimeUs ?? options.startTimeUs ?? 0n;

  // A zstd region too large to hold is read a piece at a time (region.ts); a raw one is in memory already.
  const head = zstd
    ? readRegion(new RegionPieces(onDisk, true, Math.min(wanted, IN_MEMORY_REGION + 1)))
    : onDisk.subarray(0, Math.min(onDisk.length, wanted));
  const inMemory = !zstd || head.length <= IN_MEMORY_REGION;
  const pieces = (limit: number, tail?: Uint8Array) => () => new RegionPieces(onDisk, zstd, limit, tail);
  const available = inMemory ? head.length : measureRegion(pieces(wanted));
  const fromJournal = journal !== null && journal.checkpoints > 0 && available >= journal.regionBytes;
  const source: RecoverResult['source'] = fromJournal ? 'journal' : 'records';
  const regionAvailable = fromJournal ? (zstd ? journal.regionBytes : onDisk.length) : available;
  const length = fromJournal ? journal.regionBytes + journal.pendingRepeats.length : available;
  let scan: RecordScan;
  let kept: RecordBytes;
  if (inMemory) {
    const records = fromJournal ? concatBytes([head.subarray(0, journal.regionBytes), journal.pendingRepeats]) : head;
    scan = salvageRecords(records, littleEndian, startTimeUs, which);
    kept = records.subarray(0, scan.end);
  } else {
    const open = fromJournal ? pieces(journal.regionBytes, journal.pendingRepeats) : pieces(available);
    const streamed = salvageStreaming(open, length, littleEndian, startTimeUs);
    scan = streamed;
    kept = (write) => copyRegion(open, streamed.end, write);
  }
  if (scan.end < length && fromJournal) {
    throw failure(`the journal's last flush names ${length} record bytes but only ${scan.end} decode whole`, {
      path: inPath,
      decoded: scan.end,
    });
  }
  const tables = tablesFor(journal, scan.maxFrame);
  writeProfile(
    outPath,
    kept,
    zstd ? 'zstd' : 'none',
    tables,
    {
      startTimeUs,
      sampleIntervalUs: journal?.header.sampleIntervalUs ?? options.sampleIntervalUs ?? 1000n,
      profilingConfig: journal?.header.profilingConfig ?? 0,
      littleEndian,
      samples: scan.samples,
      threads: scan.threads,
    },
    { backend: which, journaled: journal !== null },
  );
  return {
    source,
    samples: scan.samples,
    threads: scan.threads,
    frames: tables.frameCount,
    droppedBytes: Math.max(0, regionAvailable - Math.min(scan.end, regionAvailable)),
    checkpoints: journal?.checkpoints ?? 0,
  };
}
