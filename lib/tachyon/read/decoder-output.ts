/**
 * What the record decoder (records.ts, native/tachyon/read/reader_records.h) hands replay.ts.
 *
 * Output per call, into buffers the driver owns:
 * - events (EVENT_STRIDE u32 each):
 *   Sample / SamplePart: [kind, threadIndex, node, status, timestampCount, shared]; a
 *     SamplePart is continued by the next Sample/SamplePart of the same batch
 *     (a REPEAT batch cut by a full buffer or the window end); `shared`: how many
 *     bottom frames of the thread's previous stack this stack keeps (a lower bound:
 *     0 when not known), so replay builds its frame list from the previous one
 *     without walking the trie to their common ancestor;
 *   Thread: [kind, interpreterId, threadIdLow, threadIdHigh, 0, 0];
 *   Progress: [kind, replayedLow, replayedHigh, 0, 0, 0] (CPython's progress_callback points);
 * - timestamps (u64, one per sample, in event order);
 * - nodes: (parent, frame) for each node created, ids consecutive from nodeBase.
 */
import type { ErrorCodeValue } from '../../errors';
import { MAX_STACK_DEPTH, RECORD_PREFIX_SIZE } from '../format';

export const EVENT_STRIDE = 6;
export const EventKind = { Sample: 0, SamplePart: 1, Thread: 2, Progress: 3 } as const;
export const DecodeStatus = { Done: 0, NeedMore: 1, OutputFull: 2, Error: 3 } as const;

/** CPython calls progress_callback every 1000 samples. */
export const PROGRESS_INTERVAL = 1000;
/**
 * Largest record other than REPEAT that can pass CPython's checks: 13 + delta 10 + status 1 + two 10-byte counts + 256
 * 10-byte indices.
 */
export const MAX_RECORD_SIZE = RECORD_PREFIX_SIZE + 10 + 1 + 10 + 10 + MAX_STACK_DEPTH * 10;

export interface DecoderConfig {
  littleEndian: boolean;
  startTimeUs: bigint;
  threadCount: number;
  /** Size of the whole (decompressed) sample region. */
  totalSize: number;
  /**
   * Trie size beyond which it is rebuilt from the threads' current stacks at
   * the next call (bounds memory on profiles with millions of distinct stacks).
   */
  maxNodes?: number;
}

/**
 * Default trie bound: 64 k nodes (~2.5 MB native, 0.5 MB for the JS mirror).
 * A replay needs only the threads' current stacks; a trie kept small stays in
 * cache, and on a 1 M-sample profile (1.5 M distinct prefixes) replaying with
 * 256 k was faster and used half the peak memory of a 4 M bound, and 64 k
 * took another 20 MB off the peak at the same speed.
 */
export const DEFAULT_MAX_NODES = 1 << 16;

export interface DecodeOutput {
  events: Uint32Array;
  /** u64 timestamps, written as (low, high) u32 pairs through a Uint32Array view. */
  timestamps: BigUint64Array;
  nodes: Uint32Array;
  /**
   * [status, consumed, eventCount, timestampCount, nodeCount, replayed, errorOffset, trieReset]
   * (positions are offsets in the sample region; trieReset 1: node ids restarted
   * at 1 before this call's nodes, earlier ids are void).
   */
  result: Float64Array;
}

export interface DecodeError {
  code: ErrorCodeValue;
  message: string;
  offset: number;
}

export const Result = {
  status: 0,
  consumed: 1,
  events: 2,
  timestamps: 3,
  nodes: 4,
  replayed: 5,
  errorOffset: 6,
  trieReset: 7,
} as const;
