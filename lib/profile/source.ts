/**
 * ProfileSource: what every reader produces and every writer, query and view
 * consumes. Its tables are live: a streaming source (a Tachyon replay, a
 * recording) may add frames, stacks, threads and label sets while its
 * batches are read, but a batch only names entries that exist when it is
 * handed out.
 */
import type { StackTable } from './stack-table';
import type { Frame, Label, ProfileMeta, SampleBatch, ThreadRef } from './types';

export interface ProfileSource {
  readonly meta: ProfileMeta;
  readonly frames: readonly Frame[];
  readonly stacks: StackTable;
  readonly threads: readonly ThreadRef[];
  readonly labelSets: readonly (readonly Label[])[];
  /** Sample records when known up front (progress, limits); a record may weigh any value. */
  readonly sampleCount?: number;
  /** The samples, once, in the source's order; a batch may be reused for the next one. */
  batches(): Iterable<SampleBatch>;
  /** Releases a file the source holds open (no-op for in-memory sources). */
  close?(): void;
}

/** A batch of `capacity` rows with `valueCount` value columns. */
export function newBatch(capacity: number, valueCount: number): SampleBatch {
  return {
    length: 0,
    stack: new Uint32Array(capacity),
    thread: new Uint32Array(capacity),
    time: new Float64Array(capacity),
    status: new Uint8Array(capacity),
    values: Array.from({ length: valueCount }, () => new Float64Array(capacity)),
    labels: new Uint32Array(capacity),
  };
}

/** The same rows, `from` to `to`, as views (no copy). */
export function sliceBatch(b: SampleBatch, from: number, to: number): SampleBatch {
  return {
    length: to - from,
    stack: b.stack.subarray(from, to),
    thread: b.thread.subarray(from, to),
    time: b.time.subarray(from, to),
    status: b.status.subarray(from, to),
    values: b.values.map((v) => v.subarray(from, to)),
    labels: b.labels.subarray(from, to),
  };
}

/** A source that yields the batches of another through `wrap` (progress, limits, filters). */
export function mapBatches(
  source: ProfileSource,
  wrap: (batches: Iterable<SampleBatch>) => Iterable<SampleBatch>,
): ProfileSource {
  return {
    get meta() {
      return source.meta;
    },
    get frames() {
      return source.frames;
    },
    get stacks() {
      return source.stacks;
    },
    get threads() {
      return source.threads;
    },
    get labelSets() {
      return source.labelSets;
    },
    sampleCount: source.sampleCount,
    batches: () => wrap(source.batches()),
    close: () => source.close?.(),
  };
}
