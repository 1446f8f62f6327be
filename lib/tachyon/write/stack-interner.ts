/**
 * The stack interner of writeSample: CPython-shaped stacks (FrameInfo objects)
 * to frame ids. Each thread's previous stack is cached by value, so a sample
 * interns only the frames that changed since its thread's last one.
 */
import { invalid, statusByte, u32Value, u64Halves } from './arguments';
import { STAGED_HEADER, ThreadMap } from './engines/index';
import { toInt32Field, toOpcode, type FrameTable, type StringTable } from './tables';
import type { FrameInfo, InterpreterInfo, LocationInfo } from './types';
import { resized } from '../../typed-arrays';

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
  /** Frames the arrays have room for: grown with the thread's depth (version 2 keeps up to 4,096). */
  capacity = 64;
  /**
   * CACHE_FIELDS raw values per frame, frame j at j * CACHE_FIELDS: filename, funcname,
   * opcode, lineno, endLineno, colOffset, endColOffset. One array, filled up
   * front (a sparse write would make it a slow dictionary array), so a frame's
   * values share cache lines.
   */
  readonly values: unknown[] = new Array(this.capacity * CACHE_FIELDS).fill(NO_LOCATION);
  ids = new Uint32Array(this.capacity);
  /** The frame objects themselves (used only with immutableFrames). */
  readonly objects: unknown[] = new Array(this.capacity).fill(NO_LOCATION);

  reserve(depth: number): void {
    if (depth <= this.capacity) return;
    const capacity = Math.max(depth, this.capacity * 2);
    this.ids = resized(this.ids, capacity);
    // Filled one by one, so the arrays stay packed.
    for (let i = this.capacity * CACHE_FIELDS; i < capacity * CACHE_FIELDS; i++) this.values.push(NO_LOCATION);
    for (let i = this.capacity; i < capacity; i++) this.objects.push(NO_LOCATION);
    this.capacity = capacity;
  }
}

export class StackInterner {
  private readonly caches = new ThreadMap<StackCache>();
  /** The caches this call changed: reset if the call is undone. */
  private readonly touched: StackCache[] = [];
  private readonly halves = new Uint32Array(2);

  constructor(
    private readonly strings: StringTable,
    private readonly frames: FrameTable,
    private readonly immutableFrames: boolean,
    /** The file's stack limit: version 1's 256 (CPython's), version 2's V2_MAX_STACK_DEPTH. */
    private readonly maxDepth: number,
  ) {}

  /**
   * Interns every kept frame of every thread into w, in the engines' staged
   * layout (STAGED_HEADER words, then the ids innermost first), all at the
   * timestamp (tsHi, tsLo). All or nothing: a refused frame rolls back the
   * tables and the caches.
   */
  internAll(interpreters: readonly InterpreterInfo[], w: Uint32Array, tsHi: number, tsLo: number): void {
    const stringMark = this.strings.mark();
    const frameMark = this.frames.mark();
    this.touched.length = 0;
    try {
      this.fill(interpreters, w, tsHi, tsLo);
    } catch (err) {
      this.strings.rollback(stringMark);
      this.frames.rollback(frameMark);
      // Cached ids of this call may name rolled-back frames.
      for (const cache of this.touched) cache.depth = 0;
      throw err;
    }
  }

  private fill(interpreters: readonly InterpreterInfo[], w: Uint32Array, tsHi: number, tsLo: number): void {
    const h = this.halves;
    let at = 0;
    for (const interp of interpreters) {
      const interpreterId = u32Value(interp.interpreterId, 'interpreterId');
      for (const thread of interp.threads) {
        u64Halves(thread.threadId, 'threadId', h, 0);
        const frames = thread.frameInfo;
        const depth = Math.min(frames.length, this.maxDepth);
        w[at] = h[1]!;
        w[at + 1] = h[0]!;
        w[at + 2] = interpreterId;
        w[at + 3] = tsLo;
        w[at + 4] = tsHi;
        w[at + 5] = statusByte(thread.status);
        w[at + 6] = depth;
        at += STAGED_HEADER;
        const cache = this.stackCache(h[0]!, h[1]!, interpreterId);
        cache.reserve(depth);
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
    let cache = this.caches.get(tidHi, tidLo, interpreterId);
    if (cache === undefined) {
      cache = new StackCache();
      this.caches.set(tidHi, tidLo, interpreterId, cache);
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
    if (frame === null || typeof frame !== 'object')
      throw invalid('a frame must be an object', '{ filename, funcname, location, opcode }');
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
      if (l.lineno !== v[o + 3] || l.endLineno !== v[o + 4] || l.colOffset !== v[o + 5] || l.endColOffset !== v[o + 6])
        break;
    }
  }
  return j;
}
