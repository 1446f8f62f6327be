/**
 * A thread's live sampled objects in ordinal order, for the heap section's
 * relative frees (docs/format-v2.md §9): a free names its object by how many
 * live objects of the thread it skips, counted from the most recent one
 * (memtrace names a collection "the Nth most recent allocation" the same
 * way), so short-lived objects cost one small number and no ordinal.
 * The coder and the decoder hold the same list; the coder also keeps each
 * object's size, stack and allocation time (what a rotated file inherits).
 */
import { grown } from '../../typed-arrays';

export class LiveList {
  ordinals = new Uint32Array(64);
  length = 0;
  /** Payload, kept only by a coder (withPayload). */
  sizes: Uint32Array<ArrayBuffer> | null = null;
  stacks: Uint32Array<ArrayBuffer> | null = null;
  times: Float64Array<ArrayBuffer> | null = null;
  /** Positions freed by the batch being coded, descending. */
  private removed: number[] = [];

  constructor(withPayload: boolean) {
    if (withPayload) {
      this.sizes = new Uint32Array(64);
      this.stacks = new Uint32Array(64);
      this.times = new Float64Array(64);
    }
  }

  /** Adds an object after every live one with an ordinal ≤ its own (V8's ordinals ascend: nearly always last). */
  insert(ordinal: number, size = 0, stack = 0, timeUs = 0): void {
    const n = this.length;
    if (n === this.ordinals.length) {
      this.ordinals = grown(this.ordinals, n);
      if (this.sizes !== null) {
        this.sizes = grown(this.sizes, n);
        this.stacks = grown(this.stacks!, n);
        this.times = grown(this.times!, n);
      }
    }
    const at = n === 0 || this.ordinals[n - 1]! <= ordinal ? n : this.upperBound(ordinal, n);
    if (at < n) {
      this.ordinals.copyWithin(at + 1, at, n);
      this.sizes?.copyWithin(at + 1, at, n);
      this.stacks?.copyWithin(at + 1, at, n);
      this.times?.copyWithin(at + 1, at, n);
    }
    this.ordinals[at] = ordinal;
    if (this.sizes !== null) {
      this.sizes[at] = size;
      this.stacks![at] = stack;
      this.times![at] = timeUs;
    }
    this.length = n + 1;
  }

  /** The first position in [0, end) whose ordinal is > `ordinal`. */
  private upperBound(ordinal: number, end: number): number {
    let lo = 0;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ordinals[mid]! <= ordinal) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Coder: the gap of a freed ordinal below `cursor` (the previous free's
   * position, or the length for the batch's first), frees taken from the
   * highest ordinal down: [gap, position], or null when no live object below
   * the cursor has it (the free is dropped).
   */
  find(ordinal: number, cursor: number): [number, number] | null {
    const p = this.upperBound(ordinal, cursor) - 1;
    if (p < 0 || this.ordinals[p] !== ordinal) return null;
    this.removed.push(p);
    return [cursor - 1 - p, p];
  }

  /** Decoder: the position a gap names below `cursor`, or -1 when it names none. */
  take(gap: number, cursor: number): number {
    const p = cursor - 1 - gap;
    if (p < 0) return -1;
    this.removed.push(p);
    return p;
  }

  /** Removes the positions found or taken since the last call, in one pass. */
  compact(): void {
    const removed = this.removed;
    if (removed.length === 0) return;
    // Descending; the list is rebuilt from the lowest one up.
    let write = removed[removed.length - 1]!;
    let r = removed.length - 1;
    for (let read = write; read < this.length; read++) {
      if (r >= 0 && removed[r] === read) {
        r--;
        continue;
      }
      this.ordinals[write] = this.ordinals[read]!;
      if (this.sizes !== null) {
        this.sizes[write] = this.sizes[read]!;
        this.stacks![write] = this.stacks![read]!;
        this.times![write] = this.times![read]!;
      }
      write++;
    }
    this.length = write;
    removed.length = 0;
  }
}
