/// <reference lib="esnext.disposable" />
/**
 * ProfileWriter: streams samples to a Tachyon file exactly as CPython
 * 3.15.2's `_remote_debugging.BinaryWriter` does, byte for byte
 * (../shared/notes/tachyon-format.md §2-9). This class holds the policy:
 * argument checks, the string and frame tables, the header (64 zero bytes
 * patched at finalize through fixed-width slots, seed 001's lesson), the
 * stats block and footer, and the open / broken / finalized / closed state.
 * The per-sample encoding runs in the native addon or its JS twin.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { backend } from '../../backend';
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import { SlotWriter, type Slot, type SlotWidth } from '../../varint/slots';
import {
  Compression,
  FOOTER_SIZE,
  FORMAT_VERSION,
  FORMAT_VERSION_2,
  HEADER_SIZE,
  Header,
  MAGIC,
  MAX_PROFILING_MODE,
  MAX_STACK_DEPTH,
  ProfilingConfig,
  STATS_BLOCK_SIZE,
  STATS_SIGNATURE,
  STATS_VERSION,
  StatsBlock,
  StatsPresence,
  U32_MAX,
  U64_MAX,
  WRITER_PYTHON_VERSION,
  ZSTD_LEVEL,
} from '../format';
import { COUNTER_COUNT, Counter, type EngineOptions, type SampleEngine } from './engine';
import { JsSampleEngine } from './engine-js';
import { NativeSampleEngine, tachyonWriterNative } from './engine-native';
import { ioError } from '../file/output';
import { FrameTable, StringTable, toInt32Field, toOpcode } from './tables';
import type { StackCoding } from '../v2/blocks';
import { createV2Engine } from './engine-v2';
import { version2Tables } from '../v2/tables';

// Node 20 has Symbol.dispose/asyncDispose; define them (as Node's own polyfill does) where missing.
if (typeof Symbol.dispose !== 'symbol') Object.defineProperty(Symbol, 'dispose', { value: Symbol.for('nodejs.dispose') });
if (typeof Symbol.asyncDispose !== 'symbol') Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });

export type ProfilingModeName = 'wall' | 'cpu' | 'gil' | 'all' | 'exception';
const MODE_NAMES: Record<ProfilingModeName, number> = { wall: 0, cpu: 1, gil: 2, all: 3, exception: 4 };

export interface ProfileWriterOptions {
  /** Header sample_interval_us (u64). */
  sampleIntervalUs: number | bigint;
  /** Header start_time_us (u64); each thread's first delta is relative to it. Default 0. */
  startTimeUs?: number | bigint;
  /** Default 'zstd' (level 5, CPython's default), as one zstd frame over the sample region. */
  compression?: 'zstd' | 'none';
  /** zstd level; default 5. */
  level?: number;
  /** Profiling mode (0 wall .. 4 exception, or its name); -1 / null / undefined = unknown. */
  mode?: number | ProfilingModeName | null;
  /** Capture-feature mask 0..31 (1 all_threads, 2 native, 4 gc, 8 opcodes, 16 blocking); -1 / null / undefined = unknown. */
  captureFeatures?: number | null;
  /** Force one encoder for this writer (default: the process backend). */
  backend?: 'native' | 'js';
  /**
   * Promise that FrameInfo objects (and their location objects) passed to
   * writeSample are never modified afterwards. writeSample then recognises a
   * frame seen at the same depth in the thread's previous sample by identity,
   * without reading it. Default false: every frame's values are compared.
   */
  immutableFrames?: boolean;
  /**
   * 1 (default): CPython 3.15's format, byte for byte. 2: profpack's opt-in
   * extension (docs/format-v2.md), smaller, which CPython 3.15 refuses at
   * open; `downgrade()` rewrites it as version 1.
   */
  formatVersion?: 1 | 2;
  /**
   * Version 2 only: how stacks are coded: 'stacktable' (default, interned
   * stacks; the smaller on every stream measured) or 'predict' (memtrace's
   * cache and prediction).
   */
  stackCoding?: StackCoding;
}

/** zstd level of version 2's string and frame tables (written once, at finalize; docs/format-v2.md §7). */
const V2_TABLES_LEVEL = 19;

/** CPython's LocationInfo; an element that is not an integer is stored as -1 (absent). */
export interface LocationInfo {
  lineno?: number | bigint | null;
  endLineno?: number | bigint | null;
  colOffset?: number | bigint | null;
  endColOffset?: number | bigint | null;
}

/** CPython's FrameInfo(filename, location, funcname, opcode). */
export interface FrameInfo {
  filename: string;
  funcname: string;
  /** null = no location (all four positions -1); also a [lineno, endLineno, colOffset, endColOffset] tuple. */
  location?: LocationInfo | readonly unknown[] | null;
  /** 0..254; anything else (null, 255, 300, -1) is stored as 255 = none. */
  opcode?: number | bigint | null;
}

/** CPython's ThreadInfo(thread_id, status, frame_info); frames innermost first. */
export interface ThreadInfo {
  threadId: number | bigint;
  /** Status bits; only the low 8 bits are stored (as CPython does). */
  status: number | bigint;
  frameInfo: readonly FrameInfo[];
}

/** CPython's InterpreterInfo(interpreter_id, threads). */
export interface InterpreterInfo {
  interpreterId: number | bigint;
  threads: readonly ThreadInfo[];
}

/** The frame fields of internFrame: strings or ids from internString. */
export interface FrameSpec {
  filename: string | number;
  funcname: string | number;
  lineno?: number | bigint | null;
  endLineno?: number | bigint | null;
  column?: number | bigint | null;
  endColumn?: number | bigint | null;
  opcode?: number | bigint | null;
}

/**
 * One sampling tick for the fast path: thread k's stack is
 * frameIds[stackEnds[k-1] .. stackEnds[k]) (stackEnds[-1] = 0), innermost first.
 */
export interface StackTick {
  threadIds: BigUint64Array | Float64Array | readonly (number | bigint)[];
  /** One per thread, or one number for all. */
  interpreterIds: Uint32Array | readonly number[] | number;
  /** Status bytes (any integer array: the low 8 bits are kept). */
  statuses: Uint8Array | readonly number[];
  stackEnds: Uint32Array;
  frameIds: Uint32Array;
}

/** CPython's BinaryWriter.get_stats(). */
export interface WriterStats {
  repeatRecords: number;
  repeatSamples: number;
  fullRecords: number;
  suffixRecords: number;
  popPushRecords: number;
  totalRecords: number;
  totalSamples: number;
  totalFramesWritten: number;
  framesSaved: number;
  /** Record bytes before compression (header and tables excluded), as CPython counts them. */
  bytesWritten: number;
  frameCompressionPct: number;
  threadCount: number;
}

export type WriterState = 'open' | 'broken' | 'finalized' | 'closed';

interface StatsValues {
  durationSec: number;
  sampleRate: number;
  errorRate: number | undefined;
  missedSamples: number | undefined;
}

const TWO_POW_32 = 0x1_0000_0000;

/** The header's fields in file order with their widths; reserved as zeros, patched at finalize. */
const HEADER_SLOTS: readonly [keyof typeof Header, SlotWidth][] = [
  ['magic', 4],
  ['version', 4],
  ['pythonMajor', 1],
  ['pythonMinor', 1],
  ['pythonMicro', 1],
  ['reserved', 1],
  ['startTimeUs', 8],
  ['sampleIntervalUs', 8],
  ['sampleCount', 8],
  ['threadCount', 4],
  ['stringTableOffset', 8],
  ['frameTableOffset', 8],
  ['compressionType', 4],
  ['profilingConfig', 4],
];

function invalid(message: string, expected: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.INVALID_ARGUMENT, expected });
}

function limit(message: string, expected: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.TACHYON_WRITE_LIMIT, expected });
}

/** A u64 argument as u32 halves; negative or >= 2^64 is a format limit, like CPython's OverflowError. */
function u64Halves(value: unknown, what: string, out: Uint32Array, at: number): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      if (Number.isInteger(value) && value < 0) throw limit(`${what} ${value} is negative`, 'a u64');
      throw invalid(`${what} must be an integer (a bigint beyond 2^53), got ${value}`, 'a safe integer or a bigint');
    }
    if (value < 0) throw limit(`${what} ${value} is negative`, 'a u64');
    out[at] = Math.floor(value / TWO_POW_32);
    out[at + 1] = value >>> 0;
    return;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > U64_MAX) throw limit(`${what} ${value} does not fit a u64`, 'an integer in [0, 2^64)');
    out[at] = Number(value >> 32n);
    out[at + 1] = Number(value & 0xffff_ffffn);
    return;
  }
  throw invalid(`${what} must be a number or bigint, got ${typeof value}`, 'a non-negative integer');
}

function u32Value(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (value < 0 || value > U32_MAX) throw limit(`${what} ${value} does not fit a u32`, 'an integer in [0, 2^32)');
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(U32_MAX)) throw limit(`${what} ${value} does not fit a u32`, 'an integer in [0, 2^32)');
    return Number(value);
  }
  throw invalid(`${what} must be an integer, got ${String(value)}`, 'an integer in [0, 2^32)');
}

/** CPython stores the low 8 bits of the status int (259 -> 3, -1 -> 255). */
function statusByte(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (value >= -0x8000_0000 && value <= 0x7fff_ffff) return value & 0xff;
    return Number(BigInt.asUintN(8, BigInt(value)));
  }
  if (typeof value === 'bigint') return Number(BigInt.asUintN(8, value));
  throw invalid(`status must be an integer, got ${String(value)}`, 'an integer (its low 8 bits are stored)');
}

function finiteNonNegative(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalid(`${what} must be a finite non-negative value, got ${String(value)}`, 'a finite number >= 0');
  }
  return value;
}

/** A writer dropped without finalize() or close() still gives its descriptor back (its buffered samples are lost). */
const abandoned = new FinalizationRegistry<number>((fd) => {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
});

/** Marks "no location" in a StackCache (distinct from any user value). */
const NO_LOCATION = Symbol('no location');
const CACHE_FIELDS = 7;

/**
 * One thread's previous CPython-shaped stack: the raw values of each frame
 * (outermost first) and the frame ids they were interned as. Frames whose
 * raw values all equal the cached ones at the same distance from the bottom
 * reuse the cached id, so a sample only interns the frames that changed.
 * Values, not object identity, are compared: a mutated frame object is a miss.
 */
class StackCache {
  depth = 0;
  /**
   * CACHE_FIELDS raw values per frame, frame j at j * CACHE_FIELDS: filename, funcname,
   * opcode, lineno, endLineno, colOffset, endColOffset. One array, filled up
   * front (a sparse write would make it a slow dictionary array), so a frame's
   * values share cache lines.
   */
  readonly values: unknown[] = new Array(MAX_STACK_DEPTH * CACHE_FIELDS).fill(NO_LOCATION);
  readonly ids = new Uint32Array(MAX_STACK_DEPTH);
  /** The frame objects themselves (used only with immutableFrames). */
  readonly objects: unknown[] = new Array(MAX_STACK_DEPTH).fill(NO_LOCATION);
}

export class ProfileWriter implements Disposable, AsyncDisposable {
  readonly path: string;
  /** The encoder in use: 'native' or 'js'. */
  readonly backend: 'native' | 'js';
  private readonly fd: number;
  private readonly engine: SampleEngine;
  private readonly slots: SlotWriter;
  private readonly header: Partial<Record<keyof typeof Header, Slot>> = {};
  private readonly littleEndian: boolean;
  private readonly compression: 'zstd' | 'none';
  private readonly strings = new StringTable();
  private readonly frames = new FrameTable();
  private readonly startTime: bigint;
  private readonly interval: bigint;
  private readonly config: number;
  private statsValues: StatsValues | undefined;
  private stateValue: WriterState = 'open';
  private brokenBy: unknown;
  private finalCounters: Float64Array | undefined;
  /** Scratch for one writeSample: frame ids of every thread, then encoded. */
  private scratch = new Uint32Array(4096);
  private readonly halves = new Uint32Array(4);
  private tick = { tids: new Uint32Array(128), interps: new Uint32Array(64), statuses: new Uint8Array(64) };
  private readonly stackCaches = new Map<number, Map<number | string, StackCache>>();
  private readonly touched: StackCache[] = [];
  private readonly immutableFrames: boolean;
  /** The header's format version: 1 (CPython's) or 2 (docs/format-v2.md). */
  readonly formatVersion: 1 | 2;

  constructor(path: string, options: ProfileWriterOptions) {
    if (typeof path !== 'string' || path === '') throw invalid('path must be a non-empty string', 'a file path');
    if (options === null || typeof options !== 'object') throw invalid('options are required', '{ sampleIntervalUs, ... }');
    const h = this.halves;
    u64Halves(options.sampleIntervalUs, 'sampleIntervalUs', h, 0);
    this.interval = (BigInt(h[0]!) << 32n) | BigInt(h[1]!);
    u64Halves(options.startTimeUs ?? 0, 'startTimeUs', h, 0);
    this.startTime = (BigInt(h[0]!) << 32n) | BigInt(h[1]!);
    const startHi = h[0]!;
    const startLo = h[1]!;

    const compression = options.compression ?? 'zstd';
    if (compression !== 'zstd' && compression !== 'none') throw invalid(`compression must be 'zstd' or 'none', not ${String(compression)}`, "'zstd' | 'none'");
    this.compression = compression;
    const level = options.level ?? ZSTD_LEVEL;
    if (!Number.isInteger(level) || level < -131072 || level > 22) throw invalid(`level must be a zstd level, got ${String(level)}`, 'an integer zstd level (5 by default)');
    this.config = configWord(options.mode, options.captureFeatures);
    this.immutableFrames = options.immutableFrames === true;
    const { formatVersion, stackCoding } = formatOptions(options);
    this.formatVersion = formatVersion;

    const which = options.backend ?? backend.name;
    if (which !== 'native' && which !== 'js') throw invalid(`backend must be 'native' or 'js', not ${String(which)}`, "'native' | 'js'");
    if (which === 'native' && tachyonWriterNative === null) {
      throw new ProfpackError('the native writer was requested but the addon is not loaded', { code: ErrorCode.NATIVE_UNAVAILABLE });
    }
    this.backend = which;
    this.path = path;
    this.littleEndian = os.endianness() === 'LE';

    try {
      this.fd = fs.openSync(path, 'w');
    } catch (err) {
      throw ioError(err, `opening ${path}`);
    }
    const engineOptions: EngineOptions = { fd: this.fd, compression, level, littleEndian: this.littleEndian, startTimeHi: startHi, startTimeLo: startLo };
    try {
      if (formatVersion === 2) this.engine = createV2Engine(which, engineOptions, stackCoding, this.interval);
      else this.engine = which === 'native' ? new NativeSampleEngine(engineOptions) : new JsSampleEngine(engineOptions);
    } catch (err) {
      fs.closeSync(this.fd);
      throw err;
    }
    // 64 zero bytes, patched at finalize: every field a fixed-width slot.
    this.slots = new SlotWriter(this.engine.output, { littleEndian: this.littleEndian });
    for (const [name, width] of HEADER_SLOTS) {
      const slot = this.slots.reserve(width);
      // The slots must land exactly on format.ts's header offsets (64 bytes in all).
      if (slot.offset !== Header[name]) throw new Error(`header slot ${name} at ${slot.offset}, expected ${Header[name]}`);
      this.header[name] = slot;
    }
    // On disk now (one write(), as CPython's writer does): a writer killed
    // before its first 512 KiB flush leaves a file readers call "not finalized".
    try {
      this.engine.output.flush();
    } catch (err) {
      this.engine.discard();
      fs.closeSync(this.fd);
      throw ioError(err, 'writing the header');
    }
    abandoned.register(this, this.fd, this);
  }

  get state(): WriterState {
    return this.stateValue;
  }

  /** Distinct strings and frames interned so far. */
  get stringCount(): number {
    return this.strings.count;
  }
  get frameCount(): number {
    return this.frames.count;
  }

  private checkOpen(): void {
    if (this.stateValue === 'open') return;
    if (this.stateValue === 'broken') {
      throw new ProfpackError('the writer is broken by an earlier write error; only close() is possible', {
        code: ErrorCode.TACHYON_WRITE_BROKEN,
        cause: this.brokenBy,
      });
    }
    throw new ProfpackError(`the writer is ${this.stateValue}`, { code: ErrorCode.TACHYON_WRITE_CLOSED });
  }

  /** Any failure past validation leaves the writer broken (CPython: "Writer is broken"). */
  private breakWith(err: unknown, what: string): ProfpackError {
    const error = isProfpackError(err) && err.code === ErrorCode.TACHYON_WRITE_IO ? err : ioError(err, what);
    this.stateValue = 'broken';
    this.brokenBy = error;
    return error;
  }

  /** The id of `value` in the string table (filenames and function names share it). */
  internString(value: string): number {
    this.checkOpen();
    return this.strings.intern(value);
  }

  /** The id of a frame (deduplicated on all 7 fields, converted as CPython converts them). */
  internFrame(frame: FrameSpec): number {
    this.checkOpen();
    if (frame === null || typeof frame !== 'object') throw invalid('internFrame expects a frame object', '{ filename, funcname, lineno?, ... }');
    const mark = this.strings.mark();
    try {
      const file = this.stringRef(frame.filename, 'filename');
      const func = this.stringRef(frame.funcname, 'funcname');
      return this.frames.intern(file, func, toInt32Field(frame.lineno), toInt32Field(frame.endLineno), toInt32Field(frame.column), toInt32Field(frame.endColumn), toOpcode(frame.opcode));
    } catch (err) {
      this.strings.rollback(mark);
      throw err;
    }
  }

  private stringRef(value: string | number, what: string): number {
    if (typeof value === 'number') {
      if (!this.strings.has(value)) {
        throw new ProfpackError(`${what} id ${value} was not returned by internString`, {
          code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID,
          expected: `an integer in [0, ${this.strings.count})`,
        });
      }
      return value;
    }
    return this.strings.intern(value);
  }

  /**
   * One sample in CPython's shape: interpreters -> threads -> frames
   * (innermost first), all at `timestampUs`. Every thread is checked and
   * every frame interned before any record is encoded, so a refused sample
   * leaves no bytes behind. At most 256 frames per thread are kept (the
   * outermost are dropped, as CPython 3.15.2 does).
   */
  writeSample(interpreters: readonly InterpreterInfo[], timestampUs: number | bigint): void {
    this.checkOpen();
    if (!Array.isArray(interpreters)) throw invalid('interpreters must be an array', 'InterpreterInfo[]');
    const h = this.halves;
    u64Halves(timestampUs, 'timestampUs', h, 2);
    const tsHi = h[2]!;
    const tsLo = h[3]!;
    // Pass 1: ids and shapes, so nothing is interned for a sample refused on them.
    let words = 0;
    for (const interp of interpreters) {
      if (interp === null || typeof interp !== 'object') throw invalid('an interpreter must be an object', '{ interpreterId, threads }');
      u32Value(interp.interpreterId, 'interpreterId');
      if (!Array.isArray(interp.threads)) throw invalid('interpreter.threads must be an array', 'ThreadInfo[]');
      for (const thread of interp.threads) {
        if (thread === null || typeof thread !== 'object') throw invalid('a thread must be an object', '{ threadId, status, frameInfo }');
        u64Halves(thread.threadId, 'threadId', h, 0);
        statusByte(thread.status);
        if (!Array.isArray(thread.frameInfo)) throw invalid('thread.frameInfo must be an array', 'FrameInfo[]');
        words += 5 + Math.min(thread.frameInfo.length, MAX_STACK_DEPTH);
      }
    }
    if (words === 0) return; // no threads: CPython writes and counts nothing (§5.5)
    if (this.scratch.length < words) this.scratch = new Uint32Array(Math.max(words, this.scratch.length * 2));
    const w = this.scratch;
    // Pass 2: intern every kept frame of every thread (undone if one is refused).
    const stringMark = this.strings.mark();
    const frameMark = this.frames.mark();
    this.touched.length = 0;
    try {
      this.internAll(interpreters, w);
    } catch (err) {
      this.strings.rollback(stringMark);
      this.frames.rollback(frameMark);
      // Cached ids of this call may name rolled-back frames.
      for (const cache of this.touched) cache.depth = 0;
      throw err;
    }
    // Pass 3: encode.
    try {
      for (let i = 0; i < words; ) {
        const depth = w[i + 4]!;
        this.engine.writeStack(w[i]!, w[i + 1]!, w[i + 2]!, tsHi, tsLo, w[i + 3]!, w, i + 5, depth);
        i += 5 + depth;
      }
    } catch (err) {
      throw this.breakWith(err, 'encoding a sample');
    }
  }

  private internAll(interpreters: readonly InterpreterInfo[], w: Uint32Array): void {
    const h = this.halves;
    let at = 0;
    for (const interp of interpreters) {
      const interpreterId = u32Value(interp.interpreterId, 'interpreterId');
      for (const thread of interp.threads) {
        u64Halves(thread.threadId, 'threadId', h, 0);
        const frames = thread.frameInfo;
        const depth = Math.min(frames.length, MAX_STACK_DEPTH);
        w[at] = h[0]!;
        w[at + 1] = h[1]!;
        w[at + 2] = interpreterId;
        w[at + 3] = statusByte(thread.status);
        w[at + 4] = depth;
        at += 5;
        const cache = this.stackCache(h[0]!, h[1]!, interpreterId);
        this.touched.push(cache);
        const shared = sharedBottom(frames, depth, cache, this.immutableFrames);
        for (let j = 0; j < shared; j++) w[at + depth - 1 - j] = cache.ids[j]!;
        // Innermost first, as CPython interns: new strings and frames get ids in that order.
        for (let i = 0; i < depth - shared; i++) w[at + i] = this.internCached(frames[i]!, cache, depth - 1 - i);
        cache.depth = depth;
        at += depth;
      }
    }
  }

  private stackCache(tidHi: number, tidLo: number, interpreterId: number): StackCache {
    let byThread = this.stackCaches.get(interpreterId);
    if (byThread === undefined) {
      byThread = new Map();
      this.stackCaches.set(interpreterId, byThread);
    }
    const key = tidHi < 0x20_0000 ? tidHi * TWO_POW_32 + tidLo : `${tidHi}:${tidLo}`;
    let cache = byThread.get(key);
    if (cache === undefined) {
      cache = new StackCache();
      byThread.set(key, cache);
    }
    return cache;
  }

  /** Interns one frame and records its raw values at outermost-first position j. */
  private internCached(frame: FrameInfo, cache: StackCache, j: number): number {
    const id = this.internFrameInfo(frame);
    const loc = frame.location;
    const v = cache.values;
    const o = j * CACHE_FIELDS;
    v[o] = frame.filename;
    v[o + 1] = frame.funcname;
    v[o + 2] = frame.opcode;
    if (loc === null || loc === undefined) {
      v[o + 3] = NO_LOCATION;
      v[o + 4] = NO_LOCATION;
      v[o + 5] = NO_LOCATION;
      v[o + 6] = NO_LOCATION;
    } else if (Array.isArray(loc)) {
      v[o + 3] = loc[0];
      v[o + 4] = loc[1];
      v[o + 5] = loc[2];
      v[o + 6] = loc[3];
    } else {
      const l = loc as LocationInfo;
      v[o + 3] = l.lineno;
      v[o + 4] = l.endLineno;
      v[o + 5] = l.colOffset;
      v[o + 6] = l.endColOffset;
    }
    cache.ids[j] = id;
    cache.objects[j] = frame;
    return id;
  }

  private internFrameInfo(frame: FrameInfo): number {
    if (frame === null || typeof frame !== 'object') throw invalid('a frame must be an object', '{ filename, funcname, location, opcode }');
    const file = this.strings.intern(frame.filename);
    const func = this.strings.intern(frame.funcname);
    const loc = frame.location;
    let lineno = -1;
    let endLineno = -1;
    let column = -1;
    let endColumn = -1;
    if (Array.isArray(loc)) {
      lineno = toInt32Field(loc[0]);
      endLineno = toInt32Field(loc[1]);
      column = toInt32Field(loc[2]);
      endColumn = toInt32Field(loc[3]);
    } else if (loc !== null && loc !== undefined) {
      const l = loc as LocationInfo;
      lineno = toInt32Field(l.lineno);
      endLineno = toInt32Field(l.endLineno);
      column = toInt32Field(l.colOffset);
      endColumn = toInt32Field(l.endColOffset);
    }
    return this.frames.intern(file, func, lineno, endLineno, column, endColumn, toOpcode(frame.opcode));
  }

  /**
   * The fast path: one thread's stack as frame ids from internFrame,
   * innermost first (a Uint32Array is copied without conversion). Deeper
   * than 256: the outermost frames are dropped.
   */
  writeStack(threadId: number | bigint, interpreterId: number | bigint, timestampUs: number | bigint, status: number | bigint, frameIds: Uint32Array | readonly number[]): void {
    this.checkOpen();
    const h = this.halves;
    u64Halves(threadId, 'threadId', h, 0);
    u64Halves(timestampUs, 'timestampUs', h, 2);
    const interp = u32Value(interpreterId, 'interpreterId');
    const st = statusByte(status);
    if (!(frameIds instanceof Uint32Array) && !Array.isArray(frameIds)) throw invalid('frameIds must be a Uint32Array or an array', 'Uint32Array of frame ids');
    const depth = Math.min(frameIds.length, MAX_STACK_DEPTH);
    const count = this.frames.count;
    for (let i = 0; i < depth; i++) {
      const id = frameIds[i]!;
      if (!(id < count) || !(id >= 0) || !Number.isInteger(id)) {
        throw new ProfpackError(`frame id ${String(id)} at index ${i} was not returned by internFrame`, {
          code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID,
          expected: `an integer in [0, ${count})`,
        });
      }
    }
    try {
      this.engine.writeStack(h[0]!, h[1]!, interp, h[2]!, h[3]!, st, frameIds, 0, depth);
    } catch (err) {
      throw this.breakWith(err, 'encoding a sample');
    }
  }

  /**
   * The fast path for a whole sampling tick: every thread at `timestampUs` in
   * one call (one N-API crossing on the native backend). Same encoding as
   * writeStack per thread, in array order. Everything is checked before any
   * thread is encoded.
   */
  writeStacks(timestampUs: number | bigint, tick: StackTick): void {
    this.checkOpen();
    const h = this.halves;
    u64Halves(timestampUs, 'timestampUs', h, 2);
    if (tick === null || typeof tick !== 'object') throw invalid('writeStacks expects a tick object', '{ threadIds, interpreterIds, statuses, stackEnds, frameIds }');
    const { threadIds, interpreterIds, statuses, stackEnds, frameIds } = tick;
    if (!(stackEnds instanceof Uint32Array) || !(frameIds instanceof Uint32Array)) throw invalid('stackEnds and frameIds must be Uint32Arrays', 'Uint32Array');
    const count = stackEnds.length;
    if (threadIds.length !== count || statuses.length !== count || (typeof interpreterIds !== 'number' && interpreterIds.length !== count)) {
      throw invalid(`a tick of ${count} stacks needs ${count} thread ids, statuses and interpreter ids`, 'arrays of one length');
    }
    if (this.tick.statuses.length < count) this.tick = { tids: new Uint32Array(4 * count), interps: new Uint32Array(2 * count), statuses: new Uint8Array(2 * count) };
    const { tids, interps, statuses: st } = this.tick;
    const single = typeof interpreterIds === 'number' ? u32Value(interpreterIds, 'interpreterId') : -1;
    for (let k = 0; k < count; k++) {
      u64Halves(threadIds[k], 'threadId', h, 0);
      tids[2 * k] = h[1]!;
      tids[2 * k + 1] = h[0]!;
      interps[k] = single >= 0 ? single : u32Value((interpreterIds as ArrayLike<number>)[k], 'interpreterId');
      st[k] = statuses instanceof Uint8Array ? statuses[k]! : statusByte(statuses[k]);
    }
    try {
      // The encoders check the ends and the kept frame ids of the whole tick before encoding any of it.
      this.engine.writeTick(h[2]!, h[3]!, count, tids, interps, st, stackEnds, frameIds, this.frames.count);
    } catch (err) {
      if (isProfpackError(err) && (err.code === ErrorCode.TACHYON_WRITE_UNKNOWN_ID || err.code === ErrorCode.INVALID_ARGUMENT)) throw err;
      throw this.breakWith(err, 'encoding a sample');
    }
  }

  /**
   * Hands every sample record encoded so far to the OS (one write(); no
   * fsync) and returns the number of bytes the file now holds. With zstd the
   * buffered records are compressed with ZSTD_e_flush, so the frame on disk,
   * though unterminated, decompresses to all of them. Not included: each
   * thread's pending REPEAT run (samples repeating the thread's previous
   * stack, held back until its stack changes or finalize, as CPython does),
   * and the tables, stats and footer (finalize). The raw bytes are unchanged
   * by a flush; a zstd flush ends a block early, so the compressed bytes then
   * differ from CPython's (the decompressed region does not). A write error
   * is an ERR_TACHYON_WRITE_IO and leaves the writer broken.
   */
  flush(): number {
    this.checkOpen();
    try {
      this.engine.flushSamples();
      return this.engine.output.position;
    } catch (err) {
      throw this.breakWith(err, 'flushing');
    }
  }

  /** The profile statistics block (56 bytes, before the footer), with CPython's checks. */
  setStats(durationSec: number, sampleRate: number, errorRate?: number | null, missedSamples?: number | null): void {
    this.checkOpen();
    const duration = finiteNonNegative(durationSec, 'duration');
    const rate = finiteNonNegative(sampleRate, 'sample rate');
    const error = errorRate === undefined || errorRate === null ? undefined : finiteNonNegative(errorRate, 'error rate');
    let missed: number | undefined;
    if (missedSamples !== undefined && missedSamples !== null) {
      if (typeof missedSamples !== 'number' || !Number.isFinite(missedSamples)) {
        throw invalid(`missed samples must be a finite value, got ${String(missedSamples)}`, 'a finite number (may be negative)');
      }
      missed = missedSamples;
    }
    this.statsValues = { durationSec: duration, sampleRate: rate, errorRate: error, missedSamples: missed };
  }

  /** CPython's counters. */
  get stats(): WriterStats {
    let c: Float64Array;
    if (this.finalCounters !== undefined) c = this.finalCounters;
    else if (this.stateValue === 'open') c = this.engine.counters();
    else c = new Float64Array(COUNTER_COUNT);
    const saved = c[Counter.framesSaved]!;
    const written = c[Counter.framesWritten]!;
    return {
      repeatRecords: c[Counter.repeatRecords]!,
      repeatSamples: c[Counter.repeatSamples]!,
      fullRecords: c[Counter.fullRecords]!,
      suffixRecords: c[Counter.suffixRecords]!,
      popPushRecords: c[Counter.popPushRecords]!,
      totalRecords: c[Counter.repeatRecords]! + c[Counter.fullRecords]! + c[Counter.suffixRecords]! + c[Counter.popPushRecords]!,
      totalSamples: c[Counter.totalSamples]!,
      totalFramesWritten: written,
      framesSaved: saved,
      bytesWritten: c[Counter.bytesWritten]!,
      frameCompressionPct: saved + written === 0 ? 0 : (saved * 100) / (saved + written),
      threadCount: c[Counter.threadCount]!,
    };
  }

  /**
   * Flushes pending REPEAT runs and the buffer, ends the zstd frame, appends
   * the string table, frame table, stats block and footer, patches the
   * header and closes the file (CPython's order, §5.7).
   */
  finalize(): WriterStats {
    this.checkOpen();
    try {
      this.engine.finishSamples();
      const out = this.engine.output;
      // Version 2 re-codes the tables built as version 1's (docs/format-v2.md §5), compressed with the region.
      const v2Tables =
        this.formatVersion === 2
          ? version2Tables(this.strings.encoded.view(), this.strings.count, this.frames.encoded.view(), this.frames.count, this.compression === 'zstd' ? V2_TABLES_LEVEL : null)
          : null;
      const stringTableOffset = out.position;
      out.write(v2Tables === null ? this.strings.encoded.view() : v2Tables.strings);
      const frameTableOffset = out.position;
      out.write(v2Tables === null ? this.frames.encoded.view() : v2Tables.frames);
      if (this.statsValues !== undefined) out.write(this.statsBlock(this.statsValues));
      const fileSize = out.position + FOOTER_SIZE;
      out.write(this.footer(fileSize));
      const counters = Float64Array.from(this.engine.counters());
      const s = this.slots;
      const hd = this.header as Record<keyof typeof Header, Slot>;
      s.patch(hd.magic, MAGIC);
      s.patch(hd.version, this.formatVersion === 2 ? FORMAT_VERSION_2 : FORMAT_VERSION);
      if (v2Tables !== null) s.patch(hd.reserved, v2Tables.flags);
      s.patch(hd.pythonMajor, WRITER_PYTHON_VERSION[0]);
      s.patch(hd.pythonMinor, WRITER_PYTHON_VERSION[1]);
      s.patch(hd.pythonMicro, WRITER_PYTHON_VERSION[2]);
      s.patch(hd.startTimeUs, this.startTime);
      s.patch(hd.sampleIntervalUs, this.interval);
      s.patch(hd.sampleCount, counters[Counter.totalSamples]!);
      s.patch(hd.threadCount, counters[Counter.threadCount]!);
      s.patch(hd.stringTableOffset, stringTableOffset);
      s.patch(hd.frameTableOffset, frameTableOffset);
      s.patch(hd.compressionType, this.compression === 'zstd' ? Compression.Zstd : Compression.None);
      s.patch(hd.profilingConfig, this.config);
      out.flush();
      this.finalCounters = counters;
    } catch (err) {
      throw this.breakWith(err, 'finalizing');
    }
    this.stateValue = 'finalized';
    abandoned.unregister(this);
    try {
      fs.closeSync(this.fd);
    } catch (err) {
      throw ioError(err, 'closing the file');
    }
    return this.stats;
  }

  private statsBlock(v: StatsValues): Uint8Array {
    const block = new Uint8Array(STATS_BLOCK_SIZE);
    const view = new DataView(block.buffer);
    const le = this.littleEndian;
    view.setFloat64(StatsBlock.durationSec, v.durationSec, le);
    view.setFloat64(StatsBlock.sampleRate, v.sampleRate, le);
    let flags = 0;
    if (v.errorRate !== undefined) {
      view.setFloat64(StatsBlock.errorRate, v.errorRate, le);
      flags |= StatsPresence.ErrorRate;
    }
    if (v.missedSamples !== undefined) {
      view.setFloat64(StatsBlock.missedSamples, v.missedSamples, le);
      flags |= StatsPresence.MissedSamples;
    }
    view.setUint32(StatsBlock.presenceFlags, flags, le);
    const tail = STATS_BLOCK_SIZE - StatsBlock.tailSize;
    for (let i = 0; i < STATS_SIGNATURE.length; i++) block[tail + i] = STATS_SIGNATURE.charCodeAt(i);
    view.setUint32(tail + 8, STATS_VERSION, le);
    view.setUint32(tail + 12, STATS_BLOCK_SIZE, le);
    return block;
  }

  private footer(fileSize: number): Uint8Array {
    const footer = new Uint8Array(FOOTER_SIZE);
    const view = new DataView(footer.buffer);
    view.setUint32(0, this.strings.count, this.littleEndian);
    view.setUint32(4, this.frames.count, this.littleEndian);
    view.setBigUint64(8, BigInt(fileSize), this.littleEndian);
    return footer;
  }

  /**
   * Discards: buffered samples are dropped and the file is left as it is on
   * disk (at least the 64 zero header bytes, so readers call it "not
   * finalized"). Idempotent; a no-op after finalize.
   */
  close(): void {
    if (this.stateValue === 'finalized' || this.stateValue === 'closed') return;
    if (this.stateValue === 'open') this.finalCounters = Float64Array.from(this.engine.counters());
    this.engine.discard();
    try {
      if (fs.fstatSync(this.fd).size < HEADER_SIZE) fs.writeSync(this.fd, new Uint8Array(HEADER_SIZE), 0, HEADER_SIZE, 0);
    } catch {
      // A discard on a failing file: there is nothing more to keep.
    }
    try {
      fs.closeSync(this.fd);
    } catch {
      // The descriptor may already be gone (the fault that broke the writer).
    }
    this.stateValue = 'closed';
    abandoned.unregister(this);
  }

  /** `using w = new ProfileWriter(...)`: finalizes when it still can (as CPython's __exit__), else closes. */
  [Symbol.dispose](): void {
    if (this.stateValue === 'open') {
      try {
        this.finalize();
      } finally {
        if ((this.stateValue as WriterState) !== 'finalized') this.close();
      }
    } else {
      this.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    try {
      this[Symbol.dispose]();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

function formatOptions(options: ProfileWriterOptions): { formatVersion: 1 | 2; stackCoding: StackCoding } {
  const formatVersion = options.formatVersion ?? 1;
  if (formatVersion !== 1 && formatVersion !== 2) throw invalid(`formatVersion must be 1 or 2, not ${String(formatVersion)}`, '1 (CPython 3.15, the default) | 2');
  const stackCoding = options.stackCoding;
  if (stackCoding !== undefined) {
    if (formatVersion !== 2) throw invalid('stackCoding applies to formatVersion 2 only', "formatVersion: 2 with stackCoding, or no stackCoding");
    if (stackCoding !== 'predict' && stackCoding !== 'stacktable') throw invalid(`stackCoding must be 'predict' or 'stacktable', not ${String(stackCoding)}`, "'predict' | 'stacktable'");
  }
  return { formatVersion, stackCoding: stackCoding ?? 'stacktable' };
}

function configWord(mode: ProfileWriterOptions['mode'], features: ProfileWriterOptions['captureFeatures']): number {
  let word = 0;
  if (mode !== undefined && mode !== null && mode !== -1) {
    const m = typeof mode === 'string' ? MODE_NAMES[mode as ProfilingModeName] : mode;
    if (!Number.isInteger(m) || m! < 0 || m! > MAX_PROFILING_MODE) throw invalid(`invalid profiling mode ${String(mode)}`, "-1..4 or 'wall' | 'cpu' | 'gil' | 'all' | 'exception'");
    word |= m! + 1;
  }
  if (features !== undefined && features !== null && features !== -1) {
    if (!Number.isInteger(features) || features < 0 || features > ProfilingConfig.featuresMask) {
      throw invalid(`invalid capture features ${String(features)}`, '-1..31');
    }
    word |= ProfilingConfig.featuresKnown | (features << ProfilingConfig.featuresShift);
  }
  return word;
}

/** How many frames at the bottom of `frames` (first `depth`) have the same raw values as the cached stack. */
function sharedBottom(frames: readonly FrameInfo[], depth: number, cache: StackCache, byIdentity: boolean): number {
  const limit = depth < cache.depth ? depth : cache.depth;
  const v = cache.values;
  let j = 0;
  if (byIdentity) {
    const objects = cache.objects;
    while (j < limit && frames[depth - 1 - j] === objects[j]) j++;
  }
  for (; j < limit; j++) {
    const f = frames[depth - 1 - j];
    const o = j * CACHE_FIELDS;
    if (f === null || typeof f !== 'object') break;
    if (f.filename !== v[o] || f.funcname !== v[o + 1] || f.opcode !== v[o + 2]) break;
    const loc = f.location;
    if (loc === null || loc === undefined) {
      if (v[o + 3] !== NO_LOCATION) break;
    } else if (Array.isArray(loc)) {
      if (loc[0] !== v[o + 3] || loc[1] !== v[o + 4] || loc[2] !== v[o + 5] || loc[3] !== v[o + 6]) break;
    } else {
      const l = loc as LocationInfo;
      if (l.lineno !== v[o + 3] || l.endLineno !== v[o + 4] || l.colOffset !== v[o + 5] || l.endColOffset !== v[o + 6]) break;
    }
  }
  return j;
}
