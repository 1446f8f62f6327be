/**
 * ModelWriter: a version-2 file that carries the profile model (sample
 * types, a value column per type, labels, samples without a time, thread
 * names): ProfileWriter (formatVersion 2) writes the samples' stacks, threads,
 * times and statuses as every version-2 file has them, and the model section
 * (codec/model/section.ts) after the frame table at finalize.
 */
import { defaultCompression } from '../file/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { ModelSectionEncoder, type ModelLabel, type ModelMeta } from '../codec/index';
import { WRITER_INTERNALS, type WriterInternals } from './trailer';
import { ProfileWriter } from './writer';
import type { FrameSpec, ProfileWriterOptions, WriterStats } from './types';

export interface ModelWriterOptions {
  sampleIntervalUs: bigint;
  startTimeUs: bigint;
  compression?: 'zstd' | 'none';
  mode?: number | null;
  backend?: 'native' | 'js';
  meta: ModelMeta;
  /** Tests: samples per block (WriterInternals.blockMaxSamples). */
  blockMaxSamples?: number;
}

export class ModelWriter {
  private readonly writer: ProfileWriter;
  private readonly section: ModelSectionEncoder;
  private readonly startTimeUs: number;
  /** Each thread's last written timestamp, for samples without a time. */
  private readonly lastTime = new Map<string, number>();

  constructor(path: string, options: ModelWriterOptions) {
    this.section = new ModelSectionEncoder(options.meta);
    this.startTimeUs = Number(options.startTimeUs);
    const internals: WriterInternals = { modelSection: this.section, blockMaxSamples: options.blockMaxSamples };
    const writerOptions: ProfileWriterOptions & { [WRITER_INTERNALS]: WriterInternals } = {
      sampleIntervalUs: options.sampleIntervalUs,
      startTimeUs: options.startTimeUs,
      compression: options.compression ?? defaultCompression(),
      mode: options.mode ?? null,
      backend: options.backend,
      formatVersion: 2,
      [WRITER_INTERNALS]: internals,
    };
    this.writer = new ProfileWriter(path, writerOptions);
  }

  get backend(): 'native' | 'js' {
    return this.writer.backend;
  }

  internFrame(frame: FrameSpec): number {
    return this.writer.internFrame(frame);
  }

  internLabels(labels: readonly ModelLabel[]): number {
    return this.section.internLabels(labels);
  }

  nameThread(threadId: bigint, interpreterId: number, name: string): void {
    this.section.nameThread(threadId, interpreterId, name);
  }

  /**
   * One sample: frame ids from internFrame, innermost first (deeper than 4,096,
   * version 2's limit: the outermost are dropped and counted); its values are
   * `values[v][row]`; `timeUs` NaN = none (the thread's previous time is
   * written and the section marks it). Times are whole µs in the region.
   */
  writeSample(
    threadId: bigint,
    interpreterId: number,
    timeUs: number,
    status: number,
    frameIds: Uint32Array,
    values: readonly ArrayLike<number>[],
    row: number,
    labelSet: number,
  ): void {
    const key = interpreterId === 0 ? threadId : `${threadId}@${interpreterId}`;
    const hasTime = !Number.isNaN(timeUs);
    let us: number;
    if (hasTime) {
      us = Math.round(timeUs);
      if (!(us >= 0 && us <= Number.MAX_SAFE_INTEGER)) {
        throw new ProfpackError(`sample time ${timeUs} µs is not a time version 2 can store`, {
          code: ErrorCode.INVALID_ARGUMENT,
          expected: 'a time in µs from 0 to 2^53, or NaN for none',
        });
      }
    } else us = this.lastTime.get(String(key)) ?? this.startTimeUs;
    this.lastTime.set(String(key), us);
    this.writer.writeStack(threadId, interpreterId, us, status, frameIds);
    this.section.add(values, row, labelSet, hasTime);
  }

  setStats(durationSec: number, sampleRate: number, errorRate?: number, missedSamples?: number): void {
    this.writer.setStats(durationSec, sampleRate, errorRate, missedSamples);
  }

  finalize(): WriterStats {
    return this.writer.finalize();
  }

  close(): void {
    this.writer.close();
  }
}
