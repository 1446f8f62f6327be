/**
 * The tick model of lib/convert before the profile model change (cd4e6e3),
 * kept for callers of the old API: a source of one object per sample with a
 * bigint time and a stack of frame indices, and a sink with the writer's
 * fast path. These types and views translate it to and from lib/profile.
 */
import { invalidArgument } from '../errors';
import type { TickSink } from '../record/index';
import { sampleCountColumn, threadKey, type Frame, type ProfileMeta, type ProfileSource } from '../profile/index';

/**
 * One sample of the old model.
 * @deprecated Read `SampleBatch` columns from a `ProfileSource` (lib/profile) instead.
 */
export interface ModelSample {
  threadId: bigint;
  interpreterId: number;
  /** Absolute time in µs. */
  timestampUs: bigint;
  /** Tachyon status byte (ThreadStatus bits; NodeStatus.InGc). */
  status: number;
  /** Frame indices, innermost first. */
  stack: ArrayLike<number>;
  /**
   * New: the samples this record stands for (a collapsed line's count, a pprof value). The old model repeated such a
   * sample `weight` times; absent means 1.
   */
  weight?: number;
}

/**
 * The old model's meta: the new ProfileMeta without sample types, plus thread names by threadKey().
 * @deprecated Use `ProfileMeta` (lib/profile) and `ProfileSource.threads`.
 */
export interface LegacyProfileMeta {
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
  durationUs?: bigint;
  threadNames?: Map<string, string>;
}

/**
 * The old model's source: samples one object at a time.
 * @deprecated Use `ProfileSource` (lib/profile): columnar batches of typed, weighted samples.
 */
export interface LegacyProfileSource {
  readonly meta: LegacyProfileMeta;
  readonly frames: readonly Frame[];
  samples(): Iterable<ModelSample>;
  readonly sampleCount?: number;
}

/**
 * The old model's sink (ProfileWriter's fast path). `weight` is new: the samples a record stands for (default 1).
 * @deprecated Build with `ProfileBuilder` (lib/profile) or write with `writeProfile` (lib/formats).
 */
export interface ProfileSink extends TickSink {
  writeStack(...tick: [...Parameters<TickSink['writeStack']>, weight?: number]): void;
}

/** A source in both shapes: what the compatibility readers return (the old surface over a new source). */
export type CompatSource = ProfileSource & LegacyProfileSource & { readonly meta: ProfileMeta & LegacyProfileMeta };

export function isModelSource(source: unknown): source is ProfileSource {
  return typeof (source as ProfileSource | undefined)?.batches === 'function';
}

export function isLegacySource(source: unknown): source is LegacyProfileSource {
  return typeof (source as LegacyProfileSource | undefined)?.samples === 'function';
}

export function notASource(): never {
  throw invalidArgument(
    'not a profile source: expected a ProfileSource (batches()) or an old-style source (samples())',
    'a ProfileSource or { meta, frames, samples() }',
  );
}

/** The column a sample's weight comes from: samples/count where the profile has one, else its default type. */
export function weightColumn(meta: ProfileMeta): number {
  const count = sampleCountColumn(meta);
  return count >= 0 ? count : meta.defaultSampleType;
}

/**
 * A new source's records as old samples, one per record (never repeated by value). A record without a time
 * follows its thread's previous one by the nominal interval (the first at the profile's start).
 */
export function* legacySamples(source: ProfileSource, column = weightColumn(source.meta)): Iterable<ModelSample> {
  const interval = Number(source.meta.sampleIntervalUs);
  const start = Number(source.meta.startTimeUs);
  const last = new Map<number, number>();
  for (const b of source.batches()) {
    const weights = b.values[column]!;
    for (let i = 0; i < b.length; i++) {
      const t = b.thread[i]!;
      const thread = source.threads[t]!;
      const time = b.time[i]!;
      const previous = last.get(t);
      const us = Number.isNaN(time) ? (previous === undefined ? start : previous + interval) : Math.round(time);
      last.set(t, us);
      yield {
        threadId: thread.threadId,
        interpreterId: thread.interpreterId,
        timestampUs: BigInt(us),
        status: b.status[i]!,
        stack: source.stacks.toArray(b.stack[i]!),
        weight: weights[i]!,
      };
    }
  }
}

/** Thread names of a new source, by threadKey(), as the old meta carried them. */
export function threadNames(source: ProfileSource): Map<string, string> {
  const names = new Map<string, string>();
  for (const t of source.threads) if (t.name !== undefined) names.set(threadKey(t.threadId, t.interpreterId), t.name);
  return names;
}

/**
 * Gives a new source the old surface in place: `samples()` (weights from `column`) and `meta.threadNames`.
 * The tables stay live, so a streaming source keeps streaming.
 */
export function withLegacyView<S extends ProfileSource>(
  source: S,
  column = weightColumn(source.meta),
): S & CompatSource {
  if (!Object.prototype.hasOwnProperty.call(source.meta, 'threadNames'))
    Object.defineProperty(source.meta, 'threadNames', { get: () => threadNames(source), enumerable: false });
  return Object.assign(source, { samples: () => legacySamples(source, column) });
}
