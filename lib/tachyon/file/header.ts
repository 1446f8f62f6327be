/**
 * The one reader of a Tachyon file's fixed-size parts, both versions: the 64-byte header, the 32-byte footer and
 * the statistics block before it (../shared/notes/tachyon-format.md §2, §6, §7; docs/format-v2.md). It decodes
 * fields and checks nothing: each version refuses what it refuses in its own order, with its own codes
 * (layout.ts for version 1, read/v2/file.ts for version 2), and both build their ProfileInfo and Layout here.
 */
import {
  FOOTER_SIZE,
  Footer,
  HEADER_SIZE,
  Header,
  MAGIC,
  MAGIC_SWAPPED,
  ProfilingConfig,
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
  /**
   * Optional: fills `out` from byte `start` (up to the end) and returns the bytes read, allocating nothing: a region
   * streamed from a file (recover) reuses one buffer instead of leaving one behind per piece.
   */
  readInto?(out: Uint8Array, start: number): number;
}

/** A whole file held in memory as FileBytes (views, no copies). */
export function bytesSource(bytes: Uint8Array): FileBytes {
  return { size: bytes.length, read: (start, end) => bytes.subarray(start, end) };
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

/** Fixed-width reads in the file's byte order. */
export class FixedReader {
  private readonly view: DataView;
  constructor(
    readonly bytes: Uint8Array,
    readonly littleEndian: boolean,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u32(at: number): number {
    return this.view.getUint32(at, this.littleEndian);
  }
  u64(at: number): bigint {
    return this.view.getBigUint64(at, this.littleEndian);
  }
  f64(at: number): number {
    return this.view.getFloat64(at, this.littleEndian);
  }
}

/** The header's fields as stored, unchecked. */
export interface HeaderFields {
  /** The first u32 read little-endian: MAGIC for a little-endian file, MAGIC_SWAPPED for a big-endian one. */
  magic: number;
  /** The byte order the magic names (little-endian for any other magic, as CPython on x86 reads it). */
  littleEndian: boolean;
  version: number;
  pythonVersion: [number, number, number];
  /** Byte 11: reserved in version 1, version 2's header flags. */
  flags: number;
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
  sampleCount: bigint;
  threadCount: number;
  stringTableOffset: bigint;
  frameTableOffset: bigint;
  compressionType: number;
  profilingConfig: number;
}

/** The magic as a little-endian u32 (a LE file starts "HCAT" = 0x54414348); -1 before 4 bytes. */
export function magicOf(head: Uint8Array): number {
  if (head.length < 4) return -1;
  return (head[0]! | (head[1]! << 8) | (head[2]! << 16) | (head[3]! << 24)) >>> 0;
}

/** Whether bytes start with the magic in either byte order ("HCAT" little-endian, "TACH" big-endian). */
export function hasTachyonMagic(head: Uint8Array): boolean {
  const magic = magicOf(head);
  return magic === MAGIC || magic === MAGIC_SWAPPED;
}

/** The format version of a file that starts with the magic in either byte order, else null. */
export function tachyonVersion(head: Uint8Array): number | null {
  if (head.length < 8 || !hasTachyonMagic(head)) return null;
  return new FixedReader(head.subarray(0, 8), magicOf(head) === MAGIC).u32(Header.version);
}

/** The header's fields from its first HEADER_SIZE bytes. */
export function readHeader(head: Uint8Array): HeaderFields {
  const magic = magicOf(head);
  const littleEndian = magic !== MAGIC_SWAPPED;
  const h = new FixedReader(head.subarray(0, HEADER_SIZE), littleEndian);
  return {
    magic,
    littleEndian,
    version: h.u32(Header.version),
    pythonVersion: [head[Header.pythonMajor]!, head[Header.pythonMinor]!, head[Header.pythonMicro]!],
    flags: head[Header.reserved]!,
    startTimeUs: h.u64(Header.startTimeUs),
    sampleIntervalUs: h.u64(Header.sampleIntervalUs),
    sampleCount: h.u64(Header.sampleCount),
    threadCount: h.u32(Header.threadCount),
    stringTableOffset: h.u64(Header.stringTableOffset),
    frameTableOffset: h.u64(Header.frameTableOffset),
    compressionType: h.u32(Header.compressionType),
    profilingConfig: h.u32(Header.profilingConfig),
  };
}

/** The footer's two counts. */
export interface FooterCounts {
  stringCount: number;
  frameCount: number;
}

/** The footer's counts (the last FOOTER_SIZE bytes). */
export function readFooter(source: FileBytes, littleEndian: boolean): FooterCounts {
  const foot = new FixedReader(source.read(source.size - FOOTER_SIZE, source.size), littleEndian);
  return { stringCount: foot.u32(Footer.stringCount), frameCount: foot.u32(Footer.frameCount) };
}

/** A u64 of the footer at `at` bytes into it (version 2 keeps section offsets in its reserved bytes). */
export function readFooterU64(source: FileBytes, littleEndian: boolean, at: number): bigint {
  const start = source.size - FOOTER_SIZE + at;
  return new FixedReader(source.read(start, start + 8), littleEndian).u64(0);
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

const U53 = BigInt(Number.MAX_SAFE_INTEGER);

/** A u64 file offset as a number, saturated (anything past 2^53 is past any real file). */
export function offsetNumber(value: bigint): number {
  return value > U53 ? Number.MAX_SAFE_INTEGER : Number(value);
}

/**
 * The Layout (and its ProfileInfo) of a header, footer and stats block that the version's reader accepted.
 * `stringTableOffset` and `frameTableOffset` are the checked offsets.
 */
export function layoutOf(
  header: HeaderFields,
  footer: FooterCounts,
  stats: StatsValuesRead | null,
  fileSize: number,
): Layout {
  const config = header.profilingConfig;
  const modeBits = config & ProfilingConfig.modeMask;
  const info: ProfileInfo = {
    version: header.version,
    pythonVersion: header.pythonVersion,
    startTimeUs: header.startTimeUs,
    sampleIntervalUs: header.sampleIntervalUs,
    sampleCount: header.sampleCount,
    threadCount: header.threadCount,
    stringCount: footer.stringCount,
    frameCount: footer.frameCount,
    compressionType: header.compressionType | 0,
    durationSec: stats?.durationSec ?? null,
    sampleRate: stats?.sampleRate ?? null,
    errorRate: stats?.errorRate ?? null,
    missedSamples: stats?.missedSamples ?? null,
    mode: modeBits === 0 ? null : modeBits - 1,
    captureFeatures:
      config & ProfilingConfig.featuresKnown
        ? (config >>> ProfilingConfig.featuresShift) & ProfilingConfig.featuresMask
        : null,
  };
  return {
    info,
    fileSize,
    littleEndian: header.littleEndian,
    stringTableOffset: offsetNumber(header.stringTableOffset),
    frameTableOffset: offsetNumber(header.frameTableOffset),
    profilingConfig: config,
    statsBlockSize: stats?.size ?? 0,
    zstd: header.compressionType === 1,
  };
}
