/**
 * Model helpers for tests: a ProfileBuilder made from a vector's
 * CPython-produced expected.json (no profpack reader involved), and a
 * projection of any source to sorted text lines, to compare what two
 * sources hold.
 */
import { ProfileBuilder, SampleTypes, gapsToNext, normalizeFrame, threadKey, type Frame, type ProfileSource } from '../../lib/profile/index';
import type { Expected } from '../convert/helpers';

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
      model.internFrame(normalizeFrame({ filename: f.filename, funcname: f.funcname, lineno: f.lineno, endLineno: f.end_lineno, column: f.column, endColumn: f.end_column, opcode: f.opcode })),
    );
    model.add(model.stacks.intern(stack), model.internThread(BigInt(s.thread_id), s.interpreter_id), Number(s.timestamp_us), s.status, [1, 0]);
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
}

/** Sorted lines, one per sample record, with what the projection keeps. */
export function projectSource(source: ProfileSource, keep: Projection): string[] {
  const lines: string[] = [];
  const labels: string[] = [];
  const columns = (keep.values ?? []).map((name) => source.meta.sampleTypes.findIndex((t) => t.type === name || `${t.type}/${t.unit}` === name));
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const stack = source.stacks
        .toArray(b.stack[i]!)
        .map((f) => (labels[f] ??= keep.frame(source.frames[f]!)))
        .join(' | ');
      const t = source.threads[b.thread[i]!]!;
      const values = columns.map((c) => (c < 0 ? '-' : String(b.values[c]![i]))).join(',');
      lines.push(`${threadKey(t.threadId, t.interpreterId)} t=${keep.time === true ? b.time[i] : '-'} st=${keep.status === true ? b.status[i] : '-'} v=${values} [${stack}]`);
    }
  }
  return lines.sort();
}
