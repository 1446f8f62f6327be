/**
 * The heap section's coder (docs/format-v2.md §9): poll records into chunks.
 * One record per poll and thread holds the allocation batch and the free
 * batch as columns: ordinals and sizes as zigzag deltas from the thread's
 * previous ones, stacks in the stack table named by recency (block kind 6's
 * coding, recent.ts, over the file's frame table, so heap and CPU stacks
 * share frames), frees as gaps in the thread's live list (live.ts).
 * Frame ids are the file's; the caller resolves its own stack keys to them.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { MAX_STACK_DEPTH } from '../../format';
import { ByteSink } from '../bytes';
import { LiveList } from './live';
import {
  HEAP_CHUNK_TARGET,
  HEAP_MAX_MEMORY_BYTES,
  HEAP_MAX_TIME_DELTA,
  HEAP_RECORD_MAX_OBJECTS,
  HEAP_RECORD_SOFT_BYTES,
  HeapRecordFlag,
  zigzagWide,
  type HeapTotals,
} from './format';
import { RecentStackCoder } from '../recent';
import { StackPath, type StackTableSinks } from '../stacktable';

/** Writes the frames of stack `key` innermost first into `out` (all of them, however deep); returns the depth. */
export type HeapFramesOf = (key: number, out: Uint32Array) => number;

/** The objects of one batch as the coder takes them. */
export interface HeapObjects {
  ordinals: ArrayLike<number>;
  sizes: ArrayLike<number>;
  /** The caller's stack keys (resolved through HeapFramesOf; kept for the live list). */
  stackKeys: ArrayLike<number>;
}

/** A thread's index in the section (-1: not defined yet), shared by its two ordinal spaces. */
interface ThreadIndex {
  index: number;
}

/** One ordinal space of a thread: V8's sampled objects, or the external ones (HeapRecordFlag.External). */
class ThreadState {
  previousOrdinal = 0;
  previousSize = 0;
  readonly path = new StackPath();
  readonly live = new LiveList(true);
  constructor(
    readonly threadId: bigint,
    readonly slot: ThreadIndex,
  ) {}
}

function wholeUs(value: number, what: string): number {
  if (!Number.isFinite(value)) {
    throw new ProfpackError(`${what} ${value} is not a time`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'a finite µs',
    });
  }
  return Math.round(value);
}

function timeDelta(out: ByteSink, delta: number, what: string): void {
  if (Math.abs(delta) > HEAP_MAX_TIME_DELTA) {
    throw new ProfpackError(`${what} ${delta} µs is beyond what the heap section stores`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: `within ±${HEAP_MAX_TIME_DELTA} µs`,
    });
  }
  zigzagWide(out, delta);
}

export class HeapSectionEncoder {
  readonly totals: HeapTotals;
  /** Frees that named no live object of their thread (not stored). */
  droppedFrees = 0;
  /** Stacks deeper than 256 frames, cut to their innermost 256 (as CPU stacks are). */
  stacksCut = 0;
  private readonly threads = new Map<bigint, ThreadState>();
  private readonly externals = new Map<bigint, ThreadState>();
  private threadCount = 0;
  private readonly coder = new RecentStackCoder(MAX_STACK_DEPTH);
  private previousTimeUs: number;
  private chunk = new ByteSink(64 << 10);
  private readonly head = new ByteSink(64);
  private readonly ordinals = new ByteSink();
  private readonly sizes = new ByteSink();
  private readonly allocTimes = new ByteSink();
  private readonly gaps = new ByteSink();
  private readonly stackSinks: StackTableSinks = {
    stacks: new ByteSink(),
    stacksHigh: new ByteSink(),
    parents: new ByteSink(),
    parentsHigh: new ByteSink(),
    stackFrames: new ByteSink(),
  };
  private frames = new Uint32Array(MAX_STACK_DEPTH);
  /** framesView's views of `frames`, by depth (sparse). */
  private views: Uint32Array[] = [];

  /** `onChunk` gets each finished chunk's raw records (its own copy). */
  constructor(
    intervalBytes: number,
    startTimeUs: number,
    private readonly framesOf: HeapFramesOf,
    private readonly onChunk: (raw: Uint8Array) => void,
  ) {
    this.totals = { intervalBytes, records: 0, allocations: 0, frees: 0, live: 0, shortLived: 0 };
    this.previousTimeUs = wholeUs(startTimeUs, 'start time');
  }

  /**
   * Objects live when the file begins, allocated at `allocTimesUs` (a rotated file's inheritance); `external`: the
   * thread's external objects.
   */
  live(
    threadId: bigint,
    timeUs: number,
    objects: HeapObjects,
    allocTimesUs: ArrayLike<number>,
    external = false,
  ): void {
    const t = this.thread(threadId, external);
    const n = objects.ordinals.length;
    const kind = external ? HeapRecordFlag.External : 0;
    let start = 0;
    do {
      this.beginRecord(HeapRecordFlag.Live | kind, t, timeUs, timeUs);
      const end = this.objects(t, objects, start, n, wholeUs(timeUs, 'time'), allocTimesUs);
      this.head.uvarint(end - start);
      this.totals.live += end - start;
      this.endRecord();
      start = end;
    } while (start < n);
  }

  /**
   * One poll of one thread: its allocation batch (null: none) and its free
   * batch (null: none), frees naming objects live before the poll; `external`: of the thread's external objects.
   */
  poll(
    threadId: bigint,
    timeUs: number,
    sinceUs: number,
    alloc: (HeapObjects & { shortLived: number }) | null,
    frees: ArrayLike<number> | null,
    external = false,
  ): void {
    if (alloc === null && frees === null) return;
    const t = this.thread(threadId, external);
    const kind = external ? HeapRecordFlag.External : 0;
    const n = alloc?.ordinals.length ?? 0;
    const time = wholeUs(timeUs, 'time');
    let start = 0;
    do {
      // A big poll continues in more records; its frees ride with the first, applied before its allocations.
      const first = start === 0;
      const flags =
        kind | (alloc !== null ? HeapRecordFlag.Alloc : 0) | (first && frees !== null ? HeapRecordFlag.Free : 0);
      this.beginRecord(flags, t, timeUs, sinceUs);
      const freed = flags & HeapRecordFlag.Free ? this.codeFrees(t, frees!) : 0;
      let end = start;
      if (alloc !== null) {
        end = this.objects(t, alloc, start, n, time, null);
        const shortLived = first ? alloc.shortLived : 0;
        this.head.uvarint(end - start);
        this.head.uvarint(shortLived);
        this.totals.allocations += end - start;
        this.totals.shortLived += shortLived;
      }
      if (flags & HeapRecordFlag.Free) this.head.uvarint(freed);
      this.endRecord();
      start = end;
    } while (start < n);
  }

  /** The thread's external memory (bytes) at `timeUs`: one Memory record. */
  memory(threadId: bigint, timeUs: number, externalBytes: number, arrayBuffersBytes: number): void {
    for (const [what, v] of [
      ['external bytes', externalBytes],
      ['arrayBuffers bytes', arrayBuffersBytes],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 0 || v > HEAP_MAX_MEMORY_BYTES)
        throw new ProfpackError(`${what} ${v} is not a byte count`, {
          code: ErrorCode.INVALID_ARGUMENT,
          expected: `a whole number of bytes within 0..${HEAP_MAX_MEMORY_BYTES}`,
        });
    }
    this.beginRecord(HeapRecordFlag.Memory, this.thread(threadId), timeUs, timeUs);
    this.head.uvarint(externalBytes);
    this.head.uvarint(arrayBuffersBytes);
    this.appendRecord([this.head]);
  }

  /** Ends the chunk being filled (ProfileWriter.flush and finalize). */
  flush(): void {
    if (this.chunk.length === 0) return;
    this.onChunk(this.chunk.bytes.slice(0, this.chunk.length));
    this.chunk.length = 0;
  }

  /**
   * Each thread's live objects now (ordinals, sizes, stack keys, allocation times: the payload columns), V8's then the
   * external ones.
   */
  *liveObjects(): Iterable<{ threadId: bigint; live: LiveList; external: boolean }> {
    for (const [spaces, external] of [
      [this.threads, false],
      [this.externals, true],
    ] as const) {
      for (const t of spaces.values()) if (t.live.length > 0) yield { threadId: t.threadId, live: t.live, external };
    }
  }

  private thread(threadId: bigint, external = false): ThreadState {
    let t = this.threads.get(threadId);
    if (t === undefined) this.threads.set(threadId, (t = new ThreadState(threadId, { index: -1 })));
    if (!external) return t;
    let e = this.externals.get(threadId);
    if (e === undefined) this.externals.set(threadId, (e = new ThreadState(threadId, t.slot)));
    return e;
  }

  /** The record's header fields up to its counts (its columns were coded before it: they decide the counts). */
  private beginRecord(flags: number, t: ThreadState, timeUs: number, sinceUs: number): void {
    const h = this.head;
    h.length = 0;
    h.u8(flags);
    if (t.slot.index < 0) {
      t.slot.index = this.threadCount++;
      h.uvarint(t.slot.index);
      h.uvarint64(t.threadId);
    } else {
      h.uvarint(t.slot.index);
    }
    const time = wholeUs(timeUs, 'time');
    timeDelta(h, time - this.previousTimeUs, 'time step');
    this.previousTimeUs = time;
    if (!(flags & (HeapRecordFlag.Live | HeapRecordFlag.Memory)))
      timeDelta(h, time - wholeUs(sinceUs, 'since'), 'poll span');
  }

  /** Codes objects [start, …) into the columns, up to a record's bounds; returns where it stopped. */
  private objects(
    t: ThreadState,
    objects: HeapObjects,
    start: number,
    n: number,
    timeUs: number,
    allocTimesUs: ArrayLike<number> | null,
  ): number {
    const end = Math.min(n, start + HEAP_RECORD_MAX_OBJECTS);
    let i = start;
    for (; i < end; i++) {
      if (this.stackSinks.stackFrames.length > HEAP_RECORD_SOFT_BYTES) break;
      const ordinal = objects.ordinals[i]! >>> 0;
      const size = objects.sizes[i]! >>> 0;
      const key = objects.stackKeys[i]! >>> 0;
      const o = (ordinal - t.previousOrdinal) | 0;
      this.ordinals.uvarint(((o << 1) ^ (o >> 31)) >>> 0);
      t.previousOrdinal = ordinal;
      const s = (size - t.previousSize) | 0;
      this.sizes.uvarint(((s << 1) ^ (s >> 31)) >>> 0);
      t.previousSize = size;
      this.coder.encode(this.framesFor(key), this.stackSinks, t.path);
      let allocTime = timeUs;
      if (allocTimesUs !== null) {
        allocTime = wholeUs(allocTimesUs[i]!, 'allocation time');
        timeDelta(this.allocTimes, timeUs - allocTime, 'age');
      }
      t.live.insert(ordinal, size, key, allocTime);
    }
    return i;
  }

  /** Innermost first, cut to the innermost 256. */
  private framesFor(key: number): Uint32Array {
    let depth = this.framesOf(key, this.frames);
    if (depth > this.frames.length) {
      this.frames = new Uint32Array(depth);
      this.views = [];
      depth = this.framesOf(key, this.frames);
    }
    if (depth > MAX_STACK_DEPTH) this.stacksCut++;
    return this.framesView(Math.min(depth, MAX_STACK_DEPTH));
  }

  /**
   * The first `depth` of `frames`, one view per depth made once: a subarray per object made a typed array each time,
   * and under the recorder's Buffer sampler every typed array the thread makes goes through its construct trap.
   */
  private framesView(depth: number): Uint32Array {
    return (this.views[depth] ??= this.frames.subarray(0, depth));
  }

  /** The free gaps, highest ordinal first; returns how many were coded. */
  private codeFrees(t: ThreadState, frees: ArrayLike<number>): number {
    let sorted: ArrayLike<number> = frees;
    for (let i = 1; i < frees.length; i++) {
      if (frees[i]! >>> 0 < frees[i - 1]! >>> 0) {
        sorted = Uint32Array.from(frees).sort();
        break;
      }
    }
    let cursor = t.live.length;
    let coded = 0;
    for (let i = sorted.length - 1; i >= 0; i--) {
      const found = t.live.find(sorted[i]! >>> 0, cursor);
      if (found === null) {
        this.droppedFrees++;
        continue;
      }
      this.gaps.uvarint(found[0]);
      cursor = found[1];
      coded++;
    }
    this.totals.frees += coded;
    return coded;
  }

  /** Header, then the columns: ordinals, sizes, ages, gaps, the five stack columns' lengths and bytes. */
  private endRecord(): void {
    const s = this.stackSinks;
    const stackColumns = [s.stacks, s.stacksHigh, s.parents, s.parentsHigh, s.stackFrames];
    for (const c of stackColumns) this.head.uvarint(c.length);
    this.appendRecord([this.head, this.ordinals, this.sizes, this.allocTimes, this.gaps, ...stackColumns]);
  }

  /** The record's parts into the chunk (a new chunk when it would pass its target), emptied. */
  private appendRecord(parts: ByteSink[]): void {
    const size = parts.reduce((sum, p) => sum + p.length, 0);
    if (this.chunk.length > 0 && this.chunk.length + size > HEAP_CHUNK_TARGET) this.flush();
    for (const p of parts) {
      this.chunk.append(p.bytes.subarray(0, p.length));
      p.length = 0;
    }
    this.totals.records++;
  }
}
