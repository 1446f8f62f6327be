/**
 * Stacks as a prefix table: stack id → (parent stack id, frame id), id 0 the
 * empty stack, ids dense in the order first met. A stack of depth d costs at
 * most d entries and each prefix is stored once, so a profile's stacks take
 * memory in its distinct call paths, never in its samples. Interning is an
 * open-addressing hash over (parent, frame) pairs in typed arrays (no JS
 * object per entry). The one (parent, frame) → stack table: the profile model
 * keeps its stacks here, and the JS Tachyon record decoder (tachyon/read/records.ts)
 * its trie nodes, reading `parents`/`frameIds` directly in its hot loop.
 */
import { mix2 } from '../hash';
import { resized } from '../typed-arrays';

export class StackTable {
  /** parents[id]: the stack without its innermost frame. Read-only outside this class (push writes it). */
  parents = new Uint32Array(1024);
  /** frameIds[id]: the stack's innermost frame. Read-only outside this class. */
  frameIds = new Uint32Array(1024);
  private depths = new Uint32Array(1024);
  /** The child a stack got last, tried before the hash (call paths recur: a sampler's next stack shares most). */
  private lastChild = new Uint32Array(1024);
  private count = 1;
  /** Hash slots hold ids (0 = empty: the empty stack is nobody's child). */
  private slots = new Uint32Array(2048);
  /** Whether the last `push` added its stack (the record decoder emits new nodes). */
  created = false;

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

  /** The stack `frame` called from `parent` (outermost frames are pushed first); sets `created`. */
  push(parent: number, frame: number): number {
    const last = this.lastChild[parent]!;
    if (last !== 0 && this.frameIds[last] === frame) {
      this.created = false;
      return last;
    }
    const slots = this.slots;
    const mask = slots.length - 1;
    let h = mix2(parent, frame) & mask;
    for (;;) {
      const id = slots[h]!;
      if (id === 0) break;
      if (this.parents[id] === parent && this.frameIds[id] === frame) {
        this.created = false;
        this.lastChild[parent] = id;
        return id;
      }
      h = (h + 1) & mask;
    }
    const id = this.count;
    if (id === this.parents.length) this.growEntries();
    this.parents[id] = parent;
    this.frameIds[id] = frame;
    this.depths[id] = this.depths[parent]! + 1;
    this.lastChild[parent] = id;
    this.count = id + 1;
    slots[h] = id;
    if (this.count * 2 > slots.length) this.rehash();
    this.created = true;
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

  /** Back to the empty stack only; ids start again at 1 (capacity is kept). */
  clear(): void {
    this.count = 1;
    this.slots.fill(0);
    this.lastChild.fill(0);
  }

  private growEntries(): void {
    const n = this.parents.length * 2;
    this.parents = resized(this.parents, n);
    this.frameIds = resized(this.frameIds, n);
    this.depths = resized(this.depths, n);
    this.lastChild = resized(this.lastChild, n);
  }

  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 1; id < this.count; id++) {
      let h = mix2(this.parents[id]!, this.frameIds[id]!) & mask;
      while (slots[h] !== 0) h = (h + 1) & mask;
      slots[h] = id;
    }
    this.slots = slots;
  }
}
