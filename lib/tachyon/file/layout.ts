/**
 * The open stage of a Tachyon file as CPython 3.15.2's BinaryReader performs it
 * (../shared/notes/tachyon-format.md §2, §6, §7, §10): header, footer, table
 * offsets, statistics block and footer counts, in CPython's order and with its
 * messages. Shared by both backends: it only touches the fixed-size parts of the
 * file, through a FileBytes (a JS buffer, or copies out of the native mapping).
 */
import { ErrorCode, ProfpackError, type ErrorCodeValue } from '../../errors';
import {
  FOOTER_SIZE,
  FORMAT_VERSION,
  Footer,
  HEADER_SIZE,
  Header,
  MAGIC,
  MAGIC_SWAPPED,
  MIN_FRAME_ENTRY_SIZE,
  ProfilingConfig,
  STATS_BLOCK_LEGACY_SIZE,
  STATS_BLOCK_SIZE,
  STATS_SIGNATURE,
  STATS_VERSION,
  StatsBlock,
  StatsPresence,
} from '../format';

/** Random access to the bytes of a file or buffer (copies or views; never retained by callers). */
export interface FileBytes {
  readonly size: number;
  read(start: number, end: number): Uint8Array;
}

/** What CPython's BinaryReader.get_info() returns, in camelCase; u64 fields are bigint. */
export interface ProfileInfo {
  version: number;
  pythonVersion: [number, number, number];
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
  sampleCount: bigint;
  threadCount: number;
  stringCount: number;
  frameCount: number;
  /** The header's u32 read as a signed int, as CPython reports it; only 1 means zstd. */
  compressionType: number;
  durationSec: number | null;
  sampleRate: number | null;
  errorRate: number | null;
  missedSamples: number | null;
  /** 0 wall, 1 cpu, 2 gil, 3 all, 4 exception; null when the writer did not say. */
  mode: number | null;
  /** Capture-feature mask (1 all_threads, 2 native, 4 gc, 8 opcodes, 16 blocking), or null. */
  captureFeatures: number | null;
}

/** Where things are, beyond the info. */
export interface Layout {
  info: ProfileInfo;
  fileSize: number;
  /** Fixed-width fields are in the other byte order ("TACH" at offset 0 of a file read on a LE host is LE-swapped). */
  littleEndian: boolean;
  stringTableOffset: number;
  frameTableOffset: number;
  profilingConfig: number;
  statsBlockSize: number;
  /** The sample region [64, stringTableOffset) is one zstd stream. */
  zstd: boolean;
}

export function openError(code: ErrorCodeValue, message: string, offset?: number, expected?: string): ProfpackError {
  return new ProfpackError(message, { code, offset, expected, details: { stage: 'open' } });
}

/** Fixed-width reads in the file's byte order. */
export class FixedReader {
  constructor(
    readonly bytes: Uint8Array,
    readonly littleEndian: boolean,
  ) {}
  private view(): DataView {
    return new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }
  u32(at: number): number {
    return this.view().getUint32(at, this.littleEndian);
  }
  u64(at: number): bigint {
    return this.view().getBigUint64(at, this.littleEndian);
  }
  f64(at: number): number {
    return this.view().getFloat64(at, this.littleEndian);
  }
}

const U53 = BigInt(Number.MAX_SAFE_INTEGER);

/** A u64 file offset as a number, saturated (anything past 2^53 is past any real file). */
function offsetNumber(value: bigint): number {
  return value > U53 ? Number.MAX_SAFE_INTEGER : Number(value);
}

function hex8(value: number): string {
  return '0x' + value.toString(16).padStart(8, '0');
}

/**
 * Header, footer, offsets and stats block, with CPython 3.15.2's checks in its
 * order. Table parsing and zstd validation follow in the caller.
 */
export function parseLayout(source: FileBytes): Layout {
  const size = source.size;
  if (size < HEADER_SIZE)
    throw openError(ErrorCode.TACHYON_TOO_SMALL, 'File too small for header', 0, `at least ${HEADER_SIZE} bytes`);
  const head = source.read(0, HEADER_SIZE);
  // The magic read little-endian (as CPython on x86 reports it): a LE file starts "HCAT" = 0x54414348.
  const magicLE = (head[0]! | (head[1]! << 8) | (head[2]! << 16) | (head[3]! << 24)) >>> 0;
  let littleEndian: boolean;
  if (magicLE === MAGIC) littleEndian = true;
  else if (magicLE === MAGIC_SWAPPED) littleEndian = false;
  else if (magicLE === 0) {
    throw openError(
      ErrorCode.TACHYON_NOT_FINALIZED,
      "Invalid magic number: 0x00000000 (the header is still the writer's zero placeholder" +
        ': the file was never finalized)',
      0,
      'a finalized Tachyon file',
    );
  } else {
    throw openError(
      ErrorCode.TACHYON_BAD_MAGIC,
      `Invalid magic number: ${hex8(magicLE)}`,
      0,
      `${hex8(MAGIC)} in either byte order`,
    );
  }
  const h = new FixedReader(head, littleEndian);
  const version = h.u32(Header.version);
  const pyMajor = head[Header.pythonMajor]!;
  const pyMinor = head[Header.pythonMinor]!;
  const pyMicro = head[Header.pythonMicro]!;
  if (version !== FORMAT_VERSION) {
    if (version > FORMAT_VERSION) {
      throw openError(
        ErrorCode.TACHYON_FUTURE_VERSION,
        `Binary file was created with Python ${pyMajor}.${pyMinor}.${pyMicro} (format version ${version}), ` +
          `but this is Python 3.15.2 (format version 1)`,
        Header.version,
        'format version 1',
      );
    }
    throw openError(
      ErrorCode.TACHYON_UNSUPPORTED_VERSION,
      `Unsupported format version ${version} (this reader supports version 1)`,
      Header.version,
      'format version 1',
    );
  }
  const profilingConfig = h.u32(Header.profilingConfig);
  const modeBits = profilingConfig & ProfilingConfig.modeMask;
  if (modeBits > 5) {
    throw openError(
      ErrorCode.TACHYON_BAD_MODE,
      `Invalid profiling mode in header: ${modeBits}`,
      Header.profilingConfig,
      'mode bits 0..5',
    );
  }
  const startTimeUs = h.u64(Header.startTimeUs);
  const sampleIntervalUs = h.u64(Header.sampleIntervalUs);
  const sampleCount = h.u64(Header.sampleCount);
  const threadCount = h.u32(Header.threadCount);
  const stringTableOffsetBig = h.u64(Header.stringTableOffset);
  const frameTableOffsetBig = h.u64(Header.frameTableOffset);
  const compressionRaw = h.u32(Header.compressionType);

  const foot = new FixedReader(source.read(size - FOOTER_SIZE, size), littleEndian);
  const stringCount = foot.u32(Footer.stringCount);
  const frameCount = foot.u32(Footer.frameCount);

  const bigSize = BigInt(size);
  if (stringTableOffsetBig > bigSize) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_PAST_END,
      `Invalid string table offset: ${stringTableOffsetBig} exceeds file size ${size}`,
      Header.stringTableOffset,
    );
  }
  if (frameTableOffsetBig > bigSize) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_PAST_END,
      `Invalid frame table offset: ${frameTableOffsetBig} exceeds file size ${size}`,
      Header.frameTableOffset,
    );
  }
  const stringTableOffset = offsetNumber(stringTableOffsetBig);
  const frameTableOffset = offsetNumber(frameTableOffsetBig);
  if (stringTableOffset < HEADER_SIZE) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_BEFORE_DATA,
      `Invalid string table offset: ${stringTableOffset} is before data section`,
      Header.stringTableOffset,
    );
  }
  if (frameTableOffset < HEADER_SIZE) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_BEFORE_DATA,
      `Invalid frame table offset: ${frameTableOffset} is before data section`,
      Header.frameTableOffset,
    );
  }
  if (stringTableOffset > frameTableOffset) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSETS_ORDER,
      `Invalid table offsets: string table (${stringTableOffset}) is after frame table (${frameTableOffset})`,
      Header.stringTableOffset,
    );
  }

  const stats = parseStats(source, littleEndian);

  const info: ProfileInfo = {
    version,
    pythonVersion: [pyMajor, pyMinor, pyMicro],
    startTimeUs,
    sampleIntervalUs,
    sampleCount,
    threadCount,
    stringCount,
    frameCount,
    compressionType: compressionRaw | 0,
    durationSec: stats.durationSec,
    sampleRate: stats.sampleRate,
    errorRate: stats.errorRate,
    missedSamples: stats.missedSamples,
    mode: modeBits === 0 ? null : modeBits - 1,
    captureFeatures:
      profilingConfig & ProfilingConfig.featuresKnown
        ? (profilingConfig >>> ProfilingConfig.featuresShift) & ProfilingConfig.featuresMask
        : null,
  };
  return {
    info,
    fileSize: size,
    littleEndian,
    stringTableOffset,
    frameTableOffset,
    profilingConfig,
    statsBlockSize: stats.size,
    zstd: compressionRaw === 1,
  };
}

/**
 * Footer counts against the bytes that remain, before anything is allocated
 * (CPython checks them after decompressing the sample region).
 */
export function checkTableCounts(layout: Layout): void {
  const { info, fileSize, stringTableOffset, frameTableOffset } = layout;
  const maxStrings = fileSize - stringTableOffset;
  if (info.stringCount > maxStrings) {
    throw openError(
      ErrorCode.TACHYON_STRING_COUNT,
      `Invalid string count ${info.stringCount} exceeds maximum possible ${maxStrings}`,
      fileSize - FOOTER_SIZE + Footer.stringCount,
    );
  }
  const maxFrames = Math.floor((fileSize - frameTableOffset) / MIN_FRAME_ENTRY_SIZE);
  if (info.frameCount > maxFrames) {
    throw openError(
      ErrorCode.TACHYON_FRAME_COUNT,
      `Invalid frame count ${info.frameCount} exceeds maximum possible ${maxFrames}`,
      fileSize - FOOTER_SIZE + Footer.frameCount,
    );
  }
}

/** A statistics block's size and values (CPython's get_info() fields). */
export interface StatsValuesRead {
  size: number;
  durationSec: number | null;
  sampleRate: number | null;
  errorRate: number | null;
  missedSamples: number | null;
}

const SIGNATURE_BYTES = Array.from(STATS_SIGNATURE, (c) => c.charCodeAt(0));

/**
 * The statistics block before the footer (§6), both versions: found by its
 * signature and version in the 16 bytes before the footer, starting no
 * earlier than `from`; null without one. `checkSize` throws the version's
 * error for a size it refuses (CPython's bounds, or version 2's 56 or 32).
 */
export function readStatsBlock(
  source: FileBytes,
  littleEndian: boolean,
  from: number,
  checkSize: (size: number, sizeOffset: number) => void,
): StatsValuesRead | null {
  const footerStart = source.size - FOOTER_SIZE;
  const tailStart = footerStart - StatsBlock.tailSize;
  if (tailStart < from) return null;
  const tail = source.read(tailStart, footerStart);
  for (let i = 0; i < 8; i++) if (tail[i] !== SIGNATURE_BYTES[i]) return null;
  const t = new FixedReader(tail, littleEndian);
  if (t.u32(8) !== STATS_VERSION) return null;
  const blockSize = t.u32(12);
  checkSize(blockSize, tailStart + 12);
  const block = new FixedReader(source.read(footerStart - blockSize, footerStart), littleEndian);
  let errorRate: number | null = null;
  let missedSamples: number | null = null;
  if (blockSize >= STATS_BLOCK_SIZE) {
    const flags = block.u32(StatsBlock.presenceFlags);
    if (flags & StatsPresence.ErrorRate) errorRate = block.f64(StatsBlock.errorRate);
    if (flags & StatsPresence.MissedSamples) missedSamples = block.f64(StatsBlock.missedSamples);
  }
  return {
    size: blockSize,
    durationSec: block.f64(StatsBlock.durationSec),
    sampleRate: block.f64(StatsBlock.sampleRate),
    errorRate,
    missedSamples,
  };
}

/** Version 1's statistics block with CPython's checks (a block may even overlap the header). */
function parseStats(source: FileBytes, littleEndian: boolean): StatsValuesRead {
  const size = source.size;
  const stats = readStatsBlock(source, littleEndian, 0, (blockSize, at) => {
    // CPython: 32 <= size <= file_size - 32.
    if (blockSize < STATS_BLOCK_LEGACY_SIZE || blockSize > size - FOOTER_SIZE) {
      throw openError(
        ErrorCode.TACHYON_STATS_SIZE,
        'Invalid profiling statistics size',
        at,
        `${STATS_BLOCK_SIZE} or ${STATS_BLOCK_LEGACY_SIZE}`,
      );
    }
  });
  if (stats === null) return { size: 0, durationSec: null, sampleRate: null, errorRate: null, missedSamples: null };
  const { durationSec, sampleRate, errorRate, missedSamples } = stats;
  const finiteNonNegative = (v: number | null): boolean => v !== null && Number.isFinite(v) && v >= 0;
  if (
    !finiteNonNegative(durationSec) ||
    !finiteNonNegative(sampleRate) ||
    (errorRate !== null && !finiteNonNegative(errorRate)) ||
    (missedSamples !== null && !Number.isFinite(missedSamples))
  ) {
    throw openError(
      ErrorCode.TACHYON_STATS_VALUES,
      'Invalid profiling statistics values',
      size - FOOTER_SIZE - stats.size,
      'finite values, rates and duration >= 0',
    );
  }
  return stats;
}
