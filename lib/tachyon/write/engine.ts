/**
 * The contract between ProfileWriter (policy, validation, tables, header)
 * and the two sample encoders: the pure-JS one (writer-js.ts) and the native
 * one (writer-native.ts over native/tachyon/write/writer.h). Both receive samples
 * that are already validated, with 64-bit values split into u32 halves.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import type { PatchableSink } from '../../varint/slots';
import { MAX_STACK_DEPTH } from '../format';

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

/**
 * The tick check of the contract: every end and every kept id (the first
 * MAX_STACK_DEPTH of a stack) is checked before any thread of the tick is
 * coded, so a refused tick leaves no bytes behind.
 */
export function checkTick(count: number, ends: Uint32Array, ids: Uint32Array, frameCount: number): void {
  let start = 0;
  for (let k = 0; k < count; k++) {
    const end = ends[k]!;
    if (end < start || end > ids.length) {
      throw new ProfpackError(`stackEnds[${k}] = ${end} must not decrease nor pass the ${ids.length} frame ids`, { code: ErrorCode.INVALID_ARGUMENT, expected: 'non-decreasing ends within frameIds' });
    }
    const last = Math.min(end, start + MAX_STACK_DEPTH);
    for (let i = start; i < last; i++) {
      if (ids[i]! >= frameCount) {
        throw new ProfpackError(`frame id ${ids[i]} at index ${i} was not returned by internFrame`, { code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID, expected: `an integer in [0, ${frameCount})` });
      }
    }
    start = end;
  }
}

/** writeTick as one writeStack per thread, after checkTick: for engines that code each stack on its own. */
export function writeTickAsStacks(engine: SampleEngine, tsHi: number, tsLo: number, count: number, tidWords: Uint32Array, interpreterIds: Uint32Array, statuses: Uint8Array, ends: Uint32Array, ids: Uint32Array, frameCount: number): void {
  checkTick(count, ends, ids, frameCount);
  let start = 0;
  for (let k = 0; k < count; k++) {
    const end = ends[k]!;
    const depth = end - start < MAX_STACK_DEPTH ? end - start : MAX_STACK_DEPTH;
    engine.writeStack(tidWords[2 * k + 1]!, tidWords[2 * k]!, interpreterIds[k]!, tsHi, tsLo, statuses[k]!, ids, start, depth);
    start = end;
  }
}
