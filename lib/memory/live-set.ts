/**
 * The sampled objects alive at the current point of a heap trace's replay,
 * as typed columns with a free list: memory is the live set (bounded by the
 * heap over the sampling interval), never the number of events read. An
 * object is found by (thread, V8 ordinal), the pair a free names it by.
 */

/** Ordinals are u32: thread index above them keeps the key an exact integer below 2^53. */
const THREAD_SPAN = 2 ** 32;

export class LiveSet {
  private readonly slotOf = new Map<number, number>();
  private freeSlots: number[] = [];
  private used = 0;
  sizes = new Uint32Array(256);
  stacks = new Uint32Array(256);
  threads = new Uint32Array(256);
  allocTimesUs = new Float64Array(256);
  /** A consumer's own mark per object (e.g. "counted in the window"). */
  marks = new Uint8Array(256);
  /** Sum of the live objects' sampled sizes (not scaled). */
  sampledBytes = 0;

  get count(): number {
    return this.slotOf.size;
  }

  has(thread: number, ordinal: number): boolean {
    return this.slotOf.has(thread * THREAD_SPAN + ordinal);
  }

  /** Adds an object and returns its slot (valid until the object is removed). */
  add(thread: number, ordinal: number, size: number, stack: number, allocTimeUs: number): number {
    const key = thread * THREAD_SPAN + ordinal;
    const known = this.slotOf.get(key);
    if (known !== undefined) return known;
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.used++;
      if (slot === this.sizes.length) this.grow();
    }
    this.slotOf.set(key, slot);
    this.sizes[slot] = size;
    this.stacks[slot] = stack;
    this.threads[slot] = thread;
    this.allocTimesUs[slot] = allocTimeUs;
    this.marks[slot] = 0;
    this.sampledBytes += size;
    return slot;
  }

  /** Removes an object; returns the slot it had (its columns stay readable until the next add), or -1 if unknown. */
  remove(thread: number, ordinal: number): number {
    const key = thread * THREAD_SPAN + ordinal;
    const slot = this.slotOf.get(key);
    if (slot === undefined) return -1;
    this.slotOf.delete(key);
    this.freeSlots.push(slot);
    this.sampledBytes -= this.sizes[slot]!;
    return slot;
  }

  /** Every live slot. */
  *slots(): Iterable<number> {
    yield* this.slotOf.values();
  }

  private grow(): void {
    const n = this.sizes.length * 2;
    const u32 = (a: Uint32Array) => {
      const b = new Uint32Array(n);
      b.set(a);
      return b;
    };
    this.sizes = u32(this.sizes);
    this.stacks = u32(this.stacks);
    this.threads = u32(this.threads);
    const t = new Float64Array(n);
    t.set(this.allocTimesUs);
    this.allocTimesUs = t;
    const m = new Uint8Array(n);
    m.set(this.marks);
    this.marks = m;
  }
}
