/**
 * V2FileWriter, the `v2` namespace's version-2 writer, kept for its callers
 * as a thin adapter: ProfileWriter (formatVersion 2) writes every version-2
 * file, and what only V2FileWriter offered (in-memory output, block size,
 * table storage) are ProfileWriter's internal options (WRITER_INTERNALS).
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ByteSink } from '../../byte-sink';
import type { StackCoding } from '../codec/index';
import { V2_MAX_STACK_DEPTH, type FrameTableCoding, type FrameTableEntry } from '../codec/index';
import { WRITER_INTERNALS, type WriterInternals } from './trailer';
import { ProfileWriter } from './writer';
import type { ProfileWriterOptions } from './types';

export interface V2WriterOptions {
  /** How stacks are coded: memtrace's prediction, or the stack table. Default 'stacktable'. */
  stackCoding?: StackCoding;
  sampleIntervalUs: number | bigint;
  startTimeUs?: number | bigint;
  /** The sample region: one zstd frame (default) or raw blocks. */
  compression?: 'zstd' | 'none';
  /** zstd level of the sample region (default 5, CPython's). */
  level?: number;
  /** Store the string and frame tables as zstd frames (default: when compression is zstd). */
  compressTables?: boolean;
  /** zstd level of the tables (written once, at finalize). Default 9. */
  tablesLevel?: number;
  /**
   * Frame-table coding (codec/tables.ts). Default 'columns', the smallest measured; 'mtf' measured larger than 'plain'.
   */
  frameTable?: FrameTableCoding;
  /** Profiling mode 0..4 (−1 or undefined = unknown) and capture-feature mask 0..31. */
  mode?: number;
  captureFeatures?: number;
  /** Samples per block (tests use small blocks to cross block boundaries). */
  blockMaxSamples?: number;
}

export interface V2Stats {
  durationSec: number;
  sampleRate: number;
  errorRate?: number | null;
  missedSamples?: number | null;
}

/** ProfileWriter's options (public and internal) for a V2FileWriter's. */
export function v2WriterOptions(
  options: V2WriterOptions,
  memory?: ByteSink,
): ProfileWriterOptions & { [WRITER_INTERNALS]: WriterInternals } {
  const o = options;
  return {
    sampleIntervalUs: o.sampleIntervalUs,
    startTimeUs: o.startTimeUs,
    compression: o.compression,
    level: o.level,
    mode: o.mode,
    captureFeatures: o.captureFeatures,
    formatVersion: 2,
    stackCoding: o.stackCoding,
    [WRITER_INTERNALS]: {
      memory,
      blockMaxSamples: o.blockMaxSamples,
      compressTables: o.compressTables,
      tablesLevel: o.tablesLevel,
      frameTable: o.frameTable ?? 'columns',
    },
  };
}

/** Writes a version-2 profile. One writer per file; not thread-safe. */
export class V2FileWriter {
  private constructor(
    private readonly writer: ProfileWriter,
    private readonly memory: ByteSink | null,
  ) {}

  static open(path: string, options: V2WriterOptions): V2FileWriter {
    return new V2FileWriter(new ProfileWriter(path, v2WriterOptions(options)), null);
  }

  /** A writer whose finalize() returns the file's bytes. */
  static inMemory(options: V2WriterOptions): V2FileWriter {
    const memory = new ByteSink(1 << 16);
    return new V2FileWriter(new ProfileWriter('<memory>', v2WriterOptions(options, memory)), memory);
  }

  get sampleCount(): number {
    return this.writer.stats.totalSamples;
  }

  private checkOpen(): void {
    const state = this.writer.state;
    if (state !== 'open')
      throw new ProfpackError(`writer is ${state === 'finalized' ? state : 'closed'}`, {
        code: ErrorCode.V2_WRITER_STATE,
      });
  }

  internString(value: string): number {
    this.checkOpen();
    return this.writer.internString(value);
  }

  /** Interns a frame, deduplicated on all 7 stored fields as CPython does. */
  internFrame(
    filename: string,
    funcname: string,
    lineno = -1,
    endLineno = -1,
    column = -1,
    endColumn = -1,
    opcode: number | null = null,
  ): number {
    this.checkOpen();
    return this.writer.internFrame({ filename, funcname, lineno, endLineno, column, endColumn, opcode });
  }

  /** Interns a stored entry (string ids from internString, end positions as deltas). */
  internFrameEntry(entry: FrameTableEntry): number {
    this.checkOpen();
    const e = entry;
    return this.writer.internFrame({
      filename: e.filenameIndex,
      funcname: e.funcnameIndex,
      lineno: e.lineno,
      endLineno: e.lineno === -1 ? -1 : (e.lineno + e.endLinenoDelta) | 0,
      column: e.column,
      endColumn: e.column === -1 ? -1 : (e.column + e.endColumnDelta) | 0,
      opcode: e.opcode,
    });
  }

  /**
   * One sample of one thread. `frameIds` are interned frames, innermost first;
   * beyond V2_MAX_STACK_DEPTH (4,096) the outermost are dropped, as CPython's writer drops them beyond 256.
   */
  writeStack(
    threadId: bigint | number,
    interpreterId: number,
    timestampUs: bigint | number,
    status: number,
    frameIds: ArrayLike<number>,
  ): void {
    this.checkOpen();
    const count = this.writer.frameCount;
    const depth = Math.min(frameIds.length, V2_MAX_STACK_DEPTH);
    for (let i = 0; i < depth; i++) {
      const f = frameIds[i]!;
      if (!(f >= 0 && f < count) || !Number.isInteger(f)) {
        throw new ProfpackError(`frame id ${f} was not interned`, {
          code: ErrorCode.INVALID_ARGUMENT,
          expected: `0..${count - 1}`,
        });
      }
    }
    const ids =
      frameIds instanceof Uint32Array || Array.isArray(frameIds)
        ? (frameIds as Uint32Array | number[])
        : Array.from(frameIds);
    this.writer.writeStack(threadId, interpreterId, timestampUs, status, ids);
  }

  setStats(durationSec: number, sampleRate: number, errorRate?: number | null, missedSamples?: number | null): void {
    this.checkOpen();
    this.writer.setStats(durationSec, sampleRate, errorRate, missedSamples);
  }

  /** Writes everything and the header; returns the bytes for an in-memory writer. */
  finalize(): Uint8Array | undefined {
    this.checkOpen();
    this.writer.finalize();
    return this.memory === null ? undefined : this.memory.take();
  }

  /** Discards the writer without finalizing (the file keeps a zero header). */
  close(): void {
    if (this.writer.state === 'open') this.writer.close();
  }
}
