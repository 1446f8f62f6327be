/**
 * Model helpers for tests: a ProfileBuilder made from a vector's
 * CPython-produced expected.json (no profpack reader involved), and a
 * projection of any source to sorted text lines, to compare what two
 * sources hold.
 */
import {
  ProfileBuilder,
  Remapper,
  SampleTypes,
  gapsToNext,
  normalizeFrame,
  threadKey,
  type Frame,
  type ProfileSource,
} from '../../lib/profile/index';
import type { Expected } from './vectors';

/** Samples of a vector as a model: samples/count 1 each, wall/nanoseconds the gap to the thread's next sample. */
export function builderFromExpected(expected: Expected): ProfileBuilder {
  const model = new ProfileBuilder({
    sampleTypes: [SampleTypes.samples, SampleTypes.wall],
    defaultSampleType: 0,
    startTimeUs: BigInt(expected.info.start_time_us),
    sampleIntervalUs: BigInt(expected.info.sample_interval_us),
  });
  for (const s of expected.samples) {
    const stack = s.frames.map((f) =>
      model.internFrame(
        normalizeFrame({
          filename: f.filename,
          funcname: f.funcname,
          lineno: f.lineno,
          endLineno: f.end_lineno,
          column: f.column,
          endColumn: f.end_column,
          opcode: f.opcode,
        }),
      ),
    );
    model.add(
      model.stacks.intern(stack),
      model.internThread(BigInt(s.thread_id), s.interpreter_id),
      Number(s.timestamp_us),
      s.status,
      [1, 0],
    );
  }
  const all = model.all();
  gapsToNext(all.thread, all.time, all.length, Number(expected.info.sample_interval_us), all.values[1]!);
  return model;
}

export interface Projection {
  time?: boolean;
  status?: boolean;
  /** Value columns shown, by sample type name; default none. */
  values?: string[];
  frame: (f: Frame) => string;
  /** Frames left out of each stack (what a format does not show); default none. */
  hide?: (f: Frame) => boolean;
}

/** Sorted lines, one per sample record, with what the projection keeps. */
export function projectSource(source: ProfileSource, keep: Projection): string[] {
  const lines: string[] = [];
  const labels: string[] = [];
  const columns = (keep.values ?? []).map((name) =>
    source.meta.sampleTypes.findIndex((t) => t.type === name || `${t.type}/${t.unit}` === name),
  );
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const stack = source.stacks
        .toArray(b.stack[i]!)
        .filter((f) => keep.hide?.(source.frames[f]!) !== true)
        .map((f) => (labels[f] ??= keep.frame(source.frames[f]!)))
        .join(' | ');
      const t = source.threads[b.thread[i]!]!;
      const values = columns.map((c) => (c < 0 ? '-' : String(b.values[c]![i]))).join(',');
      lines.push(
        `${threadKey(t.threadId, t.interpreterId)} t=${keep.time === true ? b.time[i] : '-'} st=${keep.status === true ? b.status[i] : '-'} v=${values} [${stack}]`,
      );
    }
  }
  return lines.sort();
}

/**
 * A ProfileBuilder filled the way a sampling profiler's tick stream is:
 * `writeStack` adds one record of samples/count 1 and wall/nanoseconds one
 * nominal interval (what tests of counting code want to state simply).
 */
export class TickProfile extends ProfileBuilder {
  constructor(meta: { startTimeUs?: bigint; sampleIntervalUs?: bigint } = {}) {
    super({
      sampleTypes: [SampleTypes.samples, SampleTypes.wall],
      defaultSampleType: 0,
      startTimeUs: meta.startTimeUs ?? 0n,
      sampleIntervalUs: meta.sampleIntervalUs ?? 1000n,
    });
  }

  writeStack(
    threadId: bigint,
    interpreterId: number,
    timestampUs: bigint,
    status: number,
    frameIds: ArrayLike<number>,
  ): void {
    this.add(this.stacks.intern(frameIds), this.internThread(threadId, interpreterId), Number(timestampUs), status, [
      1,
      Number(this.meta.sampleIntervalUs) * 1000,
    ]);
  }
}

/** A sample record as a plain object, for assertions (tests only: the library never makes one per sample). */
export interface SampleRecord {
  threadId: bigint;
  interpreterId: number;
  threadName?: string;
  timestampUs: bigint;
  status: number;
  /** Frame indices, innermost first. */
  stack: number[];
  values: number[];
  labels: number;
}

export function* samplesOf(source: ProfileSource): Generator<SampleRecord> {
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const t = source.threads[b.thread[i]!]!;
      const time = b.time[i]!;
      yield {
        threadId: t.threadId,
        interpreterId: t.interpreterId,
        threadName: t.name,
        timestampUs: Number.isNaN(time) ? -1n : BigInt(Math.round(time)),
        status: b.status[i]!,
        stack: source.stacks.toArray(b.stack[i]!),
        values: b.values.map((v) => v[i]!),
        labels: b.labels[i]!,
      };
    }
  }
}

/** Every record of a source copied into memory (tables re-interned). */
export function copyToBuilder(source: ProfileSource): ProfileBuilder {
  const out = new ProfileBuilder({ ...source.meta, sampleTypes: source.meta.sampleTypes.map((t) => ({ ...t })) });
  const remap = new Remapper(source, out, source.meta.sampleTypes.length);
  for (const b of source.batches()) out.addBatch(remap.batch(b));
  return out;
}

/**
 * A recording sink that keeps every tick as an object (the recorder's
 * ProfileSink shape: frames interned on all seven fields, one writeStack per
 * tick), for tests that look at each one.
 */
export class TickList {
  readonly frames: Frame[] = [];
  readonly sampleList: {
    threadId: bigint;
    interpreterId: number;
    timestampUs: bigint;
    status: number;
    stack: number[];
  }[] = [];
  private readonly ids = new Map<string, number>();

  get sampleCount(): number {
    return this.sampleList.length;
  }

  internFrame(frame: Frame): number {
    const key = JSON.stringify(frame);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push({ ...frame });
      this.ids.set(key, id);
    }
    return id;
  }

  writeStack(
    threadId: bigint,
    interpreterId: number,
    timestampUs: bigint,
    status: number,
    frameIds: ArrayLike<number>,
  ): void {
    this.sampleList.push({ threadId, interpreterId, timestampUs, status, stack: Array.from(frameIds) });
  }
}
