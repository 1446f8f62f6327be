/**
 * The sampled objects alive at the current point of a heap trace's replay,
 * as typed columns with a free list: memory is the live set (bounded by the
 * heap over the sampling interval), never the number of events read. An
 * object is found by (thread, ordinal space, ordinal), what a free names it
 * by: V8's sampled objects and the external ones (Buffer and ArrayBuffer
 * backing stores) are numbered apart.
 */
import { resized } from '../typed-arrays';
import { unsampledWeight } from '../profile/index';
import { HeapQueryBudget } from '../tachyon/index';

/** Ordinals are u32: (thread index, space) above them keeps the key an exact integer below 2^53. */
const THREAD_SPAN = 2 ** 32;

function keyOf(thread: number, ordinal: number, external: boolean): number {
  return (thread * 2 + (external ? 1 : 0)) * THREAD_SPAN + ordinal;
}

export class LiveSet {
  private readonly slotOf = new Map<number, number>();
  private freeSlots: number[] = [];
  private used = 0;
  sizes = new Uint32Array(256);
  stacks = new Uint32Array(256);
  threads = new Uint32Array(256);
  /** 1: an external object (a Buffer or ArrayBuffer backing store). */
  externals = new Uint8Array(256);
  allocTimesUs = new Float64Array(256);
  /** A consumer's own mark per object (e.g. "counted in the window"). */
  marks = new Uint8Array(256);
  /** Sum of the live objects' sampled sizes (not scaled). */
  sampledBytes = 0;
  /**
   * Sum of the live objects' bytes as estimated (each scaled by unsampledWeight at the trace's interval): what a
   * heap's "live bytes" means in every answer; the sampled sum overweights big objects, which the sampler draws
   * with a probability near 1, against small ones that stand for about one interval each.
   */
  estimatedBytes = 0;
  private estimates = new Float64Array(256);

  /**
   * `intervalBytes`: the trace's sampling interval (0: sizes are not scaled); `budget`: the query's limits and
   * counts, shared by every live set of one query (replayHeapTrace admits each batch before it joins).
   */
  constructor(
    private readonly intervalBytes = 0,
    readonly budget = new HeapQueryBudget(),
  ) {}

  get count(): number {
    return this.slotOf.size;
  }

  has(thread: number, ordinal: number, external = false): boolean {
    return this.slotOf.has(keyOf(thread, ordinal, external));
  }

  /** Adds an object and returns its slot (valid until the object is removed). */
  add(thread: number, ordinal: number, size: number, stack: number, allocTimeUs: number, external = false): number {
    const key = keyOf(thread, ordinal, external);
    const known = this.slotOf.get(key);
    if (known !== undefined) return known;
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.used++;
      if (slot === this.sizes.length) this.grow();
    }
    this.slotOf.set(key, slot);
    this.budget.liveObjects++;
    this.sizes[slot] = size;
    this.stacks[slot] = stack;
    this.threads[slot] = thread;
    this.externals[slot] = external ? 1 : 0;
    this.allocTimesUs[slot] = allocTimeUs;
    this.marks[slot] = 0;
    this.sampledBytes += size;
    this.estimates[slot] = unsampledWeight(size, this.intervalBytes).bytes;
    this.estimatedBytes += this.estimates[slot]!;
    return slot;
  }

  /** Removes an object; returns the slot it had (its columns stay readable until the next add), or -1 if unknown. */
  remove(thread: number, ordinal: number, external = false): number {
    const key = keyOf(thread, ordinal, external);
    const slot = this.slotOf.get(key);
    if (slot === undefined) return -1;
    this.slotOf.delete(key);
    this.budget.liveObjects--;
    this.freeSlots.push(slot);
    this.sampledBytes -= this.sizes[slot]!;
    // Floating sums of many adds and removes drift by rounding; an empty set is exactly empty.
    this.estimatedBytes = this.slotOf.size === 0 ? 0 : this.estimatedBytes - this.estimates[slot]!;
    return slot;
  }

  /** Every live slot. */
  *slots(): Iterable<number> {
    yield* this.slotOf.values();
  }

  private grow(): void {
    const n = this.sizes.length * 2;
    this.sizes = resized(this.sizes, n);
    this.stacks = resized(this.stacks, n);
    this.threads = resized(this.threads, n);
    this.externals = resized(this.externals, n);
    this.allocTimesUs = resized(this.allocTimesUs, n);
    this.estimates = resized(this.estimates, n);
    this.marks = resized(this.marks, n);
  }
}
