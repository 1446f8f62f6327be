/**
 * Stack ids by the bytes of a sample's packed location ids. Real profiles
 * repeat stacks (1 M samples of Node's tsc stream hold 214 k distinct ones,
 * about 60 frames deep), and interning a stack walks every frame; comparing
 * its few dozen encoded bytes with an earlier sample's, in place in the
 * file's bytes, does not allocate and skips the walk.
 */
import { resized } from '../../typed-arrays';

export class PackedStackCache {
  private slots = new Int32Array(1 << 12).fill(-1);
  private hashes = new Int32Array(1 << 11);
  private offsets = new Int32Array(1 << 11);
  private lengths = new Int32Array(1 << 11);
  private stacks = new Uint32Array(1 << 11);
  private count = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /** FNV-1a of bytes[from, to). */
  hash(from: number, to: number): number {
    const b = this.bytes;
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
    return h | 0;
  }

  /** The stack id of an earlier sample with the same bytes, or -1. */
  find(from: number, to: number, h: number): number {
    const mask = this.slots.length - 1;
    const b = this.bytes;
    const length = to - from;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s]!;
      if (e < 0) return -1;
      if (this.hashes[e] !== h || this.lengths[e] !== length) continue;
      const at = this.offsets[e]!;
      let i = 0;
      while (i < length && b[at + i] === b[from + i]) i++;
      if (i === length) return this.stacks[e]!;
    }
  }

  add(from: number, to: number, h: number, stack: number): void {
    const e = this.count++;
    if (e === this.hashes.length) this.growEntries();
    this.hashes[e] = h;
    this.offsets[e] = from;
    this.lengths[e] = to - from;
    this.stacks[e] = stack;
    if (this.count * 2 > this.slots.length) this.rehash();
    else this.place(e);
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let s = this.hashes[e]! & mask;
    while (this.slots[s]! >= 0) s = (s + 1) & mask;
    this.slots[s] = e;
  }

  private growEntries(): void {
    const n = this.hashes.length * 2;
    this.hashes = resized(this.hashes, n);
    this.offsets = resized(this.offsets, n);
    this.lengths = resized(this.lengths, n);
    this.stacks = resized(this.stacks, n);
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    for (let e = 0; e < this.count; e++) this.place(e);
  }
}
