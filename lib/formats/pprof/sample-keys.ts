/**
 * The keys of an aggregated pprof: each distinct (stack, thread, label set) gets a slot, numbered in the order
 * first met (the order the Samples are written in). An open-addressing hash over the three ids in typed arrays,
 * as the stack table's over (parent, frame): no string or object per record (a string key per record was a third
 * of a 1 M-record aggregated conversion). Memory grows with distinct keys, never with records.
 */
import { mix3 } from '../../hash';
import { resized } from '../../typed-arrays';

export class SampleKeys {
  /** The key of each slot: stack, thread and label set at 3·slot, 3·slot + 1, 3·slot + 2. */
  private keys = new Uint32Array(3 * 1024);
  private count = 0;
  /** Hash entries hold slot + 1 (0 = empty); at most half are used. */
  private table = new Uint32Array(2048);

  /** Slots so far. */
  get size(): number {
    return this.count;
  }

  stack(slot: number): number {
    return this.keys[3 * slot]!;
  }

  thread(slot: number): number {
    return this.keys[3 * slot + 1]!;
  }

  labels(slot: number): number {
    return this.keys[3 * slot + 2]!;
  }

  /** The slot of (stack, thread, labels), a new one (the next number) the first time. */
  slot(stack: number, thread: number, labels: number): number {
    const keys = this.keys;
    const mask = this.table.length - 1;
    let h = mix3(stack, thread, labels) & mask;
    for (;;) {
      const entry = this.table[h]!;
      if (entry === 0) break;
      const k = 3 * (entry - 1);
      if (keys[k] === stack && keys[k + 1] === thread && keys[k + 2] === labels) return entry - 1;
      h = (h + 1) & mask;
    }
    const slot = this.count++;
    if (3 * slot === keys.length) this.keys = resized(keys, keys.length * 2);
    this.keys[3 * slot] = stack;
    this.keys[3 * slot + 1] = thread;
    this.keys[3 * slot + 2] = labels;
    this.table[h] = slot + 1;
    if (2 * this.count > this.table.length) this.rehash();
    return slot;
  }

  private rehash(): void {
    const table = new Uint32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let slot = 0; slot < this.count; slot++) {
      let h = mix3(this.keys[3 * slot]!, this.keys[3 * slot + 1]!, this.keys[3 * slot + 2]!) & mask;
      while (table[h] !== 0) h = (h + 1) & mask;
      table[h] = slot + 1;
    }
    this.table = table;
  }
}
