/**
 * Sample blocks: the records of a version-2 sample region. A block holds up
 * to BLOCK_MAX_SAMPLES samples of any threads, column by column, so zstd sees
 * like next to like (threads with threads, time deltas with time deltas).
 *
 * Block layout (docs/format-v2.md §3):
 *   u64 thread_id = 0, u32 interpreter_id = 0, u8 kind (BlockKind)   — version 1's record prefix
 *   LEB128 sample count n
 *   10 × LEB128 column byte lengths (BLOCK_COLUMNS order)
 *   the 10 columns (format.ts BLOCK_COLUMNS): thread indices, new threads'
 *   definitions, time codes as byte planes, statuses, and the stack coding's
 *   columns (predict.ts / stacktable.ts).
 *
 * Time code = zigzag(i64((delta − sample interval) mod 2^64)), stored as its
 * low 7 bits (`deltas`, one byte) and the rest (`deltasHigh`, LEB128).
 * Times are per thread as in version 1: a thread's first delta is relative to
 * the header's start_time_us, later ones to its previous sample, in u64
 * arithmetic (so a timestamp that goes backwards wraps and comes back).
 *
 * This file holds the writer side and what both sides share; the reader is in
 * block-reader.ts.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { RECORD_PREFIX_SIZE, WRITE_BUFFER_SIZE } from '../format';
import { ByteSink } from './bytes';
import {
  BLOCK_COLUMNS,
  BLOCK_MAX_FRAMES,
  BLOCK_MAX_SAMPLES,
  MAX_PREDICT_THREADS,
  BlockColumnIndex as Col,
  BlockKind,
  blockKindOf,
  type StackCoding,
  THREAD_DEFINITION_SIZE,
  TIME_LOW_BITS,
  TIME_LOW_MASK,
  V2_MAX_STACK_DEPTH,
} from './format';
import { PredictCoder } from './predict';
import { RecentStackCoder } from './recent';
import { StackPath, type StackTableSinks } from './stacktable';

const U64 = 1n << 64n;
export const U64_MASK = U64 - 1n;
const I64_HALF = 1n << 63n;

/** One decoded sample. `stack` is innermost first, as in version 1. */
export interface V2Sample {
  threadId: bigint;
  interpreterId: number;
  timestampUs: bigint;
  status: number;
  stack: Uint32Array;
}

interface WriterThread {
  index: number;
  /** Previous timestamp: a number while it is a safe integer, else a bigint. */
  last: number | bigint;
  predict: PredictCoder | null;
  path: StackPath | null;
}

/** A timestamp or interval argument: a number while it is a safe integer, else a bigint; refused beyond u64. */
export function toTimestamp(value: number | bigint): number | bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new ProfpackError(`timestamp ${value} is not a u64 integer`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'an integer 0..2^64-1',
      });
    }
    return value;
  }
  if (value < 0n || value > U64_MASK) {
    throw new ProfpackError(`timestamp ${value} is not a u64`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'an integer 0..2^64-1',
    });
  }
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** zigzag of i64((now − last − interval) mod 2^64), as a u64 for the deltas column. */
function deltaCode(now: number | bigint, last: number | bigint, interval: number | bigint): number | bigint {
  if (typeof now === 'number' && typeof last === 'number' && typeof interval === 'number') {
    const x = now - last - interval; // exact: every term is a safe integer and |x| < 2^54
    if (Math.abs(x) < 2 ** 51) return x < 0 ? -2 * x - 1 : 2 * x;
  }
  let x = (BigInt(now) - BigInt(last) - BigInt(interval)) & U64_MASK;
  if (x >= I64_HALF) x -= U64;
  return x < 0n ? -2n * x - 1n : 2n * x;
}

/**
 * Collects samples into blocks and hands each finished block to `onBlock`.
 * State (threads, caches, stack table) lives for the whole file.
 */
export class SampleBlockWriter {
  kind: BlockKind;
  private readonly interval: number | bigint;
  private readonly start: number | bigint;
  /** thread_id → interpreter_id → thread (bigint keys compare by value: no string per sample). */
  private readonly threads = new Map<bigint, Map<number, WriterThread>>();
  private threadTotal = 0;
  private stackTable: RecentStackCoder | null;
  private readonly columns = BLOCK_COLUMNS.map(() => new ByteSink(4096));
  private readonly stackSinks: StackTableSinks = {
    stacks: this.columns[Col.stacks]!,
    stacksHigh: this.columns[Col.stacksHigh]!,
    parents: this.columns[Col.parents]!,
    parentsHigh: this.columns[Col.parentsHigh]!,
    stackFrames: this.columns[Col.stackFrames]!,
  };
  private inBlock = 0;
  /** Frames of the pending block's stacks (at most BLOCK_MAX_FRAMES). */
  private inBlockFrames = 0;
  private readonly header = new ByteSink(64);
  /** Samples written in total. */
  sampleCount = 0;
  /** Records (blocks) emitted. */
  blockCount = 0;

  constructor(
    coding: StackCoding,
    options: { sampleIntervalUs: number | bigint; startTimeUs: number | bigint },
    private readonly onBlock: (block: Uint8Array) => void,
    private readonly blockMaxSamples = BLOCK_MAX_SAMPLES,
  ) {
    this.kind = blockKindOf(coding);
    this.interval = toTimestamp(options.sampleIntervalUs);
    this.start = toTimestamp(options.startTimeUs);
    this.stackTable = this.kind === BlockKind.StackTableRecent ? new RecentStackCoder() : null;
  }

  get threadCount(): number {
    return this.threadTotal;
  }

  /**
   * Adds one sample. `stack` is innermost first and at most V2_MAX_STACK_DEPTH
   * frames (the caller cuts deeper stacks to their innermost frames).
   */
  add(
    threadId: bigint,
    interpreterId: number,
    timestampUs: number | bigint,
    status: number,
    stack: ArrayLike<number>,
  ): void {
    if (stack.length > V2_MAX_STACK_DEPTH) {
      throw new ProfpackError(`stack of ${stack.length} frames exceeds the limit of ${V2_MAX_STACK_DEPTH}`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `at most ${V2_MAX_STACK_DEPTH} frames`,
      });
    }
    const now = toTimestamp(timestampUs);
    // Readers refuse a block of more frames: deep stacks end it early (never with stacks of 256 frames or fewer).
    if (this.inBlockFrames + stack.length > BLOCK_MAX_FRAMES) this.flush();
    const cols = this.columns;
    const threadDefs = cols[Col.threadDefinitions]!;
    let byInterpreter = this.threads.get(threadId);
    let thread = byInterpreter?.get(interpreterId);
    if (thread === undefined) {
      if (
        threadId < 0n ||
        threadId > U64_MASK ||
        !Number.isInteger(interpreterId) ||
        interpreterId < 0 ||
        interpreterId > 0xffff_ffff
      ) {
        throw new ProfpackError(`thread ${threadId} / interpreter ${interpreterId} does not fit u64 / u32`, {
          code: ErrorCode.INVALID_ARGUMENT,
        });
      }
      if (this.kind === BlockKind.Predict && this.threadTotal >= MAX_PREDICT_THREADS) this.leavePrediction();
      thread = {
        index: this.threadTotal++,
        last: this.start,
        predict: this.kind === BlockKind.Predict ? new PredictCoder() : null,
        path: this.kind === BlockKind.Predict ? null : new StackPath(),
      };
      if (byInterpreter === undefined) this.threads.set(threadId, (byInterpreter = new Map()));
      byInterpreter.set(interpreterId, thread);
      threadDefs.reserve(THREAD_DEFINITION_SIZE);
      const view = new DataView(
        threadDefs.bytes.buffer,
        threadDefs.bytes.byteOffset + threadDefs.length,
        THREAD_DEFINITION_SIZE,
      );
      view.setBigUint64(0, threadId, true);
      view.setUint32(8, interpreterId, true);
      threadDefs.length += THREAD_DEFINITION_SIZE;
    }
    // Code the stack first: it is the step that can refuse the sample.
    if (thread.predict !== null) thread.predict.encode(stack, cols[Col.stacks]!);
    else this.stackTable!.encode(stack, this.stackSinks, thread.path!);
    cols[Col.threads]!.uvarint(thread.index);
    const code = deltaCode(now, thread.last, this.interval);
    if (typeof code === 'number') {
      cols[Col.deltas]!.u8(code & TIME_LOW_MASK);
      cols[Col.deltasHigh]!.uvarint(Math.floor(code / (TIME_LOW_MASK + 1)));
    } else {
      cols[Col.deltas]!.u8(Number(code & BigInt(TIME_LOW_MASK)));
      cols[Col.deltasHigh]!.uvarint64(code >> BigInt(TIME_LOW_BITS));
    }
    cols[Col.statuses]!.u8(status);
    thread.last = now;
    this.sampleCount++;
    this.inBlockFrames += stack.length;
    if (++this.inBlock >= this.blockMaxSamples || this.pendingBytes() >= WRITE_BUFFER_SIZE) this.flush();
  }

  /**
   * Readers keep prediction state for at most MAX_PREDICT_THREADS threads:
   * the pending block is ended and the rest of the file codes every thread's
   * stacks with the stack table (block_encoder.cc LeavePrediction, byte for byte).
   */
  private leavePrediction(): void {
    this.flush();
    this.kind = BlockKind.StackTableRecent;
    this.stackTable = new RecentStackCoder();
    for (const byInterpreter of this.threads.values()) {
      for (const thread of byInterpreter.values()) {
        thread.predict = null;
        thread.path = new StackPath();
      }
    }
  }

  private pendingBytes(): number {
    let total = 0;
    for (const column of this.columns) total += column.length;
    return total;
  }

  /**
   * A batch in the native encoder's shape: sample k's stack is
   * frames[stackEnds[k-1] .. stackEnds[k]), innermost first.
   */
  addMany(
    threadIds: BigUint64Array,
    interpreterIds: Uint32Array,
    timestamps: BigUint64Array,
    statuses: Uint8Array,
    stackEnds: Uint32Array,
    frames: Uint32Array,
  ): void {
    let from = 0;
    for (let k = 0; k < threadIds.length; k++) {
      const to = stackEnds[k]!;
      this.add(threadIds[k]!, interpreterIds[k]!, timestamps[k]!, statuses[k]!, frames.subarray(from, to));
      from = to;
    }
  }

  /** Emits the pending samples as one block (nothing when there are none). */
  flush(): void {
    if (this.inBlock === 0) return;
    const header = this.header;
    header.clear();
    header.reserve(RECORD_PREFIX_SIZE);
    header.bytes.fill(0, 0, RECORD_PREFIX_SIZE - 1);
    header.length = RECORD_PREFIX_SIZE - 1;
    header.u8(this.kind);
    header.uvarint(this.inBlock);
    let total = 0;
    for (const column of this.columns) {
      header.uvarint(column.length);
      total += column.length;
    }
    const block = new Uint8Array(header.length + total);
    block.set(header.view(), 0);
    let at = header.length;
    for (const column of this.columns) {
      block.set(column.view(), at);
      at += column.length;
      column.clear();
    }
    this.inBlock = 0;
    this.inBlockFrames = 0;
    this.blockCount++;
    this.onBlock(block);
  }
}
