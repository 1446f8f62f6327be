/**
 * ProfileBuilder: an in-memory profile, filled sample by sample (a reader of
 * a whole-file format, a recording) and read back as batches. Its columns
 * are typed arrays that double as they fill: memory is a few dozen bytes per
 * sample record whatever its values, and nothing is ever expanded by value.
 */
import { SourceTables } from './tables';
import { newBatch, sliceBatch, type ProfileSource } from './source';
import type { Frame, Label, ProfileMeta, SampleBatch } from './types';

/** Rows handed out per batch. */
export const BATCH_ROWS = 16384;

export class ProfileBuilder extends SourceTables implements ProfileSource {
  private rows: SampleBatch;
  private count = 0;

  constructor(readonly meta: ProfileMeta) {
    super();
    if (meta.sampleTypes.length === 0) throw new RangeError('a profile needs at least one sample type');
    this.rows = newBatch(1024, meta.sampleTypes.length);
  }

  get sampleCount(): number {
    return this.count;
  }

  internFrame(frame: Frame): number {
    return this.frameTable.intern(frame);
  }

  internThread(threadId: bigint, interpreterId = 0, name?: string): number {
    return this.threadTable.intern(threadId, interpreterId, name);
  }

  internLabels(labels: readonly Label[]): number {
    return this.labelTable.intern(labels);
  }

  /** Appends one sample record; `values` has one entry per sample type. */
  add(stack: number, thread: number, time: number, status: number, values: ArrayLike<number>, labels = 0): void {
    const i = this.count;
    if (i === this.rows.stack.length) this.grow();
    const r = this.rows;
    r.stack[i] = stack;
    r.thread[i] = thread;
    r.time[i] = time;
    r.status[i] = status;
    r.labels[i] = labels;
    for (let v = 0; v < r.values.length; v++) r.values[v]![i] = values[v]!;
    this.count = i + 1;
  }

  /**
   * Appends `rows` records at once and returns their columns as views to fill in place (valid until the next add):
   * a reader that knows its count grows the columns once and keeps no second copy of them. Every column of the
   * new rows starts at 0.
   */
  appendRows(rows: number): SampleBatch {
    if (this.count + rows > this.rows.stack.length) this.grow(this.count + rows);
    const from = this.count;
    this.count += rows;
    return sliceBatch(this.rows, from, this.count);
  }

  /** Appends every row of a batch whose ids already point into this builder's tables. */
  addBatch(b: SampleBatch): void {
    while (this.rows.stack.length < this.count + b.length) this.grow();
    const r = this.rows;
    const at = this.count;
    r.stack.set(b.stack.subarray(0, b.length), at);
    r.thread.set(b.thread.subarray(0, b.length), at);
    r.time.set(b.time.subarray(0, b.length), at);
    r.status.set(b.status.subarray(0, b.length), at);
    r.labels.set(b.labels.subarray(0, b.length), at);
    for (let v = 0; v < r.values.length; v++) r.values[v]!.set(b.values[v]!.subarray(0, b.length), at);
    this.count += b.length;
  }

  /** The rows so far as one batch of views (valid until the next add). */
  all(): SampleBatch {
    return sliceBatch(this.rows, 0, this.count);
  }

  *batches(): Iterable<SampleBatch> {
    for (let from = 0; from < this.count; from += BATCH_ROWS)
      yield sliceBatch(this.rows, from, Math.min(this.count, from + BATCH_ROWS));
  }

  private grow(rows = this.rows.stack.length * 2): void {
    const old = this.rows;
    const next = newBatch(rows, old.values.length);
    next.stack.set(old.stack);
    next.thread.set(old.thread);
    next.time.set(old.time);
    next.status.set(old.status);
    next.labels.set(old.labels);
    for (let v = 0; v < old.values.length; v++) next.values[v]!.set(old.values[v]!);
    this.rows = next;
  }
}
