// The reader's public types: what ProfileReader and its replay hand to callers (CPython's shapes).
import { invalidArgument } from '../../errors';
import type { RecordCounts } from '../format';
import type { Frame } from './tables';

export type { Frame } from './tables';
export type { ProfileInfo } from '../file/index';

export interface ReaderOptions {
  /** CPython refuses a decompressed sample region beyond 1 GiB; the same cap by default. */
  maxDecompressedSize?: number;
  /**
   * A zstd region that decompresses to at most this many bytes is kept in
   * memory after the open-stage check; a larger one is decompressed again,
   * in chunks, by each replay. Default 16 MiB.
   */
  keepDecompressedLimit?: number;
  /** 'native' or 'js'; default: the process backend. */
  backend?: 'native' | 'js';
  /**
   * Buffer sizes of the replay loop (tests use tiny ones so that every
   * resumption path runs): decompressed bytes per zstd step, and the
   * decoder's event / timestamp / node capacities per call, and the size at
   * which the stack trie is rebuilt from the current stacks (default 4 M nodes).
   */
  tuning?: { zstdChunk?: number; events?: number; timestamps?: number; nodes?: number; maxNodes?: number };
}

/** One thread-sample, in file order. */
export interface Sample {
  threadId: bigint;
  interpreterId: number;
  timestampUs: bigint;
  status: number;
  /** Frame-table indices, innermost first (read-only: shared between samples with the same stack). */
  stack: readonly number[];
}

/** CPython's ThreadInfo(thread_id, status, frame_info). */
export interface ThreadInfo {
  readonly threadId: bigint;
  readonly status: number;
  /** Resolved frames, innermost first. */
  readonly frameInfo: readonly Frame[];
}

/** CPython's InterpreterInfo(interpreter_id, threads). */
export interface InterpreterInfo {
  readonly interpreterId: number;
  readonly threads: readonly ThreadInfo[];
}

/**
 * What replay() calls, as CPython's BinaryReader.replay calls collector.collect:
 * one call per sample, or per REPEAT run of equal status (several timestamps).
 * The objects passed are read-only (not frozen, for speed) and may be shared
 * between calls: copy what you keep and modify.
 */
export interface Collector {
  collect(stackFrames: readonly InterpreterInfo[], timestampsUs: bigint[]): void;
}

/**
 * replay()'s collector with `timestamps: 'typed'`: the timestamps arrive as a
 * BigUint64Array view of the reader's own buffer, valid only during the call
 * (`timestampsUs.slice()` keeps a copy). No value is allocated per timestamp.
 */
export interface TypedCollector {
  collect(stackFrames: readonly InterpreterInfo[], timestampsUs: BigUint64Array): void;
}

export interface ReplayOptions {
  /** Called as CPython calls progress_callback: at 0, every 1000 samples, and at the end. */
  onProgress?: (current: number, total: number) => void;
  /**
   * How collect() receives the timestamps: 'array' (default, CPython's
   * shape): a new bigint[] per call; 'typed': a BigUint64Array view valid
   * only during the call (TypedCollector), which skips allocating one bigint
   * per timestamp (most of a replay's cost on a real profile).
   */
  timestamps?: 'array' | 'typed';
}

/** replay()'s option checks, the same for both backends and both format versions. */
export function checkReplayOptions(options: ReplayOptions): void {
  if (options === null || typeof options !== 'object')
    throw invalidArgument('replay(collector, options): options must be an object', 'ReplayOptions');
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function')
    throw invalidArgument('replay(collector, options): onProgress must be a function', 'function');
  if (options.timestamps !== undefined && options.timestamps !== 'array' && options.timestamps !== 'typed') {
    throw invalidArgument(
      `replay(collector, options): timestamps must be "array" or "typed", not ${JSON.stringify(options.timestamps)}`,
      '"array" | "typed"',
    );
  }
}

/** CPython's BinaryReader.get_stats() after a replay. */
export interface ReplayStats extends RecordCounts {
  stackReconstructions: number;
}

/**
 * The most timestamps one collect() call receives: a REPEAT run longer than
 * this (a 4 KB file can declare 20 M samples) is delivered in several calls
 * of the same stack, where CPython makes one (docs/reliability.md).
 */
export const MAX_TIMESTAMPS_PER_COLLECT = 65_536;

function checkSize(options: ReaderOptions, name: 'maxDecompressedSize' | 'keepDecompressedLimit'): void {
  const v = options[name];
  if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)) {
    throw invalidArgument(
      `ReaderOptions.${name} must be a non-negative safe integer, not ${String(v)}`,
      'a non-negative safe integer',
    );
  }
}

/** The same checks on both backends, before anything is opened. */
export function checkReaderOptions(options: ReaderOptions): void {
  if (options === null || typeof options !== 'object')
    throw invalidArgument('ReaderOptions must be an object', 'ReaderOptions');
  checkSize(options, 'maxDecompressedSize');
  checkSize(options, 'keepDecompressedLimit');
  if (options.backend !== undefined && options.backend !== 'native' && options.backend !== 'js') {
    throw invalidArgument(
      `ReaderOptions.backend must be "native" or "js", not ${JSON.stringify(options.backend)}`,
      '"native" | "js"',
    );
  }
}
