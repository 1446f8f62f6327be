/**
 * The stack interner of writeSample: CPython-shaped stacks (FrameInfo objects)
 * to frame ids. Each thread's previous stack is cached by value, so a sample
 * interns only the frames that changed since its thread's last one.
 */
import { invalid } from './arguments';
import { STAGED_HEADER, ThreadMap } from './engines/index';
import { toInt32Field, toOpcode, type WriterFrameTable, type WriterStringTable } from './tables';
import type { SampleStaging } from './sample-checks';
import type { FrameInfo, LocationInfo } from './types';
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
  constructor(
    readonly tidHi: number,
    readonly tidLo: number,
    readonly interpreterId: number,
  ) {}

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
  /**
   * The frame object at j when it cannot have changed since its values were cached (deeply frozen, isFrozenFrame, or
   * any frame under immutableFrames): the same object there is the same frame. NO_LOCATION where it could have.
   */
  readonly trusted: unknown[] = new Array(this.capacity).fill(NO_LOCATION);

  reserve(depth: number): void {
    if (depth <= this.capacity) return;
    const capacity = Math.max(depth, this.capacity * 2);
    this.ids = resized(this.ids, capacity);
    // Filled one by one, so the arrays stay packed.
    for (let i = this.capacity * CACHE_FIELDS; i < capacity * CACHE_FIELDS; i++) this.values.push(NO_LOCATION);
    for (let i = this.capacity; i < capacity; i++) this.trusted.push(NO_LOCATION);
    this.capacity = capacity;
  }
}

export class StackInterner {
  private readonly caches = new ThreadMap<StackCache>();
  /**
   * The caches of the previous call's threads, by position in the call: a profiler
   * lists its threads in the same order every tick, so the thread is found with three
   * compares, without the map (whose 64-bit keys are boxed numbers, garbage per lookup).
   */
  private readonly bySlot: StackCache[] = [];
  /** The caches this call changed (the first `touchedCount`): reset if the call is undone. */
  private readonly touched: StackCache[] = [];
  private touchedCount = 0;
  private readonly memo = new FrameMemo();

  constructor(
    private readonly strings: WriterStringTable,
    private readonly frames: WriterFrameTable,
    private readonly immutableFrames: boolean,
    /** The file's stack limit: version 1's 256 (CPython's), version 2's V2_MAX_STACK_DEPTH. */
    private readonly maxDepth: number,
  ) {}

  /**
   * Interns every kept frame of every thread staged by stageSampleHeaders into its words, after the thread's header
   * (the engines' staged layout: STAGED_HEADER words, then the ids innermost first). All or nothing: a refused frame
   * rolls back the tables and the caches.
   */
  internAll(staging: SampleStaging): void {
    const stringMark = this.strings.mark();
    const frameMark = this.frames.mark();
    // Not `length = 0`: that frees the array's store, and the pushes would grow it again on every call.
    this.touchedCount = 0;
    try {
      this.fill(staging);
    } catch (err) {
      this.strings.rollback(stringMark);
      this.frames.rollback(frameMark);
      // Cached ids of this call may name rolled-back frames.
      for (let i = 0; i < this.touchedCount; i++) this.touched[i]!.depth = 0;
      this.memo.clear();
      throw err;
    }
  }

  private fill(staging: SampleStaging): void {
    const w = staging.words;
    const threads = staging.frames;
    let at = 0;
    for (let slot = 0; slot < staging.threads; slot++) {
      const depth = w[at + 6]!;
      const cache = this.stackCache(slot, w[at + 1]!, w[at]!, w[at + 2]!);
      at += STAGED_HEADER;
      const frames = threads[slot]!;
      cache.reserve(depth);
      this.touched[this.touchedCount++] = cache;
      const shared = sharedBottom(frames, depth, cache, w, at);
      // Innermost first, as CPython interns: new strings and frames get ids in that order.
      for (let i = 0; i < depth - shared; i++) w[at + i] = this.internCached(frames[i]!, cache, depth - 1 - i);
      cache.depth = depth;
      at += depth;
    }
  }

  /** The cache of the thread at position `slot` of this call. */
  private stackCache(slot: number, tidHi: number, tidLo: number, interpreterId: number): StackCache {
    const last = this.bySlot[slot];
    if (last !== undefined && last.tidLo === tidLo && last.tidHi === tidHi && last.interpreterId === interpreterId)
      return last;
    let cache = this.caches.get(tidHi, tidLo, interpreterId);
    if (cache === undefined) {
      cache = new StackCache(tidHi, tidLo, interpreterId);
      this.caches.set(tidHi, tidLo, interpreterId, cache);
    }
    if (slot < this.bySlot.length) this.bySlot[slot] = cache;
    else this.bySlot.push(cache); // packed: slots are filled in order
    return cache;
  }

  /**
   * Interns one frame and records its raw values at outermost-first position j. A frame object interned before (at
   * any depth of any thread) whose values have not changed takes its id from the memo, without the tables.
   */
  private internCached(frame: FrameInfo, cache: StackCache, j: number): number {
    const v = cache.values;
    const o = j * CACHE_FIELDS;
    const memo = this.memo;
    const k = memo.find(frame);
    let id: number;
    let frozen: number;
    if (k >= 0) {
      id = memo.ids[k]!;
      frozen = memo.frozen[k]!;
      const mv = memo.values;
      const m = k * CACHE_FIELDS;
      for (let i = 0; i < CACHE_FIELDS; i++) v[o + i] = mv[m + i];
    } else {
      id = this.internFrameInfo(frame);
      storeValues(frame, v, o);
      frozen = this.immutableFrames || isFrozenFrame(frame) ? 1 : 0;
      memo.add(frame, id, frozen, v, o);
    }
    cache.ids[j] = id;
    cache.trusted[j] = frozen === 1 ? frame : NO_LOCATION;
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

/** Frame objects found deeply frozen with data properties only (a property of the object forever). */
const frozenFrames = new WeakSet<object>();

/** An own data property (not a getter, which could answer differently each time). */
function ownData(o: object, key: string | number): boolean {
  const d = Object.getOwnPropertyDescriptor(o, key);
  return d !== undefined && 'value' in d;
}

/**
 * Whether reading `frame`'s fields can never give other values than now: the frame and its location
 * frozen, every field read an own data property. Like CPython's FrameInfo and LocationInfo (immutable
 * structseqs), such a frame is unchanged as long as it is the same object, so writeSample's cache
 * compares it by identity alone. Checked once per object.
 */
function isFrozenFrame(frame: FrameInfo): boolean {
  if (!Object.isFrozen(frame)) return false;
  if (frozenFrames.has(frame)) return true;
  for (const key of ['filename', 'funcname', 'opcode', 'location']) if (!ownData(frame, key)) return false;
  const loc: unknown = frame.location;
  if (loc !== null && loc !== undefined) {
    if (typeof loc !== 'object' || !Object.isFrozen(loc)) return false;
    const keys = Array.isArray(loc) ? [0, 1, 2, 3] : ['lineno', 'endLineno', 'colOffset', 'endColOffset'];
    for (const key of keys) if (!ownData(loc, key)) return false;
  }
  frozenFrames.add(frame);
  return true;
}

/**
 * How many frames at the bottom of `frames` (first `depth`) have the same raw values as the cached stack; their cached
 * ids are staged at w[at..at + depth) (innermost first).
 */
function sharedBottom(
  frames: readonly FrameInfo[],
  depth: number,
  cache: StackCache,
  w: Uint32Array,
  at: number,
): number {
  const limit = depth < cache.depth ? depth : cache.depth;
  const v = cache.values;
  const trusted = cache.trusted;
  const ids = cache.ids;
  const last = at + depth - 1;
  let j = 0;
  // The identity fast path: a frame that is the cached object and cannot have changed (frozen, or the
  // immutableFrames promise) is not read at all.
  for (; j < limit && frames[depth - 1 - j] === trusted[j]; j++) w[last - j] = ids[j]!;
  for (; j < limit && sameValues(frames[depth - 1 - j]!, v, j * CACHE_FIELDS); j++) w[last - j] = ids[j]!;
  return j;
}

/** Whether frame `f` reads the raw values stored at v[o..o + CACHE_FIELDS) (storeValues' layout). */
function sameValues(f: FrameInfo, v: unknown[], o: number): boolean {
  if (f === null || typeof f !== 'object') return false;
  if (f.filename !== v[o] || f.funcname !== v[o + 1] || f.opcode !== v[o + 2]) return false;
  const loc = f.location;
  if (loc === null || loc === undefined) return v[o + 3] === NO_LOCATION;
  if (Array.isArray(loc))
    return loc[0] === v[o + 3] && loc[1] === v[o + 4] && loc[2] === v[o + 5] && loc[3] === v[o + 6];
  const l = loc as LocationInfo;
  return l.lineno === v[o + 3] && l.endLineno === v[o + 4] && l.colOffset === v[o + 5] && l.endColOffset === v[o + 6];
}

/**
 * Stores frame's raw values at v[o..o + CACHE_FIELDS): filename, funcname, opcode, lineno, endLineno, colOffset,
 * endColOffset (NO_LOCATION for the four when there is no location).
 */
function storeValues(frame: FrameInfo, v: unknown[], o: number): void {
  const loc = frame.location;
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
}

/** Frame objects the memo holds at most: past it, it starts over (bounded memory; the caller's objects let go). */
const MEMO_CAPACITY = 1 << 15;

/**
 * Frame objects already interned, by identity, with the raw values they were interned with and their ids: a frame that
 * changed at its depth is usually one seen before (a callee called again), and its values compared here cost less than
 * two string lookups and the frame table's hash. Frozen frames (isFrozenFrame, or the immutableFrames promise) are
 * taken without reading them. Ids stay valid while the tables only grow: `clear` on a rollback.
 */
class FrameMemo {
  private readonly index = new Map<object, number>();
  /** CACHE_FIELDS raw values per entry (storeValues' layout), pushed as entries are added so the array stays packed. */
  readonly values: unknown[] = [];
  ids = new Uint32Array(1024);
  frozen = new Uint8Array(1024);

  /** The entry of `frame` if its values are unchanged (or it is frozen), else -1. */
  find(frame: FrameInfo): number {
    const k = this.index.get(frame);
    if (k === undefined) return -1;
    return this.frozen[k] === 1 || sameValues(frame, this.values, k * CACHE_FIELDS) ? k : -1;
  }

  /** Remembers `frame` (just interned as `id`) with the raw values at v[o..]; an object already held is replaced. */
  add(frame: FrameInfo, id: number, frozen: number, v: unknown[], o: number): void {
    if (frame === null || typeof frame !== 'object') return;
    let k = this.index.get(frame);
    if (k === undefined) {
      if (this.index.size >= MEMO_CAPACITY) this.clear();
      k = this.index.size;
      this.index.set(frame, k);
      if (k >= this.ids.length) {
        this.ids = resized(this.ids, this.ids.length * 2);
        this.frozen = resized(this.frozen, this.frozen.length * 2);
      }
      if (this.values.length === k * CACHE_FIELDS) for (let i = 0; i < CACHE_FIELDS; i++) this.values.push(v[o + i]);
    }
    const m = k * CACHE_FIELDS;
    for (let i = 0; i < CACHE_FIELDS; i++) this.values[m + i] = v[o + i];
    this.ids[k] = id;
    this.frozen[k] = frozen;
  }

  clear(): void {
    this.index.clear();
  }
}
