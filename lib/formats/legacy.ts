/**
 * The tick-stream sources of lib/convert (one object per tick) seen as model
 * sources: two sample types, samples/count (1 per tick) and the tick's real
 * time (the gap to its thread's next tick, lib/profile/gaps.ts). Used for the
 * formats whose adapters still read through lib/convert.
 */
import type { ProfileSource as TickSource } from '../convert/model';
import { FrameTable, GapWeigher, LabelSets, StackTable, ThreadTable, newBatch, SampleTypes, threadKey, type ProfileSource, type SampleBatch, type SampleType } from '../profile/index';

const ROWS = 8192;

export function fromTickSource(ticks: TickSource & { close?(): void }, timeType: SampleType = SampleTypes.wall): ProfileSource {
  const stacks = new StackTable();
  const frames = new FrameTable();
  const threads = new ThreadTable();
  const labelSets = new LabelSets();
  const names = ticks.meta.threadNames;
  const meta = {
    sampleTypes: [SampleTypes.samples, timeType],
    defaultSampleType: 0,
    startTimeUs: ticks.meta.startTimeUs,
    sampleIntervalUs: ticks.meta.sampleIntervalUs,
    durationUs: ticks.meta.durationUs,
  };
  return {
    meta,
    get frames() {
      return frames.list;
    },
    stacks,
    get threads() {
      return threads.list;
    },
    get labelSets() {
      return labelSets.list;
    },
    sampleCount: ticks.sampleCount,
    *batches(): Iterable<SampleBatch> {
      const frameMap: number[] = [];
      const ready: SampleBatch[] = [];
      let batch = newBatch(ROWS, 2);
      interface Row {
        stack: number;
        thread: number;
        time: number;
        status: number;
      }
      const weigher = new GapWeigher<Row>(Number(ticks.meta.sampleIntervalUs), (row, gapNs) => {
        const i = batch.length++;
        batch.stack[i] = row.stack;
        batch.thread[i] = row.thread;
        batch.time[i] = row.time;
        batch.status[i] = row.status;
        batch.values[0]![i] = 1;
        batch.values[1]![i] = gapNs;
        batch.labels[i] = 0;
        if (batch.length === ROWS) {
          ready.push(batch);
          batch = newBatch(ROWS, 2);
        }
      });
      let ids = new Uint32Array(256);
      for (const s of ticks.samples()) {
        const depth = s.stack.length;
        if (ids.length < depth) ids = new Uint32Array(depth * 2);
        for (let k = 0; k < depth; k++) {
          const from = s.stack[k]!;
          let to = frameMap[from];
          if (to === undefined) {
            const frame = ticks.frames[from];
            if (frame === undefined) throw new RangeError(`sample names frame ${from}, but the source has ${ticks.frames.length}`);
            to = frameMap[from] = frames.intern(frame);
          }
          ids[k] = to;
        }
        const key = s.interpreterId === 0 ? s.threadId.toString() : `${s.threadId}@${s.interpreterId}`;
        const thread = threads.intern(s.threadId, s.interpreterId, names?.get(key));
        weigher.push(thread, Number(s.timestampUs), { stack: stacks.intern(ids, depth), thread, time: Number(s.timestampUs), status: s.status });
        while (ready.length > 0) yield ready.shift()!;
      }
      weigher.flush();
      while (ready.length > 0) yield ready.shift()!;
      if (batch.length > 0) yield batch;
    },
    close: () => ticks.close?.(),
  };
}

/**
 * Adapters over lib/convert's readers and writers, for formats whose own
 * adapter has not replaced them yet: reading goes through fromTickSource,
 * writing through a tick stream of the samples/count column.
 */
import { createTachyonSink, openTachyon } from '../convert/tachyon';
import { ErrorCode, ProfpackError } from '../errors';
import type { Sample as TickSample } from '../convert/model';
import type { FormatAdapter, FormatName, WriteTarget } from './adapter';


/** A model source as lib/convert's tick stream: each record repeated by its samples/count value. */
export function toTickSource(source: ProfileSource): TickSource {
  const counts = source.meta.sampleTypes.findIndex((t) => t.unit === 'count');
  if (counts < 0) throw new ProfpackError('this output holds samples; the profile has no count sample type', { code: ErrorCode.CONVERT_SAMPLE_TYPE, expected: 'a samples/count sample type' });
  return {
    meta: { startTimeUs: source.meta.startTimeUs, sampleIntervalUs: source.meta.sampleIntervalUs, durationUs: source.meta.durationUs, threadNames: new Map(source.threads.filter((t) => t.name !== undefined).map((t) => [threadKey(t.threadId, t.interpreterId), t.name!])) },
    get frames() {
      return source.frames;
    },
    sampleCount: source.sampleCount,
    *samples(): Iterable<TickSample> {
      for (const b of source.batches()) {
        for (let i = 0; i < b.length; i++) {
          const t = source.threads[b.thread[i]!]!;
          const stack = source.stacks.toArray(b.stack[i]!);
          const n = b.values[counts]![i]!;
          for (let k = 0; k < n; k++) yield { threadId: t.threadId, interpreterId: t.interpreterId, timestampUs: BigInt(Math.round(b.time[i]!)), status: b.status[i]!, stack };
        }
      }
    },
  };
}

function legacy(name: FormatName, title: string, extensions: string[], read: FormatAdapter['read'], write?: (source: ProfileSource, target: WriteTarget, options: Parameters<NonNullable<FormatAdapter['write']>>[2]) => void, detect: (head: Uint8Array) => boolean = () => false): FormatAdapter {
  return { name, title, extensions, detect, read, write };
}

const isTachyon = (head: Uint8Array) => {
  const magic = String.fromCharCode(...head.subarray(0, 4));
  return magic === 'HCAT' || magic === 'TACH';
};
export const legacyAdapters: Partial<Record<FormatName, FormatAdapter>> = {
  tachyon: legacy('tachyon', 'Tachyon', ['.tach', '.tachyon', '.bin'], (input) => fromTickSource(openTachyon(input.path ?? input.bytes!)), (source, target, options) => {
    const ticks = toTickSource(source);
    const sink = createTachyonSink(target.path, { sampleIntervalUs: source.meta.sampleIntervalUs, startTimeUs: source.meta.startTimeUs, compression: options.compression ?? 'zstd' });
    try {
      const ids: number[] = [];
      for (const s of ticks.samples()) sink.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, Array.from(s.stack, (f) => (ids[f] ??= sink.internFrame(source.frames[f]!))));
      sink.finalize();
    } catch (err) {
      sink.close();
      throw err;
    }
  }, isTachyon),
};
