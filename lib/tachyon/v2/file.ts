/**
 * Version-2 files (docs/format-v2.md): version 1's header, tables, stats block
 * and footer, with a sample region made of sample blocks (blocks.ts) and
 * optionally zstd-compressed tables. CPython 3.15 refuses version 2 at open
 * ("format version 2"), so a version-2 file is never half-read by it.
 *
 * V2FileWriter streams samples to disk (or memory) through a 512 KiB buffer
 * and, when compression is on, one zstd frame; readProfileV2 decodes a whole
 * file held in memory.
 */
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError } from '../../errors';
import { readInputFile } from '../../input';
import {
  Compression,
  FOOTER_SIZE,
  Footer,
  HEADER_SIZE,
  Header,
  MAGIC,
  MAGIC_SWAPPED,
  MAX_PROFILING_MODE,
  MAX_STACK_DEPTH,
  ProfilingConfig,
  STATS_BLOCK_LEGACY_SIZE,
  STATS_BLOCK_SIZE,
  STATS_SIGNATURE,
  STATS_VERSION,
  StatsBlock,
  StatsPresence,
  WRITER_PYTHON_VERSION,
  WRITE_BUFFER_SIZE,
  ZSTD_LEVEL,
  ZSTD_MAX_DECOMPRESSED,
  FORMAT_VERSION_2,
} from '../format';
import { ByteSink, ByteSource } from './bytes';
import { SampleBlockReader, SampleBlockWriter, type StackCoding, type V2Sample } from './blocks';
import { BLOCK_MAX_SAMPLES, BlockKind, HEADER_FLAGS_OFFSET, HeaderFlag, KNOWN_HEADER_FLAGS } from './format';
import { canTerminateStrings, decodeFrameTable, decodeStringTable, encodeFrameTable, encodeStringTable, frameTableEntry, type FrameTableCoding, type FrameTableEntry } from './tables';
import { v2Native } from './native';
import { ZstdStream, zstdCompress, zstdDecompress } from '../file/zstd';

export interface V2WriterOptions {
  /** How stacks are coded: memtrace's prediction, or the stack table. Default 'stacktable'. */
  stackCoding?: StackCoding;
  sampleIntervalUs: number | bigint;
  startTimeUs?: number | bigint;
  /** The sample region: one zstd frame (default) or raw blocks. */
  compression?: 'zstd' | 'none';
  /** zstd level of the sample region (default 5, CPython's). */
  level?: number;
  /** Store the string and frame tables as zstd frames (default: when compression is zstd). */
  compressTables?: boolean;
  /** zstd level of the tables (written once, at finalize). Default 19. */
  tablesLevel?: number;
  /** Frame-table coding (tables.ts). Default 'columns', the smallest measured; 'mtf' measured larger than 'plain'. */
  frameTable?: FrameTableCoding;
  /** Profiling mode 0..4 (−1 or undefined = unknown) and capture-feature mask 0..31. */
  mode?: number;
  captureFeatures?: number;
  /** Samples per block (tests use small blocks to cross block boundaries). */
  blockMaxSamples?: number;
}

export interface V2Stats {
  durationSec: number;
  sampleRate: number;
  errorRate?: number | null;
  missedSamples?: number | null;
}

/** Where a writer's bytes go: appended, then the header patched at offset 0. */
interface Output {
  write(bytes: Uint8Array): void;
  patch(bytes: Uint8Array, position: number): void;
  close(): void;
}

class FileOutput implements Output {
  private readonly fd: number;
  constructor(path: string) {
    this.fd = fs.openSync(path, 'w');
  }
  write(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(this.fd, bytes, done, bytes.length - done);
  }
  patch(bytes: Uint8Array, position: number): void {
    fs.writeSync(this.fd, bytes, 0, bytes.length, position);
  }
  close(): void {
    fs.closeSync(this.fd);
  }
}

class MemoryOutput implements Output {
  readonly sink = new ByteSink(1 << 16);
  write(bytes: Uint8Array): void {
    this.sink.append(bytes);
  }
  patch(bytes: Uint8Array, position: number): void {
    this.sink.bytes.set(bytes, position);
  }
  close(): void {}
}

function profilingConfig(mode: number | undefined, features: number | undefined): number {
  const m = mode ?? -1;
  const f = features ?? -1;
  if (!Number.isInteger(m) || m < -1 || m > MAX_PROFILING_MODE) throw new ProfpackError('invalid profiling mode', { code: ErrorCode.INVALID_ARGUMENT, expected: '-1..4' });
  if (!Number.isInteger(f) || f < -1 || f > 31) throw new ProfpackError('invalid capture features', { code: ErrorCode.INVALID_ARGUMENT, expected: '-1..31' });
  let word = m + 1;
  if (f >= 0) word |= ProfilingConfig.featuresKnown | (f << ProfilingConfig.featuresShift);
  return word;
}

/** Writes a version-2 profile. One writer per file; not thread-safe. */
export class V2FileWriter {
  private readonly output: Output;
  private readonly memory: MemoryOutput | null;
  private readonly blocks: SampleBlockWriter;
  private readonly zstd: ZstdStream | null;
  private readonly buffer = new ByteSink(WRITE_BUFFER_SIZE);
  private readonly strings: string[] = [];
  private readonly stringIds = new Map<string, number>();
  private readonly frames: FrameTableEntry[] = [];
  private readonly frameIds = new Map<string, number>();
  private stats: V2Stats | null = null;
  private state: 'open' | 'finalized' | 'closed' = 'open';
  private bytesWritten = HEADER_SIZE;
  private readonly options: Required<Omit<V2WriterOptions, 'mode' | 'captureFeatures'>> & { config: number };

  private constructor(output: Output, memory: MemoryOutput | null, options: V2WriterOptions) {
    this.output = output;
    this.memory = memory;
    const compression = options.compression ?? 'zstd';
    if (compression !== 'zstd' && compression !== 'none') throw new ProfpackError(`unknown compression ${String(compression)}`, { code: ErrorCode.INVALID_ARGUMENT, expected: "'zstd' or 'none'" });
    const stackCoding = options.stackCoding ?? 'stacktable';
    if (stackCoding !== 'predict' && stackCoding !== 'stacktable') throw new ProfpackError(`unknown stack coding ${String(stackCoding)}`, { code: ErrorCode.INVALID_ARGUMENT, expected: "'predict' or 'stacktable'" });
    this.options = {
      stackCoding,
      sampleIntervalUs: options.sampleIntervalUs,
      startTimeUs: options.startTimeUs ?? 0,
      compression,
      level: options.level ?? ZSTD_LEVEL,
      compressTables: options.compressTables ?? compression === 'zstd',
      tablesLevel: options.tablesLevel ?? 19,
      frameTable: options.frameTable ?? 'columns',
      blockMaxSamples: options.blockMaxSamples ?? BLOCK_MAX_SAMPLES,
      config: profilingConfig(options.mode, options.captureFeatures),
    };
    this.zstd = compression === 'zstd' ? new ZstdStream(this.options.level) : null;
    this.blocks = new SampleBlockWriter(stackCoding, { sampleIntervalUs: options.sampleIntervalUs, startTimeUs: this.options.startTimeUs }, (block) => this.onBlock(block), this.options.blockMaxSamples);
    // The header is patched at finalize; a killed writer leaves 64 zero bytes in front.
    output.write(new Uint8Array(HEADER_SIZE));
  }

  static open(path: string, options: V2WriterOptions): V2FileWriter {
    return new V2FileWriter(new FileOutput(path), null, options);
  }

  /** A writer whose finalize() returns the file's bytes. */
  static inMemory(options: V2WriterOptions): V2FileWriter {
    const memory = new MemoryOutput();
    return new V2FileWriter(memory, memory, options);
  }

  get sampleCount(): number {
    return this.blocks.sampleCount;
  }

  private checkOpen(): void {
    if (this.state !== 'open') throw new ProfpackError(`writer is ${this.state}`, { code: ErrorCode.V2_WRITER_STATE });
  }

  internString(value: string): number {
    let id = this.stringIds.get(value);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(value);
      this.stringIds.set(value, id);
    }
    return id;
  }

  /** Interns a frame, deduplicated on all 7 stored fields as CPython does. */
  internFrame(filename: string, funcname: string, lineno = -1, endLineno = -1, column = -1, endColumn = -1, opcode: number | null = null): number {
    const entry = frameTableEntry(this.internString(filename), this.internString(funcname), lineno, endLineno, column, endColumn, opcode);
    return this.internFrameEntry(entry);
  }

  internFrameEntry(entry: FrameTableEntry): number {
    const key = `${entry.filenameIndex},${entry.funcnameIndex},${entry.lineno},${entry.endLinenoDelta},${entry.column},${entry.endColumnDelta},${entry.opcode}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push(entry);
      this.frameIds.set(key, id);
    }
    return id;
  }

  /**
   * One sample of one thread. `frameIds` are interned frames, innermost first;
   * beyond 256 the outermost are dropped, as CPython's writer does.
   */
  writeStack(threadId: bigint | number, interpreterId: number, timestampUs: bigint | number, status: number, frameIds: ArrayLike<number>): void {
    this.checkOpen();
    let stack = frameIds;
    if (stack.length > MAX_STACK_DEPTH) stack = Array.prototype.slice.call(stack, 0, MAX_STACK_DEPTH) as number[];
    for (let i = 0; i < stack.length; i++) {
      const f = stack[i]!;
      if (!(f >= 0 && f < this.frames.length) || !Number.isInteger(f)) {
        throw new ProfpackError(`frame id ${f} was not interned`, { code: ErrorCode.INVALID_ARGUMENT, expected: `0..${this.frames.length - 1}` });
      }
    }
    this.blocks.add(BigInt(threadId), interpreterId, timestampUs, status, stack);
  }

  setStats(durationSec: number, sampleRate: number, errorRate?: number | null, missedSamples?: number | null): void {
    this.checkOpen();
    this.stats = { durationSec, sampleRate, errorRate: errorRate ?? null, missedSamples: missedSamples ?? null };
  }

  private onBlock(block: Uint8Array): void {
    if (this.zstd !== null) this.zstd.write(block, (chunk) => this.buffered(chunk));
    else this.buffered(block);
  }

  private buffered(bytes: Uint8Array): void {
    if (this.buffer.length + bytes.length > WRITE_BUFFER_SIZE) this.drain();
    if (bytes.length >= WRITE_BUFFER_SIZE) {
      this.output.write(bytes);
      this.bytesWritten += bytes.length;
    } else {
      this.buffer.append(bytes);
    }
  }

  private drain(): void {
    if (this.buffer.length === 0) return;
    this.output.write(this.buffer.view());
    this.bytesWritten += this.buffer.length;
    this.buffer.clear();
  }

  /** Writes everything and the header; returns the bytes for an in-memory writer. */
  finalize(): Uint8Array | undefined {
    this.checkOpen();
    this.blocks.flush();
    if (this.zstd !== null) this.zstd.end((chunk) => this.buffered(chunk));
    this.drain();
    const o = this.options;
    const nulTerminated = canTerminateStrings(this.strings);
    let stringTable = encodeStringTable(this.strings, nulTerminated);
    let frameTable = encodeFrameTable(this.frames, o.frameTable);
    if (o.compressTables) {
      stringTable = zstdCompress(stringTable, o.tablesLevel);
      frameTable = zstdCompress(frameTable, o.tablesLevel);
    }
    const stringTableOffset = this.bytesWritten;
    const frameTableOffset = stringTableOffset + stringTable.length;
    const tail = new ByteSink(stringTable.length + frameTable.length + STATS_BLOCK_SIZE + FOOTER_SIZE);
    tail.append(stringTable);
    tail.append(frameTable);
    if (this.stats !== null) tail.append(statsBlock(this.stats));
    const fileSize = stringTableOffset + tail.length + FOOTER_SIZE;
    const footer = new Uint8Array(FOOTER_SIZE);
    const fv = new DataView(footer.buffer);
    fv.setUint32(Footer.stringCount, this.strings.length, true);
    fv.setUint32(Footer.frameCount, this.frames.length, true);
    fv.setBigUint64(Footer.fileSize, BigInt(fileSize), true);
    tail.append(footer);
    this.output.write(tail.view());

    const header = new Uint8Array(HEADER_SIZE);
    const hv = new DataView(header.buffer);
    hv.setUint32(Header.magic, MAGIC, true);
    hv.setUint32(Header.version, FORMAT_VERSION_2, true);
    header[Header.pythonMajor] = WRITER_PYTHON_VERSION[0];
    header[Header.pythonMinor] = WRITER_PYTHON_VERSION[1];
    header[Header.pythonMicro] = WRITER_PYTHON_VERSION[2];
    header[HEADER_FLAGS_OFFSET] =
      (o.compressTables ? HeaderFlag.TablesZstd : 0) | (o.frameTable === 'mtf' ? HeaderFlag.FrameTableMtf : 0) | (o.frameTable === 'columns' ? HeaderFlag.FrameTableColumns : 0) |
      (nulTerminated ? HeaderFlag.StringsNulTerminated : 0);
    hv.setBigUint64(Header.startTimeUs, BigInt(o.startTimeUs), true);
    hv.setBigUint64(Header.sampleIntervalUs, BigInt(o.sampleIntervalUs), true);
    hv.setBigUint64(Header.sampleCount, BigInt(this.blocks.sampleCount), true);
    hv.setUint32(Header.threadCount, this.blocks.threadCount, true);
    hv.setBigUint64(Header.stringTableOffset, BigInt(stringTableOffset), true);
    hv.setBigUint64(Header.frameTableOffset, BigInt(frameTableOffset), true);
    hv.setUint32(Header.compressionType, o.compression === 'zstd' ? Compression.Zstd : Compression.None, true);
    hv.setUint32(Header.profilingConfig, o.config, true);
    this.output.patch(header, 0);
    this.output.close();
    this.state = 'finalized';
    return this.memory === null ? undefined : this.memory.sink.take();
  }

  /** Discards the writer without finalizing (the file keeps a zero header). */
  close(): void {
    if (this.state === 'open') {
      this.output.close();
      this.state = 'closed';
    }
  }
}

function statsBlock(stats: V2Stats): Uint8Array {
  const block = new Uint8Array(STATS_BLOCK_SIZE);
  const v = new DataView(block.buffer);
  v.setFloat64(StatsBlock.durationSec, stats.durationSec, true);
  v.setFloat64(StatsBlock.sampleRate, stats.sampleRate, true);
  let flags = 0;
  if (stats.errorRate !== null && stats.errorRate !== undefined) {
    v.setFloat64(StatsBlock.errorRate, stats.errorRate, true);
    flags |= StatsPresence.ErrorRate;
  }
  if (stats.missedSamples !== null && stats.missedSamples !== undefined) {
    v.setFloat64(StatsBlock.missedSamples, stats.missedSamples, true);
    flags |= StatsPresence.MissedSamples;
  }
  v.setUint32(StatsBlock.presenceFlags, flags, true);
  for (let i = 0; i < 8; i++) block[STATS_BLOCK_SIZE - 16 + i] = STATS_SIGNATURE.charCodeAt(i);
  v.setUint32(STATS_BLOCK_SIZE - 8, STATS_VERSION, true);
  v.setUint32(STATS_BLOCK_SIZE - 4, STATS_BLOCK_SIZE, true);
  return block;
}

export interface V2Info {
  version: number;
  pythonVersion: string;
  flags: number;
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
  sampleCount: bigint;
  threadCount: number;
  stringCount: number;
  frameCount: number;
  compressionType: number;
  stringTableOffset: number;
  frameTableOffset: number;
  profilingConfig: number;
  mode: number | null;
  captureFeatures: number | null;
  durationSec: number | null;
  sampleRate: number | null;
  errorRate: number | null;
  missedSamples: number | null;
  /** Bytes of the statistics block before the footer (0 when there is none). */
  statsBlockSize: number;
}

/**
 * Decoded samples, in file order: a block at a time on the JS twin, the
 * whole region at once on the native one.
 */
export interface V2SampleChunk {
  count: number;
  /** Index (first-seen order) of each sample's thread in threadIds / interpreterIds. */
  sampleThread: ArrayLike<number>;
  timestamps: ArrayLike<bigint>;
  statuses: ArrayLike<number>;
  /** Sample i's stack is frames[stackOffsets[i] .. stackOffsets[i + 1]), innermost first. */
  stackOffsets: ArrayLike<number>;
  frames: ArrayLike<number>;
  /** Every thread defined so far. */
  threadIds: readonly bigint[];
  interpreterIds: ArrayLike<number>;
}

export interface V2ReadOptions {
  /** Region decoder: 'native' (native/tachyon/v2) or 'js'; default: the native one when the addon is loaded. */
  backend?: 'native' | 'js';
  /** Cap on the decompressed sample region and tables (CPython's 1 GiB by default). */
  maxDecompressedSize?: number;
}

/** A decoded version-2 file: header facts, tables, and the sample region. */
export interface V2Profile {
  info: V2Info;
  strings: string[];
  frames: FrameTableEntry[];
  /** The (decompressed) sample region. */
  region: Uint8Array;
  /** Which region decoder this profile uses. */
  backend: 'native' | 'js';
  /**
   * The samples in chunks. Bad input: the samples decoded before it are
   * yielded first, then the ProfpackError is thrown. The header's thread
   * and sample counts are not checked here (forEachSample does).
   */
  chunks(): Generator<V2SampleChunk, void, undefined>;
  /** Calls `onSample` for each sample in file order (the stack array is reused). */
  forEachSample(onSample: (threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, stack: Uint32Array, depth: number) => void): number;
  /** Every sample, with its own stack array. */
  samples(): V2Sample[];
}

function headerError(message: string, offset: number, expected?: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.V2_BAD_HEADER, offset, expected });
}

/** True when `bytes` starts with a version-2 header (either byte order). */
export function isVersion2(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  const v = new DataView(bytes.buffer, bytes.byteOffset, 8);
  const magic = v.getUint32(0, true);
  if (magic === MAGIC) return v.getUint32(4, true) === FORMAT_VERSION_2;
  if (magic === MAGIC_SWAPPED) return v.getUint32(4, false) === FORMAT_VERSION_2;
  return false;
}

/** Reads a version-2 file from disk (whole, into memory) and opens it. */
export function openProfileV2(path: string, options: V2ReadOptions = {}): V2Profile {
  return readProfileV2(readInputFile(path, ErrorCode.TACHYON_IO), options);
}

/**
 * Opens a version-2 file held in memory: header, stats, footer, tables, and
 * the sample region (decompressed). Samples are decoded on demand.
 */
export function readProfileV2(bytes: Uint8Array, options: V2ReadOptions = {}): V2Profile {
  const native = options.backend === 'js' ? null : v2Native;
  if (options.backend === 'native' && native === null) {
    throw new ProfpackError('the native version-2 decoder was requested but the addon is not loaded', { code: ErrorCode.NATIVE_UNAVAILABLE });
  }
  const limit = options.maxDecompressedSize ?? ZSTD_MAX_DECOMPRESSED;
  const size = bytes.length;
  if (size < HEADER_SIZE + FOOTER_SIZE) throw headerError(`file of ${size} bytes is too small for a header and footer`, 0, `at least ${HEADER_SIZE + FOOTER_SIZE} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, size);
  const magic = view.getUint32(Header.magic, true);
  if (magic === MAGIC_SWAPPED) throw new ProfpackError('big-endian version-2 files are not supported', { code: ErrorCode.V2_UNSUPPORTED, offset: 0, expected: 'a little-endian file ("HCAT")' });
  if (magic !== MAGIC) throw headerError(`invalid magic number 0x${magic.toString(16).padStart(8, '0')}`, 0, '0x54414348');
  const version = view.getUint32(Header.version, true);
  if (version !== FORMAT_VERSION_2) throw headerError(`format version ${version} is not 2`, Header.version, '2');
  const flags = bytes[HEADER_FLAGS_OFFSET]!;
  if (flags & ~KNOWN_HEADER_FLAGS) throw new ProfpackError(`unknown header flags 0x${flags.toString(16)}`, { code: ErrorCode.V2_UNSUPPORTED, offset: HEADER_FLAGS_OFFSET, expected: `only bits of 0x${KNOWN_HEADER_FLAGS.toString(16)}` });
  if ((flags & HeaderFlag.FrameTableMtf) && (flags & HeaderFlag.FrameTableColumns)) {
    throw headerError('header flags name two frame-table codings', HEADER_FLAGS_OFFSET, 'at most one of FrameTableMtf and FrameTableColumns');
  }
  const frameTableCoding: FrameTableCoding = flags & HeaderFlag.FrameTableColumns ? 'columns' : flags & HeaderFlag.FrameTableMtf ? 'mtf' : 'plain';
  const config = view.getUint32(Header.profilingConfig, true);
  const modeBits = config & ProfilingConfig.modeMask;
  if (modeBits > MAX_PROFILING_MODE + 1) throw headerError(`invalid profiling mode in header: ${modeBits}`, Header.profilingConfig, '0..5');
  const compressionType = view.getUint32(Header.compressionType, true);
  if (compressionType !== Compression.None && compressionType !== Compression.Zstd) {
    throw new ProfpackError(`unknown compression type ${compressionType}`, { code: ErrorCode.V2_UNSUPPORTED, offset: Header.compressionType, expected: '0 or 1' });
  }
  const stringTableOffset = Number(view.getBigUint64(Header.stringTableOffset, true));
  const frameTableOffset = Number(view.getBigUint64(Header.frameTableOffset, true));
  const footerAt = size - FOOTER_SIZE;
  if (stringTableOffset < HEADER_SIZE || stringTableOffset > footerAt) throw headerError(`string table offset ${stringTableOffset} is outside ${HEADER_SIZE}..${footerAt}`, Header.stringTableOffset);
  if (frameTableOffset < stringTableOffset || frameTableOffset > footerAt) throw headerError(`frame table offset ${frameTableOffset} is outside ${stringTableOffset}..${footerAt}`, Header.frameTableOffset);

  // Stats block: just before the footer, found by its signature (as in version 1).
  let tablesEnd = footerAt;
  let durationSec: number | null = null;
  let sampleRate: number | null = null;
  let errorRate: number | null = null;
  let missedSamples: number | null = null;
  let statsBlockSize = 0;
  if (footerAt - 16 >= frameTableOffset) {
    let signature = '';
    for (let i = 0; i < 8; i++) signature += String.fromCharCode(bytes[footerAt - 16 + i]!);
    const statsVersion = view.getUint32(footerAt - 8, true);
    if (signature === STATS_SIGNATURE && statsVersion === STATS_VERSION) {
      const statsSize = view.getUint32(footerAt - 4, true);
      if ((statsSize !== STATS_BLOCK_SIZE && statsSize !== STATS_BLOCK_LEGACY_SIZE) || footerAt - statsSize < frameTableOffset) {
        throw headerError(`invalid profiling statistics size ${statsSize}`, footerAt - 4, `${STATS_BLOCK_SIZE} or ${STATS_BLOCK_LEGACY_SIZE}`);
      }
      const at = footerAt - statsSize;
      durationSec = view.getFloat64(at + StatsBlock.durationSec, true);
      sampleRate = view.getFloat64(at + StatsBlock.sampleRate, true);
      if (statsSize === STATS_BLOCK_SIZE) {
        const presence = view.getUint32(at + StatsBlock.presenceFlags, true);
        if (presence & StatsPresence.ErrorRate) errorRate = view.getFloat64(at + StatsBlock.errorRate, true);
        if (presence & StatsPresence.MissedSamples) missedSamples = view.getFloat64(at + StatsBlock.missedSamples, true);
      }
      tablesEnd = at;
      statsBlockSize = statsSize;
    }
  }
  const stringCount = view.getUint32(footerAt + Footer.stringCount, true);
  const frameCount = view.getUint32(footerAt + Footer.frameCount, true);

  const tablesZstd = (flags & HeaderFlag.TablesZstd) !== 0;
  const tableSpan = (start: number, end: number, what: string): ByteSource => {
    if (!tablesZstd) return new ByteSource(bytes, start, end, 0);
    const plain = zstdDecompress(bytes.subarray(start, end), start, what, limit);
    return new ByteSource(plain, 0, plain.length, start);
  };
  const strings = decodeStringTable(tableSpan(stringTableOffset, frameTableOffset, 'string table'), stringCount, (flags & HeaderFlag.StringsNulTerminated) !== 0);
  const frames = decodeFrameTable(tableSpan(frameTableOffset, tablesEnd, 'frame table'), frameCount, frameTableCoding);

  const stored = bytes.subarray(HEADER_SIZE, stringTableOffset);
  const region = compressionType === Compression.Zstd && stored.length > 0 ? zstdDecompress(stored, HEADER_SIZE, 'sample region', limit) : stored;

  const info: V2Info = {
    version,
    pythonVersion: `${bytes[Header.pythonMajor]}.${bytes[Header.pythonMinor]}.${bytes[Header.pythonMicro]}`,
    flags,
    startTimeUs: view.getBigUint64(Header.startTimeUs, true),
    sampleIntervalUs: view.getBigUint64(Header.sampleIntervalUs, true),
    sampleCount: view.getBigUint64(Header.sampleCount, true),
    threadCount: view.getUint32(Header.threadCount, true),
    stringCount,
    frameCount,
    compressionType,
    stringTableOffset,
    frameTableOffset,
    profilingConfig: config,
    mode: modeBits === 0 ? null : modeBits - 1,
    captureFeatures: config & ProfilingConfig.featuresKnown ? (config >>> ProfilingConfig.featuresShift) & ProfilingConfig.featuresMask : null,
    durationSec,
    sampleRate,
    errorRate,
    missedSamples,
    statsBlockSize,
  };

  function* nativeChunks(): Generator<V2SampleChunk, void, undefined> {
    const d = native!.decodeRegion(region, HEADER_SIZE, info.startTimeUs, info.sampleIntervalUs);
    // Reading a BigUint64Array element allocates a bigint: read each thread id once.
    const chunk: V2SampleChunk = { count: d.sampleThread.length, sampleThread: d.sampleThread, timestamps: d.timestamps, statuses: d.statuses, stackOffsets: d.stackOffsets, frames: d.frames, threadIds: Array.from(d.threadIds), interpreterIds: d.interpreterIds };
    if (chunk.count > 0) yield chunk;
    if (d.error !== undefined) throw d.error;
  }

  function* jsChunks(): Generator<V2SampleChunk, void, undefined> {
    const reader = new SampleBlockReader({ sampleIntervalUs: info.sampleIntervalUs, startTimeUs: info.startTimeUs });
    const threadIds: bigint[] = [];
    const interpreterIds: number[] = [];
    let pos = 0;
    while (pos < region.length) {
      const sampleThread: number[] = [];
      const timestamps: bigint[] = [];
      const statuses: number[] = [];
      const stackOffsets: number[] = [0];
      const frames: number[] = [];
      let failure: unknown = null;
      try {
        pos = reader.decodeBlock(region, HEADER_SIZE, pos, (threadId, interpreterId, timestampUs, status, stack, depth) => {
          const t = reader.lastThreadIndex;
          if (t === threadIds.length) {
            threadIds.push(threadId);
            interpreterIds.push(interpreterId);
          }
          sampleThread.push(t);
          timestamps.push(timestampUs);
          statuses.push(status);
          for (let k = 0; k < depth; k++) frames.push(stack[k]!);
          stackOffsets.push(frames.length);
        });
      } catch (err) {
        failure = err;
      }
      if (sampleThread.length > 0) yield { count: sampleThread.length, sampleThread, timestamps, statuses, stackOffsets, frames, threadIds, interpreterIds };
      if (failure !== null) throw failure;
    }
  }

  const chunks = native !== null ? nativeChunks : jsChunks;

  const forEachSample: V2Profile['forEachSample'] = (onSample) => {
    let delivered = 0;
    const stack = new Uint32Array(MAX_STACK_DEPTH);
    for (const c of chunks()) {
      const { sampleThread, timestamps, statuses, stackOffsets, frames, threadIds, interpreterIds } = c;
      for (let i = 0; i < c.count; i++) {
        const t = sampleThread[i]!;
        if (t >= info.threadCount) throw threadCountError(info, delivered);
        const from = stackOffsets[i]!;
        const depth = stackOffsets[i + 1]! - from;
        for (let k = 0; k < depth; k++) stack[k] = frames[from + k]!;
        delivered++;
        onSample(threadIds[t]!, interpreterIds[t]!, timestamps[i]!, statuses[i]!, stack, depth);
      }
    }
    if (BigInt(delivered) !== info.sampleCount) throw sampleCountError(info, delivered);
    return delivered;
  };

  return {
    info,
    strings,
    frames,
    region,
    backend: native !== null ? 'native' : 'js',
    chunks,
    forEachSample,
    samples() {
      const out: V2Sample[] = [];
      forEachSample((threadId, interpreterId, timestampUs, status, stack, depth) => {
        out.push({ threadId, interpreterId, timestampUs, status, stack: stack.slice(0, depth) });
      });
      return out;
    },
  };
}

/** More threads in the region than the header declares. */
export function threadCountError(info: V2Info, delivered: number): ProfpackError {
  return new ProfpackError(`sample data defines more threads than the header's ${info.threadCount}`, {
    code: ErrorCode.V2_UNDEFINED_THREAD,
    offset: Header.threadCount,
    expected: `at most ${info.threadCount} threads`,
    details: { samplesDelivered: delivered },
  });
}

/** The region ended with another number of samples than the header declares. */
export function sampleCountError(info: V2Info, delivered: number): ProfpackError {
  return new ProfpackError(`sample count mismatch: header declares ${info.sampleCount} samples but the region holds ${delivered}`, {
    code: ErrorCode.V2_BAD_BLOCK,
    offset: Header.sampleCount,
    expected: `${delivered}`,
    details: { samplesDelivered: delivered },
  });
}

/** The stack coding of a version-2 region's first block, or null without samples. */
export function stackCodingOf(region: Uint8Array): StackCoding | null {
  if (region.length < 13) return null;
  return region[12] === BlockKind.Predict ? 'predict' : 'stacktable';
}
