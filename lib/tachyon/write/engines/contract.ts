/**
 * The contract between ProfileWriter (policy, validation, tables, header)
 * and the two sample encoders: the pure-JS one (js.ts) and the native
 * one (native.ts over native/tachyon/write/writer.h). Both receive samples
 * that are already validated, with 64-bit values split into u32 halves.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import type { ByteSink } from '../../../byte-sink';
import type { PatchableSink } from '../../../varint/index';
import { TWO_POW_32 } from '../../../varint/index';
import { MAX_STACK_DEPTH } from '../../format';
import type { WriterStats } from '../types';

/** Indices into the counters array both engines keep (CPython's BinaryWriter.get_stats()). */
export const Counter = {
  repeatRecords: 0,
  repeatSamples: 1,
  fullRecords: 2,
  suffixRecords: 3,
  popPushRecords: 4,
  totalSamples: 5,
  framesWritten: 6,
  framesSaved: 7,
  bytesWritten: 8,
  threadCount: 9,
} as const;
export const COUNTER_COUNT = 10;

const NO_IDS = new Uint32Array(0);

/**
 * One thread's sample as the engines take it, 64-bit values as u32 halves. The writer (and an engine
 * that codes a tick or a batch stack by stack) fills one record and reuses it: no allocation per call.
 */
export class StackRecord {
  // The u32 halves start as -0, a double: a half above 2^31 - 1 is not a small integer, and a field that starts as
  // one changes representation at the first such value, so the writer's record and an engine's own would reach
  // writeStack in two shapes (JS writeStacks ran 17 % slower once writeStack had run in the same process).
  tidHi = -0;
  tidLo = -0;
  interpreterId = -0;
  tsHi = -0;
  tsLo = -0;
  status = 0;
  frames: ArrayLike<number> = NO_IDS;
  start = 0;
  depth = 0;
  /** The frame table's size, for an engine that checks the ids itself (SampleEngine.checksIds). */
  idLimit = Infinity;
}

/** TickRecord.words' header: timestamp low and high halves, thread count, the frame table's size. */
export const TICK_HEADER = 4;

/**
 * One tick as the engines take it: a typed struct the native engine hands to the addon as it is
 * (native/tachyon/write/writer_napi.cc EncodeTick), plus the caller's frame ids. `words` holds
 * TICK_HEADER words, then per thread slot (`capacity` of them): thread id low, high halves (2 words
 * each), interpreter ids, statuses, stack ends. Thread k's stack is ids[ends[k-1] .. ends[k]).
 * The writer keeps one and replaces it only to grow it.
 */
export class TickRecord {
  readonly words: Uint32Array;
  readonly tids: Uint32Array;
  readonly interps: Uint32Array;
  readonly statuses: Uint32Array;
  readonly ends: Uint32Array;
  ids: Uint32Array = NO_IDS;

  constructor(readonly capacity: number) {
    const w = new Uint32Array(TICK_HEADER + 5 * capacity);
    this.words = w;
    this.tids = w.subarray(TICK_HEADER, TICK_HEADER + 2 * capacity);
    this.interps = w.subarray(TICK_HEADER + 2 * capacity, TICK_HEADER + 3 * capacity);
    this.statuses = w.subarray(TICK_HEADER + 3 * capacity, TICK_HEADER + 4 * capacity);
    this.ends = w.subarray(TICK_HEADER + 4 * capacity);
  }

  /** The header but the count (stageTick's): the tick's timestamp and the frame table's size. */
  stamp(tsHi: number, tsLo: number, frameCount: number): void {
    this.words[0] = tsLo;
    this.words[1] = tsHi;
    this.words[3] = frameCount;
  }

  get tsLo(): number {
    return this.words[0]!;
  }
  get tsHi(): number {
    return this.words[1]!;
  }
  get count(): number {
    return this.words[2]!;
  }
  get frameCount(): number {
    return this.words[3]!;
  }
}

export interface SampleEngine {
  /**
   * writeStack checks the kept ids itself (each an integer in [0, s.idLimit), else unknownFrameId)
   * while it copies them, and takes nothing of a refused stack: the caller need not check them first.
   */
  readonly checksIds?: boolean;
  /** The raw file (header, compressed or raw sample region, tables, footer). */
  readonly output: PatchableSink & { flush(): void };
  /**
   * One thread's sample: s.frames[s.start .. s.start+s.depth) innermost first, at most the file's stack
   * limit (the caller has cut deeper stacks), every id already checked. The record is the caller's and
   * reused: read it during the call, keep nothing of it.
   */
  writeStack(s: StackRecord): void;
  /**
   * One tick (see TickRecord); deeper than the file's stack limit is cut. Refuses the whole tick
   * (ERR_TACHYON_WRITE_UNKNOWN_ID / ERR_INVALID_ARGUMENT) before encoding any of it if an end or a
   * kept id (>= frameCount) is wrong.
   */
  writeTick(tick: TickRecord): void;
  /**
   * writeSample's threads, already checked, in the staged layout (STAGED_HEADER):
   * the native engine copies the words into its staging buffer at once.
   */
  writeBatch(words: Uint32Array, count: number): void;
  /**
   * Writes every finished record to the file (zstd: ZSTD_e_flush, so they
   * decompress from what is on disk); pending REPEAT runs stay pending.
   */
  flushSamples(): void;
  /** Pending REPEAT runs (threads in first-seen order), the sample buffer, the end of the zstd frame. */
  finishSamples(): void;
  /** Current counters (see Counter). */
  counters(): Float64Array;
  /** Drops everything not yet written (close() without finalize). */
  discard(): void;
  /**
   * Frees what the engine holds (compression context, buffers, per-thread
   * state) at once rather than at a later garbage collection. The last call:
   * after finalize's final write, in close(), after a failed creation.
   */
  release(): void;
  /**
   * Version 1 only: each thread's pending REPEAT run as the record finalize
   * would write, without writing it (the recovery journal keeps them).
   */
  pendingRepeats?(): Uint8Array;
}

export interface EngineOptions {
  fd: number;
  /** The file is this buffer instead of `fd` (JS output only: the JS engines and version 2's). */
  memory?: ByteSink;
  /** Version 2: samples per block (default BLOCK_MAX_SAMPLES; tests use small blocks). */
  blockMaxSamples?: number;
  compression: 'zstd' | 'none';
  level: number;
  /** Header start time as u32 halves: each thread's first delta is relative to it. */
  startTimeHi: number;
  startTimeLo: number;
  /** Fixed-width fields in the host's byte order, as CPython writes them. */
  littleEndian: boolean;
}

/** writeStack's refusal of frames[at], an id that internFrame did not return (the frame table has `count`). */
export function unknownFrameId(frames: ArrayLike<number>, at: number, count: number): ProfpackError {
  return new ProfpackError(`frame id ${String(frames[at])} at index ${at} was not returned by internFrame`, {
    code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID,
    expected: `an integer in [0, ${count})`,
  });
}

/**
 * The tick check of the contract: every end and every kept id (the first
 * `maxDepth` of a stack: version 1's MAX_STACK_DEPTH, version 2's 4,096) is
 * checked before any thread of the tick is coded, so a refused tick leaves no bytes behind.
 */
export function checkTick(
  count: number,
  ends: Uint32Array,
  ids: Uint32Array,
  frameCount: number,
  maxDepth = MAX_STACK_DEPTH,
): void {
  let start = 0;
  for (let k = 0; k < count; k++) {
    const end = ends[k]!;
    if (end < start || end > ids.length) {
      throw new ProfpackError(`stackEnds[${k}] = ${end} must not decrease nor pass the ${ids.length} frame ids`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'non-decreasing ends within frameIds',
      });
    }
    const last = Math.min(end, start + maxDepth);
    for (let i = start; i < last; i++) {
      if (ids[i]! >= frameCount) {
        throw new ProfpackError(`frame id ${ids[i]} at index ${i} was not returned by internFrame`, {
          code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID,
          expected: `an integer in [0, ${frameCount})`,
        });
      }
    }
    start = end;
  }
}

/** How many stacks of a tick are deeper than `maxDepth` (their outermost frames are dropped). */
export function deepStacks(count: number, ends: Uint32Array, maxDepth = MAX_STACK_DEPTH): number {
  let deep = 0;
  let start = 0;
  for (let k = 0; k < count; k++) {
    if (ends[k]! - start > maxDepth) deep++;
    start = ends[k]!;
  }
  return deep;
}

/** writeTick as one writeStack per thread (through the engine's own record `s`), after checkTick. */
export function writeTickAsStacks(
  engine: SampleEngine,
  tick: TickRecord,
  s: StackRecord,
  maxDepth = MAX_STACK_DEPTH,
): void {
  const { count, tids, interps, statuses, ends, ids } = tick;
  checkTick(count, ends, ids, tick.frameCount, maxDepth);
  s.tsHi = tick.tsHi;
  s.tsLo = tick.tsLo;
  s.frames = ids;
  let start = 0;
  for (let k = 0; k < count; k++) {
    const end = ends[k]!;
    s.tidLo = tids[2 * k]!;
    s.tidHi = tids[2 * k + 1]!;
    s.interpreterId = interps[k]!;
    s.status = statuses[k]!;
    s.start = start;
    s.depth = end - start < maxDepth ? end - start : maxDepth;
    engine.writeStack(s);
    start = end;
  }
}

/**
 * One staged sample's header words, then `depth` frame ids innermost first:
 * tid low half, tid high half, interpreter id, timestamp low half, high half,
 * status, depth (native/tachyon/write/writer.h SampleEncoder::WriteBatch).
 */
export const STAGED_HEADER = 7;

/** writeBatch as one writeStack per staged sample (through the engine's own record `s`). */
export function writeBatchAsStacks(engine: SampleEngine, words: Uint32Array, count: number, s: StackRecord): void {
  s.frames = words;
  for (let i = 0; i < count;) {
    const depth = words[i + 6]!;
    s.tidLo = words[i]!;
    s.tidHi = words[i + 1]!;
    s.interpreterId = words[i + 2]!;
    s.tsLo = words[i + 3]!;
    s.tsHi = words[i + 4]!;
    s.status = words[i + 5]!;
    s.start = i + STAGED_HEADER;
    s.depth = depth;
    engine.writeStack(s);
    i += STAGED_HEADER + depth;
  }
}

/** Per-thread values keyed as CPython keys threads: interpreter id and the thread id's u32 halves. */
export class ThreadMap<T> {
  private readonly byInterpreter = new Map<number, Map<number | string, T>>();

  get(tidHi: number, tidLo: number, interpreterId: number): T | undefined {
    return this.byInterpreter.get(interpreterId)?.get(threadKey(tidHi, tidLo));
  }

  set(tidHi: number, tidLo: number, interpreterId: number, value: T): void {
    let byThread = this.byInterpreter.get(interpreterId);
    if (byThread === undefined) {
      byThread = new Map();
      this.byInterpreter.set(interpreterId, byThread);
    }
    byThread.set(threadKey(tidHi, tidLo), value);
  }

  /** Forgets every thread (an engine's release()). */
  clear(): void {
    this.byInterpreter.clear();
  }
}

/** A thread as ThreadCursor chains it: its key, its engine's state, and the thread that came after it last time. */
class CursorThread<T> {
  next: CursorThread<T> | null = null;

  constructor(
    readonly tidHi: number,
    readonly tidLo: number,
    readonly interpreterId: number,
    readonly state: T,
  ) {}
}

/**
 * Per-thread states found in call order: a profiler lists its threads in the same order every tick, so the thread
 * after the previous one is tried (three compares) before the ThreadMap, whose keys above 2^31 are hashed doubles.
 * The chain is of one class whatever the engine's state, so its reads stay monomorphic with both engines in a process.
 */
export class ThreadCursor<T> {
  private readonly map = new ThreadMap<CursorThread<T>>();
  private last: CursorThread<T> | null = null;

  /** `create` makes the state of a thread not seen before (and may refuse it by throwing). */
  constructor(private readonly create: (tidHi: number, tidLo: number, interpreterId: number) => T) {}

  find(tidHi: number, tidLo: number, interpreterId: number): T {
    const last = this.last;
    if (last !== null) {
      const next = last.next;
      if (next !== null && next.tidLo === tidLo && next.tidHi === tidHi && next.interpreterId === interpreterId) {
        this.last = next;
        return next.state;
      }
      if (last.tidLo === tidLo && last.tidHi === tidHi && last.interpreterId === interpreterId) return last.state;
    }
    let t = this.map.get(tidHi, tidLo, interpreterId);
    if (t === undefined) {
      t = new CursorThread(tidHi, tidLo, interpreterId, this.create(tidHi, tidLo, interpreterId));
      this.map.set(tidHi, tidLo, interpreterId, t);
    }
    if (last !== null) last.next = t;
    this.last = t;
    return t.state;
  }

  /** Forgets every thread (an engine's release()). */
  clear(): void {
    this.map.clear();
    this.last = null;
  }
}

/** A number while hi × 2^32 + lo stays below 2^53, else a string. */
function threadKey(tidHi: number, tidLo: number): number | string {
  return tidHi < 0x20_0000 ? tidHi * TWO_POW_32 + tidLo : `${tidHi}:${tidLo}`;
}

/** ProfileWriter.stats from the engine's counters (CPython's names). */
export function writerStats(c: Float64Array, stacksCut: number): WriterStats {
  const saved = c[Counter.framesSaved]!;
  const written = c[Counter.framesWritten]!;
  return {
    repeatRecords: c[Counter.repeatRecords]!,
    repeatSamples: c[Counter.repeatSamples]!,
    fullRecords: c[Counter.fullRecords]!,
    suffixRecords: c[Counter.suffixRecords]!,
    popPushRecords: c[Counter.popPushRecords]!,
    totalRecords:
      c[Counter.repeatRecords]! + c[Counter.fullRecords]! + c[Counter.suffixRecords]! + c[Counter.popPushRecords]!,
    totalSamples: c[Counter.totalSamples]!,
    totalFramesWritten: written,
    framesSaved: saved,
    bytesWritten: c[Counter.bytesWritten]!,
    frameCompressionPct: saved + written === 0 ? 0 : (saved * 100) / (saved + written),
    threadCount: c[Counter.threadCount]!,
    stacksCut,
  };
}
