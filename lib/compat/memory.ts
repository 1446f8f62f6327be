/**
 * MemoryProfile and copyProfile of the old tick model, now over ProfileBuilder: a MemoryProfile is an old-style
 * source and sink and a new ProfileSource at once, so it goes to writeProfile, convert's writers and queries as is.
 */
import { invalidArgument } from '../errors';
import {
  ProfileBuilder,
  SampleTypes,
  gapsToNext,
  threadKey,
  type Frame,
  type ProfileMeta,
  type ProfileSource,
  type SampleBatch,
} from '../profile/index';
import {
  isLegacySource,
  isModelSource,
  legacySamples,
  notASource,
  threadNames,
  type LegacyProfileMeta,
  type LegacyProfileSource,
  type ModelSample,
  type ProfileSink,
} from './legacy';

/**
 * An in-memory tick profile: a source and a sink at once. Frames are deduplicated on all 7 fields.
 *
 * What changed: samples are held as ProfileBuilder columns (sample types samples/count and wall/nanoseconds, the
 * latter each sample's gap to its thread's next), not as objects; `sampleList` is a fresh array on each read;
 * `writeStack` takes an optional weight (a record standing for that many samples) instead of repeated calls.
 * @deprecated Use `ProfileBuilder` (lib/profile), or `readProfile` / `openProfile` (lib/formats) to read a file.
 */
export class MemoryProfile implements ProfileSource, LegacyProfileSource, ProfileSink {
  readonly meta: ProfileMeta & LegacyProfileMeta;
  private readonly builder: ProfileBuilder;
  /** Rows whose wall column is up to date (it depends on the thread's next sample). */
  private weighed = 0;

  constructor(meta: LegacyProfileMeta = { startTimeUs: 0n, sampleIntervalUs: 1000n }) {
    this.meta = {
      startTimeUs: meta.startTimeUs,
      sampleIntervalUs: meta.sampleIntervalUs,
      sampleTypes: [SampleTypes.samples, SampleTypes.wall],
      defaultSampleType: 0,
    };
    if (meta.durationUs !== undefined) this.meta.durationUs = meta.durationUs;
    if (meta.threadNames !== undefined) this.meta.threadNames = new Map(meta.threadNames);
    this.builder = new ProfileBuilder(this.meta);
  }

  get frames(): readonly Frame[] {
    return this.builder.frames;
  }

  get stacks() {
    return this.builder.stacks;
  }

  get threads() {
    return this.builder.threads;
  }

  get labelSets() {
    return this.builder.labelSets;
  }

  get sampleCount(): number {
    return this.builder.sampleCount;
  }

  /** The samples as old-style objects: a new array on each read (adding to it adds nothing to the profile). */
  get sampleList(): ModelSample[] {
    return Array.from(this.samples());
  }

  internFrame(frame: Frame): number {
    return this.builder.internFrame(frame);
  }

  writeStack(
    threadId: bigint,
    interpreterId: number,
    timestampUs: bigint,
    status: number,
    frameIds: ArrayLike<number>,
    weight = 1,
  ): void {
    const frames = this.builder.frames.length;
    for (let i = 0; i < frameIds.length; i++)
      if (!(frameIds[i]! >= 0 && frameIds[i]! < frames))
        throw invalidArgument(`the stack names frame ${frameIds[i]}, but the profile has ${frames}`, 'interned frames');
    if (!(weight >= 0 && Number.isFinite(weight)))
      throw invalidArgument(`a sample weighs ${weight}`, 'a finite non-negative weight');
    const name = this.meta.threadNames?.get(threadKey(threadId, interpreterId));
    const thread = this.builder.internThread(threadId, interpreterId, name);
    this.builder.add(this.builder.stacks.intern(frameIds), thread, Number(timestampUs), status, [weight, 0]);
  }

  *batches(): Iterable<SampleBatch> {
    if (this.weighed !== this.builder.sampleCount) {
      // The views write through to the builder's columns.
      const all = this.builder.all();
      gapsToNext(all.thread, all.time, all.length, Number(this.meta.sampleIntervalUs), all.values[1]!);
      this.weighed = all.length;
    }
    yield* this.builder.batches();
  }

  samples(): Iterable<ModelSample> {
    return legacySamples(this, 0);
  }

  /** Copies every sample of a source, old-style or new (frames re-interned, so indices are this profile's). */
  static from(source: LegacyProfileSource | ProfileSource): MemoryProfile {
    const meta = source.meta as LegacyProfileMeta;
    const names = isModelSource(source) ? threadNames(source) : meta.threadNames;
    const out = new MemoryProfile({ ...meta, threadNames: names });
    copyProfile(source, out);
    return out;
  }
}

/**
 * Streams a source into a sink, interning each frame once; returns the records copied. A new ProfileSource is read
 * through its samples/count column (else its default type) as each record's weight, passed as writeStack's sixth
 * argument.
 * @deprecated Use `writeProfile` / `convert` (lib/formats), or ProfileBuilder's tables for in-memory copies.
 */
export function copyProfile(
  source: LegacyProfileSource | ProfileSource,
  sink: ProfileSink,
  onSample?: (done: number) => void,
): number {
  const samples = isLegacySource(source)
    ? source.samples()
    : isModelSource(source)
      ? legacySamples(source)
      : notASource();
  const remap: number[] = [];
  let ids = new Uint32Array(64);
  let count = 0;
  for (const sample of samples) {
    const depth = sample.stack.length;
    if (ids.length < depth) ids = new Uint32Array(depth * 2);
    for (let i = 0; i < depth; i++) {
      const from = sample.stack[i]!;
      let to = remap[from];
      if (to === undefined) {
        const frame = source.frames[from];
        if (frame === undefined)
          throw invalidArgument(`a sample names frame ${from}, but the source has ${source.frames.length}`, 'frames');
        to = remap[from] = sink.internFrame(frame);
      }
      ids[i] = to;
    }
    const s = sample;
    sink.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, ids.subarray(0, depth), s.weight ?? 1);
    count++;
    if (onSample !== undefined && (count & 1023) === 0) onSample(count);
  }
  return count;
}
