/** ProfileWriter's public types: its options, CPython's input shapes, the fast path's tick, its stats. */
import type { StackCoding } from '../codec/index';

import type { ProfilingModeName, RecordCounts } from '../format';
export type { ProfilingModeName } from '../format';
export interface ProfileWriterOptions {
  /** Header sample_interval_us (u64). */
  sampleIntervalUs: number | bigint;
  /** Header start_time_us (u64); each thread's first delta is relative to it. Default 0. */
  startTimeUs?: number | bigint;
  /** Default 'zstd' (level 5, CPython's default), as one zstd frame over the sample region. */
  compression?: 'zstd' | 'none';
  /** zstd level; default 5. */
  level?: number;
  /** Profiling mode (0 wall .. 4 exception, or its name); -1 / null / undefined = unknown. */
  mode?: number | ProfilingModeName | null;
  /**
   * Capture-feature mask 0..31 (1 all_threads, 2 native, 4 gc, 8 opcodes, 16 blocking); -1 / null / undefined =
   * unknown.
   */
  captureFeatures?: number | null;
  /** Force one encoder for this writer (default: the process backend). */
  backend?: 'native' | 'js';
  /**
   * Promise that FrameInfo objects (and their location objects) passed to
   * writeSample are never modified afterwards. writeSample then recognises a
   * frame seen at the same depth in the thread's previous sample by identity,
   * without reading it. Default false: frames are compared by value, except
   * deeply frozen ones (frozen frame and location, data properties only),
   * which cannot change and are recognised by identity anyway.
   */
  immutableFrames?: boolean;
  /**
   * 1 (default): CPython 3.15's format, byte for byte. 2: profpack's opt-in
   * extension (docs/format-v2.md), smaller, which CPython 3.15 refuses at
   * open; `downgrade()` rewrites it as version 1.
   */
  formatVersion?: 1 | 2;
  /**
   * Version 2 only: how stacks are coded: 'stacktable' (default, interned
   * stacks; the smaller on every stream measured) or 'predict' (memtrace's
   * cache and prediction).
   */
  stackCoding?: StackCoding;
  /**
   * Calls flush() every this many milliseconds while the event loop turns
   * (an unref'd timer), so a writer killed outright loses at most that much
   * (docs/reliability.md). Default: none. A failing timed flush leaves the
   * writer broken, as a failing flush() does; the next call reports it.
   */
  flushIntervalMs?: number;
  /**
   * Version 1: keep the recovery journal `<path>.journal` at each flush
   * (file/journal.ts), which `recover()` needs for the frames and held-back
   * samples. Default true. Removed by finalize and by close() of a healthy
   * writer; kept after a write error, for recover().
   */
  journal?: boolean;
}

/** CPython's LocationInfo; an element that is not an integer is stored as -1 (absent). */
export interface LocationInfo {
  lineno?: number | bigint | null;
  endLineno?: number | bigint | null;
  colOffset?: number | bigint | null;
  endColOffset?: number | bigint | null;
}

/** CPython's FrameInfo(filename, location, funcname, opcode). */
export interface FrameInfo {
  filename: string;
  funcname: string;
  /** null = no location (all four positions -1); also a [lineno, endLineno, colOffset, endColOffset] tuple. */
  location?: LocationInfo | readonly unknown[] | null;
  /** 0..254; anything else (null, 255, 300, -1) is stored as 255 = none. */
  opcode?: number | bigint | null;
}

/** CPython's ThreadInfo(thread_id, status, frame_info); frames innermost first. */
export interface SampleThreadInfo {
  threadId: number | bigint;
  /** Status bits; only the low 8 bits are stored (as CPython does). */
  status: number | bigint;
  frameInfo: readonly FrameInfo[];
}

/** CPython's InterpreterInfo(interpreter_id, threads). */
export interface SampleInterpreterInfo {
  interpreterId: number | bigint;
  threads: readonly SampleThreadInfo[];
}

/** The frame fields of internFrame: strings or ids from internString. */
export interface FrameSpec {
  filename: string | number;
  funcname: string | number;
  lineno?: number | bigint | null;
  endLineno?: number | bigint | null;
  column?: number | bigint | null;
  endColumn?: number | bigint | null;
  opcode?: number | bigint | null;
}

/**
 * One sampling tick for the fast path: thread k's stack is
 * frameIds[stackEnds[k-1] .. stackEnds[k]) (stackEnds[-1] = 0), innermost first.
 */
export interface StackTick {
  threadIds: BigUint64Array | Float64Array | readonly (number | bigint)[];
  /** One per thread, or one number for all. */
  interpreterIds: Uint32Array | readonly number[] | number;
  /** Status bytes (any integer array: the low 8 bits are kept). */
  statuses: Uint8Array | readonly number[];
  stackEnds: Uint32Array;
  frameIds: Uint32Array;
}

/** CPython's BinaryWriter.get_stats(). */
/** The records written, counted as a reader's replay counts them (RecordCounts), and what the writer saved. */
export interface WriterStats extends RecordCounts {
  totalFramesWritten: number;
  framesSaved: number;
  /** Record bytes before compression (header and tables excluded), as CPython counts them. */
  bytesWritten: number;
  frameCompressionPct: number;
  threadCount: number;
  /**
   * Stacks deeper than the file's cap (version 1: CPython 3.15's 256 frames;
   * version 2: 4,096) whose outermost frames were dropped to keep the innermost
   * ones; profpack's own count (CPython's stats have no such field), so a caller
   * can say how many were cut.
   */
  stacksCut: number;
}

export type WriterState = 'open' | 'broken' | 'finalized' | 'closed';
