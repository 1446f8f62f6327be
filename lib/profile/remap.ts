/**
 * Moving samples between profiles: a source's batch rewritten with another
 * profile's ids (frames, stacks, threads, label sets). Each source id is
 * looked up once and memoised, a stack through its parent, so the cost is
 * per distinct entry, never per sample or per frame of a sample.
 */
import { grown } from '../typed-arrays';
import type { StackTable } from './stack-table';
import type { ProfileSource } from './source';
import { newBatch } from './source';
import type { Frame, Label, SampleBatch } from './types';

/** Where remapped ids point: ProfileBuilder is one, a merged stream another. */
export interface ProfileTarget {
  readonly stacks: StackTable;
  internFrame(frame: Frame): number;
  internThread(threadId: bigint, interpreterId?: number, name?: string): number;
  internLabels(labels: readonly Label[]): number;
}

export interface RemapOptions {
  /** The target thread for a source thread (default: the same id and interpreter, named as in the source). */
  thread?: (index: number) => number;
  /**
   * The target value column for each of the target's columns (-1: none, filled with `fill`); default the same index.
   */
  columns?: readonly number[];
  fill?: number;
}

export class Remapper {
  private frameMap: Int32Array<ArrayBuffer> = new Int32Array(0);
  private stackMap: Int32Array<ArrayBuffer> = new Int32Array(0);
  private threadMap: number[] = [];
  private labelMap: number[] = [];
  private out: SampleBatch;

  constructor(
    private readonly source: ProfileSource,
    private readonly target: ProfileTarget,
    private readonly valueColumns: number,
    private readonly options: RemapOptions = {},
  ) {
    this.out = newBatch(0, valueColumns);
  }

  frame(id: number): number {
    if (id >= this.frameMap.length) this.frameMap = grown(this.frameMap, id, -1);
    let to = this.frameMap[id]!;
    if (to < 0) {
      const frame = this.source.frames[id];
      if (frame === undefined)
        throw new RangeError(`a stack names frame ${id}, but the source has ${this.source.frames.length}`);
      to = this.frameMap[id] = this.target.internFrame(frame);
    }
    return to;
  }

  stack(id: number): number {
    if (id === 0) return 0;
    if (id >= this.stackMap.length) this.stackMap = grown(this.stackMap, Math.max(id, this.source.stacks.size - 1), -1);
    const known = this.stackMap[id]!;
    if (known >= 0) return known;
    // Unmapped ancestors first, without recursion (stacks can be thousands deep).
    const chain: number[] = [];
    let s = id;
    while (s !== 0 && this.stackMap[s]! < 0) {
      chain.push(s);
      s = this.source.stacks.parent(s);
    }
    let to = s === 0 ? 0 : this.stackMap[s]!;
    for (let k = chain.length - 1; k >= 0; k--) {
      const c = chain[k]!;
      to = this.target.stacks.push(to, this.frame(this.source.stacks.frame(c)));
      this.stackMap[c] = to;
    }
    return to;
  }

  thread(index: number): number {
    let to = this.threadMap[index];
    if (to === undefined) {
      if (this.options.thread !== undefined) to = this.options.thread(index);
      else {
        const t = this.source.threads[index]!;
        to = this.target.internThread(t.threadId, t.interpreterId, t.name);
      }
      this.threadMap[index] = to;
    }
    return to;
  }

  labels(id: number): number {
    if (id === 0) return 0;
    let to = this.labelMap[id];
    if (to === undefined) to = this.labelMap[id] = this.target.internLabels(this.source.labelSets[id]!);
    return to;
  }

  /** The batch in target ids (one reused output batch: consume before the next call). */
  batch(b: SampleBatch): SampleBatch {
    const n = b.length;
    if (this.out.stack.length < n) this.out = newBatch(n, this.valueColumns);
    const o = this.out;
    o.length = n;
    for (let i = 0; i < n; i++) {
      o.stack[i] = this.stack(b.stack[i]!);
      o.thread[i] = this.thread(b.thread[i]!);
      o.labels[i] = this.labels(b.labels[i]!);
    }
    o.time.set(b.time.subarray(0, n));
    o.status.set(b.status.subarray(0, n));
    const cols = this.options.columns;
    for (let v = 0; v < this.valueColumns; v++) {
      const from = cols === undefined ? v : cols[v]!;
      const dst = o.values[v]!;
      if (from >= 0 && from < b.values.length) dst.set(b.values[from]!.subarray(0, n));
      else dst.fill(this.options.fill ?? 0, 0, n);
    }
    return o;
  }
}
