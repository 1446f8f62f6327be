/**
 * Stacks as a prefix table: stack id → (parent stack id, frame id), id 0 the
 * empty stack. A stack of depth d costs at most d entries and each prefix is
 * stored once, so a profile's stacks take memory in its distinct call paths,
 * never in its samples. Interning is an open-addressing hash over
 * (parent, frame) pairs in typed arrays (no JS object per entry).
 */
import { mix2 } from '../hash';
import { resized } from '../typed-arrays';

export class StackTable {
  private parents = new Uint32Array(1024);
  private frameIds = new Uint32Array(1024);
  private depths = new Uint32Array(1024);
  private count = 1;
  /** Hash slots hold id + 1 (0 = empty). */
  private slots = new Uint32Array(2048);

  /** Stacks known, the empty one included. */
  get size(): number {
    return this.count;
  }

  parent(id: number): number {
    return this.parents[id]!;
  }

  /** The innermost frame of a stack (undefined for the empty stack). */
  frame(id: number): number {
    return this.frameIds[id]!;
  }

  depth(id: number): number {
    return this.depths[id]!;
  }

  /** The stack `frame` called from `parent` (outermost frames are pushed first). */
  push(parent: number, frame: number): number {
    const mask = this.slots.length - 1;
    let h = mix2(parent, frame) & mask;
    for (;;) {
      const slot = this.slots[h]!;
      if (slot === 0) break;
      const id = slot - 1;
      if (this.parents[id] === parent && this.frameIds[id] === frame) return id;
      h = (h + 1) & mask;
    }
    const id = this.count;
    if (id === this.parents.length) this.growEntries();
    this.parents[id] = parent;
    this.frameIds[id] = frame;
    this.depths[id] = this.depths[parent]! + 1;
    this.count = id + 1;
    this.slots[h] = id + 1;
    if (this.count * 2 > this.slots.length) this.rehash();
    return id;
  }

  /** The id of a stack given innermost first (the model's and Tachyon's order). */
  intern(framesInnermostFirst: ArrayLike<number>, length = framesInnermostFirst.length): number {
    let id = 0;
    for (let i = length - 1; i >= 0; i--) id = this.push(id, framesInnermostFirst[i]!);
    return id;
  }

  /** The id of a stack given outermost first (pprof's reverse, speedscope's and collapsed order). */
  internOutermostFirst(frames: ArrayLike<number>, length = frames.length): number {
    let id = 0;
    for (let i = 0; i < length; i++) id = this.push(id, frames[i]!);
    return id;
  }

  /** Frames of a stack, innermost first, into `out` (grown when short); returns the depth. */
  frames(id: number, out: { buffer: Uint32Array }): number {
    const d = this.depths[id]!;
    if (out.buffer.length < d) out.buffer = new Uint32Array(Math.max(d, out.buffer.length * 2));
    const buf = out.buffer;
    let k = 0;
    for (let s = id; s !== 0; s = this.parents[s]!) buf[k++] = this.frameIds[s]!;
    return d;
  }

  /** Frames of a stack, innermost first, as a new array. */
  toArray(id: number): number[] {
    const out: number[] = [];
    for (let s = id; s !== 0; s = this.parents[s]!) out.push(this.frameIds[s]!);
    return out;
  }

  private growEntries(): void {
    const n = this.parents.length * 2;
    this.parents = resized(this.parents, n);
    this.frameIds = resized(this.frameIds, n);
    this.depths = resized(this.depths, n);
  }

  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 1; id < this.count; id++) {
      let h = mix2(this.parents[id]!, this.frameIds[id]!) & mask;
      while (slots[h] !== 0) h = (h + 1) & mask;
      slots[h] = id + 1;
    }
    this.slots = slots;
  }
}
