/**
 * The Tachyon adapter: CPython 3.15's profile format (version 1, byte for
 * byte) and profpack's version 2, which carries the whole model (sample
 * types, value columns, labels: docs/format-v2.md §8).
 *
 * Version 1 holds ticks: one sample is one tick of the nominal interval. A
 * source goes to version 1 only when a samples/count column says how many
 * ticks each record is, in whole numbers and at most MAX_VERSION1_TICKS in
 * all (written as REPEAT runs by ProfileWriter's fast path); anything else is
 * refused with ERR_TACHYON_V1_WEIGHTED, naming version 2.
 */
import { defaultCompression } from '../../tachyon/index';
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError } from '../../errors';
import {
  MAX_STACK_DEPTH,
  ModelWriter,
  ProfileWriter,
  ProfilingMode,
  V2_MAX_STACK_DEPTH,
  hasPlaceholderHeader,
  hasTachyonMagic,
} from '../../tachyon/index';
import {
  batchSamples,
  chooseSampleType,
  sampleCountColumn,
  sampleTypeName,
  type Frame,
  type ProfileSource,
} from '../../profile/index';
import type { FormatAdapter, WriteOptions, WriteTarget } from '../adapter';
import { DroppedLabels } from '../io';
import { readTachyon } from './read';
export { tachyonRecordedBy } from './read';
import { encodeRecordedBy } from '../../recorded-by';

/** Ticks a version-1 file may be given in all: each is a sample CPython's replay builds a frame list for. */
export const MAX_VERSION1_TICKS = 50_000_000;

function weighted(message: string): ProfpackError {
  return new ProfpackError(
    `${message}; Tachyon version 1 holds one tick per sample: write format version 2 (version: 2) to keep the values`,
    {
      code: ErrorCode.TACHYON_V1_WEIGHTED,
      expected: 'a samples/count column of whole tick counts, or format version 2',
    },
  );
}

/** The header mode a profile's time column suggests: CPU time → cpu, wall time → wall, else unknown. */
function modeOf(source: ProfileSource): number | null {
  const types = source.meta.sampleTypes.map((t) => t.type);
  if (types.includes('wall')) return ProfilingMode.Wall;
  if (types.includes('cpu')) return ProfilingMode.Cpu;
  return null;
}

function frameSpec(f: Frame) {
  return {
    filename: f.filename,
    funcname: f.funcname,
    lineno: f.lineno,
    endLineno: f.endLineno,
    column: f.column,
    endColumn: f.endColumn,
    opcode: f.opcode,
  };
}

/** Source frame id → writer frame id, and a stack's frames as writer ids (innermost first) with a small cache. */
class StackMapper {
  private readonly frameIds: number[] = [];
  private readonly scratch = { buffer: new Uint32Array(256) };
  private readonly cacheKeys = new Int32Array(4096).fill(-1);
  private readonly cacheValues: Uint32Array[] = [];
  /** Distinct stacks deeper than the file holds (the writer drops their outermost frames). */
  deepStacks = 0;

  constructor(
    private readonly source: ProfileSource,
    private readonly intern: (f: Frame) => number,
    /** The file's stack limit: version 1's 256 (CPython's), version 2's 4,096. */
    readonly maxDepth: number,
  ) {}

  stack(id: number): Uint32Array {
    const slot = id & 4095;
    if (this.cacheKeys[slot] === id) return this.cacheValues[slot]!;
    const depth = this.source.stacks.frames(id, this.scratch);
    if (depth > this.maxDepth) this.deepStacks++;
    const out = new Uint32Array(depth);
    const buf = this.scratch.buffer;
    for (let k = 0; k < depth; k++) {
      const f = buf[k]!;
      let w = this.frameIds[f];
      if (w === undefined) w = this.frameIds[f] = this.intern(this.source.frames[f]!);
      out[k] = w;
    }
    this.cacheKeys[slot] = id;
    this.cacheValues[slot] = out;
    return out;
  }
}

/** What the writing could not keep, for the caller to show. */
function warnLosses(mapper: StackMapper, source: ProfileSource, version: 1 | 2, options: WriteOptions): void {
  if (mapper.deepStacks > 0)
    options.onWarning?.(
      `${mapper.deepStacks} stacks are deeper than ${version === 1 ? "Tachyon's" : "Tachyon version 2's"} ` +
        `${mapper.maxDepth} frames: their outermost frames were dropped`,
    );
  const named = source.threads.filter((t) => t.name !== undefined).length;
  if (version === 1 && named > 0)
    options.onWarning?.(`Tachyon version 1 has no thread names: ${named} dropped (version 2 keeps them)`);
}

function durationSec(source: ProfileSource): number | null {
  const d = source.meta.durationUs;
  return d === undefined || d <= 0n ? null : Number(d) / 1e6;
}

function writeVersion1(source: ProfileSource, path: string, options: WriteOptions): void {
  const types = source.meta.sampleTypes;
  // The ticks: a count column the caller names (--sample-type inuse_objects), else the samples one (samples/count,
  // Datadog's sample/count).
  const named = options.sampleType === undefined ? -1 : chooseSampleType(source.meta, options.sampleType);
  if (named >= 0 && types[named]!.unit !== 'count')
    throw weighted(`${sampleTypeName(types[named]!)} is not a count of samples`);
  const countColumn = named >= 0 ? named : sampleCountColumn(source.meta);
  if (countColumn < 0)
    throw weighted(`the profile measures ${types.map(sampleTypeName).join(', ')} and has no samples/count column`);
  const writer = new ProfileWriter(path, {
    sampleIntervalUs: source.meta.sampleIntervalUs,
    startTimeUs: source.meta.startTimeUs,
    compression: options.compression ?? defaultCompression(),
    mode: modeOf(source),
  });
  finishOrRemove(writer, path, source, () => {
    // What recorded it goes where version 1 keeps it: a string no frame names (lib/recorded-by.ts).
    if (source.meta.recordedBy !== undefined) writer.internString(encodeRecordedBy(source.meta.recordedBy));
    const mapper = new StackMapper(source, (f) => writer.internFrame(frameSpec(f)), MAX_STACK_DEPTH);
    const interval = Number(source.meta.sampleIntervalUs);
    const start = Number(source.meta.startTimeUs);
    const lastTick = new Map<number, number>();
    let ticks = 0;
    const threads = new Set<number>();
    const dropped = new DroppedLabels();
    for (const b of source.batches()) {
      const counts = b.values[countColumn]!;
      for (let i = 0; i < b.length; i++) {
        const n = counts[i]!;
        if (!Number.isInteger(n) || n < 0) throw weighted(`a record counts ${n} samples, not a whole number of ticks`);
        ticks += n;
        if (ticks > MAX_VERSION1_TICKS) throw weighted(`the profile counts more than ${MAX_VERSION1_TICKS} ticks`);
        if (n === 0) continue;
        dropped.note(b.labels[i]!);
        const t = b.thread[i]!;
        threads.add(t);
        const thread = source.threads[t]!;
        const frames = mapper.stack(b.stack[i]!);
        const time = b.time[i]!;
        // Tick k of a record is k intervals after its time; a record without a time follows its thread's last tick.
        let us = Number.isNaN(time) ? (lastTick.has(t) ? lastTick.get(t)! + interval : start) : Math.round(time);
        // Times past 2^53 µs (a float in the model) go to the writer as the u64 they round to.
        for (let k = 0; k < n; k++, us += interval)
          writer.writeStack(
            thread.threadId,
            thread.interpreterId,
            Number.isSafeInteger(us) ? us : BigInt(us),
            b.status[i]!,
            frames,
          );
        lastTick.set(t, us - interval);
      }
    }
    warnLosses(mapper, source, 1, options);
    if (dropped.records > 0)
      options.onWarning?.(
        `Tachyon version 1 has no labels: ${dropped.keys(source.labelSets)} of ${dropped.records} records ` +
          'were dropped (version 2 keeps them)',
      );
    const other = types.filter((_, v) => v !== countColumn).map(sampleTypeName);
    if (other.length > 0)
      options.onWarning?.(`Tachyon version 1 keeps ticks only: ${other.join(', ')} not written (version 2 keeps them)`);
    return { samples: ticks, threads: threads.size };
  });
}

function writeVersion2(source: ProfileSource, path: string, options: WriteOptions): void {
  const m = source.meta;
  const writer = new ModelWriter(path, {
    sampleIntervalUs: m.sampleIntervalUs,
    startTimeUs: m.startTimeUs,
    compression: options.compression ?? defaultCompression(),
    mode: modeOf(source),
    meta: {
      sampleTypes: m.sampleTypes,
      defaultSampleType: m.defaultSampleType,
      periodType: m.periodType,
      period: m.period,
      durationUs: m.durationUs,
      comments: m.comments,
      producer: m.recordedBy === undefined ? undefined : { ...m.recordedBy },
    },
  });
  finishOrRemove(writer, path, source, () => {
    const mapper = new StackMapper(source, (f) => writer.internFrame(frameSpec(f)), V2_MAX_STACK_DEPTH);
    const labelIds: number[] = [];
    // A record may stand for many samples: its samples/count value says how many.
    const countColumn = sampleCountColumn(m);
    let samples = 0;
    const threads = new Set<number>();
    for (const b of source.batches()) {
      samples += batchSamples(b, countColumn);
      for (let i = 0; i < b.length; i++) {
        threads.add(b.thread[i]!);
        const thread = source.threads[b.thread[i]!]!;
        const set = b.labels[i]!;
        let label = labelIds[set];
        if (label === undefined) label = labelIds[set] = writer.internLabels(source.labelSets[set]!);
        writer.writeSample(
          thread.threadId,
          thread.interpreterId,
          b.time[i]!,
          b.status[i]!,
          mapper.stack(b.stack[i]!),
          b.values,
          i,
          label,
        );
      }
    }
    for (const t of source.threads) if (t.name !== undefined) writer.nameThread(t.threadId, t.interpreterId, t.name);
    warnLosses(mapper, source, 2, options);
    return { samples, threads: threads.size };
  });
}

/**
 * Runs `fill` (it writes the samples and returns how many it wrote, over how many threads), then the statistics
 * block and finalize; on any failure the writer is closed and the partial file removed. A Tachyon source's block
 * is kept as its sampler wrote it; another source's rate is samples a second per thread, as CPython's counts
 * sampling passes (each samples every thread) and `record` writes it.
 */
function finishOrRemove(
  writer: {
    setStats(durationSec: number, sampleRate: number, errorRate?: number, missedSamples?: number): void;
    finalize(): unknown;
    close(): void;
  },
  path: string,
  source: ProfileSource,
  fill: () => { samples: number; threads: number },
): void {
  try {
    const written = fill();
    const stats = source.meta.samplerStats;
    const seconds = durationSec(source);
    if (stats !== undefined) writer.setStats(stats.durationSec, stats.sampleRate, stats.errorRate, stats.missedSamples);
    else if (seconds !== null) writer.setStats(seconds, written.samples / Math.max(1, written.threads) / seconds);
    writer.finalize();
  } catch (err) {
    writer.close();
    fs.rmSync(path, { force: true });
    throw err;
  }
}

export const tachyonAdapter: FormatAdapter<'tachyon'> = {
  name: 'tachyon',
  title: 'Tachyon (CPython 3.15 profiling.sampling binary)',
  label: 'Tachyon',
  extensions: ['.tachyon', '.tach', '.bin'],
  // "HCAT" (little-endian) or "TACH" (big-endian) at offset 0; or a writer's zero placeholder header (killed
  // before finalize): its reader then says to recover it.
  detect: (head) => hasTachyonMagic(head) || hasPlaceholderHeader(head),
  read: (input) => readTachyon(input),
  write(source: ProfileSource, target: WriteTarget, options: WriteOptions) {
    const version = options.version ?? 1;
    if (version !== 1 && version !== 2)
      throw new ProfpackError(`Tachyon format version ${String(version)} does not exist`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: '1 or 2',
      });
    if (version === 1) writeVersion1(source, target.path, options);
    else writeVersion2(source, target.path, options);
  },
};
