/**
 * The contract between ProfileWriter (policy, validation, tables, header)
 * and the two sample encoders: the pure-JS one (writer-js.ts) and the native
 * one (writer-native.ts over native/tachyon/writer.h). Both receive samples
 * that are already validated, with 64-bit values split into u32 halves.
 */
import type { PatchableSink } from '../varint/slots';

/** Indices into the counters array both engines keep (CPython's BinaryWriter.get_stats()). */
export const Counter = {
  repeatRecords: 0,
  repeatSamples: 1,
  fullRecords: 2,
  suffixRecords: 3,
  popPushRecords: 4,
  totalSamples: 5,
  framesWritten: 6,
  framesSaved: 7,
  bytesWritten: 8,
  threadCount: 9,
} as const;
export const COUNTER_COUNT = 10;

export interface SampleEngine {
  /** The raw file (header, compressed or raw sample region, tables, footer). */
  readonly output: PatchableSink & { flush(): void };
  /**
   * One thread's sample: frames[start .. start+depth) innermost first, at most
   * 256 of them (the caller has cut deeper stacks), every id already checked.
   */
  writeStack(tidHi: number, tidLo: number, interpreterId: number, tsHi: number, tsLo: number, status: number, frames: ArrayLike<number>, start: number, depth: number): void;
  /**
   * One tick: thread k (id tidWords[2k] low half, tidWords[2k+1] high half) has the
   * stack ids[ends[k-1] .. ends[k]); deeper than 256 is cut. Refuses the
   * whole tick (ERR_TACHYON_WRITE_UNKNOWN_ID / ERR_INVALID_ARGUMENT) before
   * encoding any of it if an end or a kept id (>= frameCount) is wrong.
   */
  writeTick(tsHi: number, tsLo: number, count: number, tidWords: Uint32Array, interpreterIds: Uint32Array, statuses: Uint8Array, ends: Uint32Array, ids: Uint32Array, frameCount: number): void;
  /**
   * Writes every finished record to the file (zstd: ZSTD_e_flush, so they
   * decompress from what is on disk); pending REPEAT runs stay pending.
   */
  flushSamples(): void;
  /** Pending REPEAT runs (threads in first-seen order), the sample buffer, the end of the zstd frame. */
  finishSamples(): void;
  /** Current counters (see Counter). */
  counters(): Float64Array;
  /** Drops everything not yet written (close() without finalize). */
  discard(): void;
}

export interface EngineOptions {
  fd: number;
  compression: 'zstd' | 'none';
  level: number;
  /** Header start time as u32 halves: each thread's first delta is relative to it. */
  startTimeHi: number;
  startTimeLo: number;
  /** Fixed-width fields in the host's byte order, as CPython writes them. */
  littleEndian: boolean;
}
