/**
 * The JS record decoder's thread table (records.ts), keyed as CPython keys it;
 * its stack trie is the model's StackTable (profile/stack-table.ts).
 */
import { mix3 } from '../../hash';
import { resized } from '../../typed-arrays';
import { MAX_STACK_DEPTH } from '../format';

/** Threads.path holds, per thread, the nodes of its stack's bottom 0..256 frames. */
export const PATH_STRIDE = MAX_STACK_DEPTH + 1;

/** Per-thread state, CPython's ReaderThreadState: key, previous timestamp, current stack. */
export class Threads {
  count = 0;
  idLow: Uint32Array = new Uint32Array(16);
  idHigh: Uint32Array = new Uint32Array(16);
  interp: Uint32Array = new Uint32Array(16);
  tsLow: Uint32Array = new Uint32Array(16);
  tsHigh: Uint32Array = new Uint32Array(16);
  depth: Uint32Array = new Uint32Array(16);
  /** path[t * 257 + k] = node of the bottom k frames of thread t's stack. */
  path: Uint32Array = new Uint32Array(16 * PATH_STRIDE);
  private slots = new Int32Array(64).fill(-1);
  private mask = 63;

  find(low: number, high: number, interp: number): number {
    let i = mix3(low, high, interp) & this.mask;
    for (;;) {
      const t = this.slots[i]!;
      if (t < 0) return -1 - i;
      if (this.idLow[t] === low && this.idHigh[t] === high && this.interp[t] === interp) return t;
      i = (i + 1) & this.mask;
    }
  }

  add(slot: number, low: number, high: number, interp: number, startLow: number, startHigh: number): number {
    const t = this.count++;
    if (t >= this.idLow.length) this.growArrays();
    this.idLow[t] = low;
    this.idHigh[t] = high;
    this.interp[t] = interp;
    this.tsLow[t] = startLow;
    this.tsHigh[t] = startHigh;
    this.depth[t] = 0;
    this.path[t * PATH_STRIDE] = 0;
    this.slots[slot] = t;
    if (this.count * 2 > this.mask) this.growSlots();
    return t;
  }

  private growArrays(): void {
    const n = this.idLow.length * 2;
    this.idLow = resized(this.idLow, n);
    this.idHigh = resized(this.idHigh, n);
    this.interp = resized(this.interp, n);
    this.tsLow = resized(this.tsLow, n);
    this.tsHigh = resized(this.tsHigh, n);
    this.depth = resized(this.depth, n);
    this.path = resized(this.path, n * PATH_STRIDE);
  }

  private growSlots(): void {
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let t = 0; t < this.count; t++) {
      let i = mix3(this.idLow[t]!, this.idHigh[t]!, this.interp[t]!) & mask;
      while (slots[i]! >= 0) i = (i + 1) & mask;
      slots[i] = t;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
