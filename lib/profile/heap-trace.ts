/**
 * A heap recording as it reads back: sampled allocations and the frees that
 * end their lives, poll by poll, over the model's frame, stack and thread
 * tables (lib/profile). Producers: the version-2 reader (a file's heap
 * section) and HeapTraceCollector (a recording in memory). Consumers: the
 * heap questions (what was allocated in a window, what was live at a moment,
 * leak suspects, the heap flame graph, pprof/.heapprofile out, Parquet).
 *
 * Part of the model so that lib/tachyon (which reads it from files) and
 * lib/memory (which asks it questions) both depend on it, not on each other.
 *
 * Events arrive in batches of typed columns, never one object per event:
 * a poll of a big heap holds thousands of them.
 */
import type { StackTable } from './stack-table';
import type { Frame, ThreadRef } from './types';

/** A stack id for an object V8 named no allocation stack for. */
export const NO_HEAP_STACK = 0xffffffff;

export interface HeapTraceMeta {
  /**
   * V8's mean sampling interval in bytes: an object of `size` bytes is sampled with probability
   * 1 − exp(−size / intervalBytes).
   */
  intervalBytes: number;
  /** Start of the recording (or of this rotated file), µs: Unix epoch in a file recording, else the source's clock. */
  startTimeUs: number;
  /** Span covered, µs (the last poll's time less startTimeUs when nothing better is known). */
  durationUs: number;
  /** The recorded process (lib/recorded-by.ts processIdentity), when the file says: rotated files share it. */
  processIdentity?: string;
}

/**
 * Objects a rotated file inherits: allocated before it began and still live then (`allocTimesUs` are their first
 * polls).
 */
export interface HeapLiveAtStart {
  kind: 'live';
  /** Index into the source's `threads`. */
  thread: number;
  /** V8's sample ordinals: they name an object for its whole life, within its thread. */
  ordinals: Uint32Array;
  sizes: Uint32Array;
  /** Ids in the source's `stacks` (NO_HEAP_STACK: none). */
  stackIds: Uint32Array;
  allocTimesUs: Float64Array;
  /** External objects (see HeapPollSpan.external). */
  external?: boolean;
}

/**
 * One poll of one thread, the part every shape of heap events shares (the recorder's poll, its batches, the file
 * sink, the trace read back): the poll's time and the one before it, and ordinals.
 */
export interface HeapPollSpan {
  /** The poll's time, µs (Unix epoch in a file recording, else the source's clock). */
  timeUs: number;
  /** The previous poll's time (the recording's start for the first poll). */
  sinceUs: number;
  /** V8's sample ordinals, ascending: its allocation order (frees: the freed objects' ordinals). */
  ordinals: Uint32Array;
  /**
   * The objects are external: Buffer and ArrayBuffer backing stores the program allocated from JavaScript, sampled
   * by the recorder over their bytes at V8's mean interval (so weighed as V8's are), numbered in an ordinal space of
   * their own per thread. Absent: V8's sampled objects.
   */
  external?: boolean;
}

/** The sampled objects a poll first saw, in columns beside `ordinals`. */
export interface HeapPollColumns extends HeapPollSpan {
  /** Each object's size in bytes as sampled (not scaled: see unsampledWeight). */
  sizes: Uint32Array;
  /** Each object's allocation stack (NO_HEAP_STACK: V8 named none). */
  stackIds: Uint32Array;
  /**
   * Sampled objects allocated and collected between the two polls: V8 kept neither their stack nor their size,
   * only the ordinal they used up.
   */
  shortLived: number;
}

/** Sampled objects first seen at the poll at `timeUs`: allocated after `sinceUs`, at or before `timeUs`. */
export interface HeapAllocEvents extends HeapPollColumns {
  kind: 'alloc';
  thread: number;
}

/**
 * Objects live at the poll at `sinceUs` and gone at `timeUs`: freed in between. Each ordinal names an earlier
 * allocation (or live-at-start object) of this thread.
 */
export interface HeapFreeEvents extends HeapPollSpan {
  kind: 'free';
  thread: number;
}

export type HeapEventBatch = HeapLiveAtStart | HeapAllocEvents | HeapFreeEvents;

/**
 * A thread's external memory at a poll (process.memoryUsage()): the bytes outside V8's heap that JS objects hold,
 * Buffer and ArrayBuffer backing stores above all (`arrayBuffers` is their part of `external`). V8's sampler never
 * sees them, so they are a series of their own beside the sampled heap.
 */
export interface ExternalMemorySample {
  /** Index into the source's `threads`. */
  thread: number;
  timeUs: number;
  externalBytes: number;
  arrayBuffersBytes: number;
}

export interface ExternalObjectCounts {
  allocations: number;
  frees: number;
  /** Inherited by a rotated file. */
  live: number;
}

export interface HeapTraceSource {
  readonly meta: HeapTraceMeta;
  /** Live tables, as in ProfileSource: a batch names only entries that exist when it is handed out. */
  readonly frames: readonly Frame[];
  readonly stacks: StackTable;
  readonly threads: readonly ThreadRef[];
  /**
   * The events, once: 'live' batches first, then each poll's 'alloc' batch
   * before its 'free' batch, polls in time order (threads interleaved by
   * time). A batch's arrays may be reused after the next one is asked for.
   */
  events(): Iterable<HeapEventBatch>;
  /** The external memory series, in time order (absent or empty: recorded before it, or not by Node). */
  externalMemory?(): ExternalMemorySample[];
  /**
   * How many of the events are external objects' (Buffer and ArrayBuffer stores the recorder sampled; counted in the
   * totals too). Absent: the source cannot tell without a pass, or holds none.
   */
  externalObjects?(): ExternalObjectCounts;
  close?(): void;
}

/**
 * What one sampled object stands for in the whole heap, as pprof heap
 * profiles scale it (Go's runtime and V8 sample by bytes alike): an object of
 * `size` bytes was sampled with probability p = 1 − exp(−size / interval), so
 * it stands for 1/p objects and size/p bytes.
 */
export function unsampledWeight(size: number, intervalBytes: number): { objects: number; bytes: number } {
  if (!(intervalBytes > 0) || !(size > 0)) return { objects: 1, bytes: size > 0 ? size : 0 };
  const p = -Math.expm1(-size / intervalBytes);
  return { objects: 1 / p, bytes: size / p };
}
