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
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { MAX_STACK_DEPTH, RECORD_PREFIX_SIZE, WRITE_BUFFER_SIZE } from '../format';
import { ByteSink, ByteSource } from './bytes';
import { BLOCK_COLUMNS, BLOCK_MAX_SAMPLES, MAX_PREDICT_THREADS, BlockColumnIndex as Col, BlockKind, THREAD_DEFINITION_SIZE, TIME_LOW_BITS, TIME_LOW_MASK } from './format';
import { PredictCoder, PredictDecoder } from './predict';
import { RecentStackCoder, RecentStackDecoder } from './recent';
import { StackPath, StackTableDecoder, type StackTableSinks, type StackTableSources } from './stacktable';

const U64 = 1n << 64n;
const U64_MASK = U64 - 1n;
const I64_HALF = 1n << 63n;

export type StackCoding = 'predict' | 'stacktable';

export function blockKindOf(coding: StackCoding): BlockKind {
  return coding === 'predict' ? BlockKind.Predict : BlockKind.StackTableRecent;
}

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

function toTimestamp(value: number | bigint): number | bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new ProfpackError(`timestamp ${value} is not a u64 integer`, { code: ErrorCode.INVALID_ARGUMENT, expected: 'an integer 0..2^64-1' });
    }
    return value;
  }
  if (value < 0n || value > U64_MASK) {
    throw new ProfpackError(`timestamp ${value} is not a u64`, { code: ErrorCode.INVALID_ARGUMENT, expected: 'an integer 0..2^64-1' });
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
   * Adds one sample. `stack` is innermost first and at most 256 frames (the
   * caller applies version 1's cut of the outermost frames).
   */
  add(threadId: bigint, interpreterId: number, timestampUs: number | bigint, status: number, stack: ArrayLike<number>): void {
    if (stack.length > MAX_STACK_DEPTH) {
      throw new ProfpackError(`stack of ${stack.length} frames exceeds the limit of ${MAX_STACK_DEPTH}`, { code: ErrorCode.INVALID_ARGUMENT, expected: `at most ${MAX_STACK_DEPTH} frames` });
    }
    const now = toTimestamp(timestampUs);
    const cols = this.columns;
    const threadDefs = cols[Col.threadDefinitions]!;
    let byInterpreter = this.threads.get(threadId);
    let thread = byInterpreter?.get(interpreterId);
    if (thread === undefined) {
      if (threadId < 0n || threadId > U64_MASK || !Number.isInteger(interpreterId) || interpreterId < 0 || interpreterId > 0xffff_ffff) {
        throw new ProfpackError(`thread ${threadId} / interpreter ${interpreterId} does not fit u64 / u32`, { code: ErrorCode.INVALID_ARGUMENT });
      }
      if (this.kind === BlockKind.Predict && this.threadTotal >= MAX_PREDICT_THREADS) this.leavePrediction();
      thread = { index: this.threadTotal++, last: this.start, predict: this.kind === BlockKind.Predict ? new PredictCoder() : null, path: this.kind === BlockKind.Predict ? null : new StackPath() };
      if (byInterpreter === undefined) this.threads.set(threadId, (byInterpreter = new Map()));
      byInterpreter.set(interpreterId, thread);
      threadDefs.reserve(THREAD_DEFINITION_SIZE);
      const view = new DataView(threadDefs.bytes.buffer, threadDefs.bytes.byteOffset + threadDefs.length, THREAD_DEFINITION_SIZE);
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
  addMany(threadIds: BigUint64Array, interpreterIds: Uint32Array, timestamps: BigUint64Array, statuses: Uint8Array, stackEnds: Uint32Array, frames: Uint32Array): void {
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
    this.blockCount++;
    this.onBlock(block);
  }
}

interface ReaderThread {
  threadId: bigint;
  interpreterId: number;
  last: number | bigint;
  predict: PredictDecoder | null;
}

/**
 * Decodes the blocks of a version-2 sample region. `base` is the region's
 * offset for error offsets (64 when the region is stored raw; for a zstd
 * region, offsets count from 64 in the decompressed bytes).
 */
export class SampleBlockReader {
  private readonly threads: ReaderThread[] = [];
  private readonly stackTable = new StackTableDecoder();
  private readonly recent = new RecentStackDecoder();
  private readonly stack = new Uint32Array(MAX_STACK_DEPTH);
  private readonly interval: number | bigint;
  private readonly start: number | bigint;
  samplesDecoded = 0;
  private predictThreads = 0;
  /** Index of the thread of the sample being delivered. */
  lastThreadIndex = 0;

  constructor(options: { sampleIntervalUs: number | bigint; startTimeUs: number | bigint }) {
    this.interval = toTimestamp(options.sampleIntervalUs);
    this.start = toTimestamp(options.startTimeUs);
  }

  get threadCount(): number {
    return this.threads.length;
  }

  /**
   * Calls `onSample` for every sample of the region, in file order. The
   * `stack` array is reused between calls: copy it to keep it.
   */
  decodeRegion(
    region: Uint8Array,
    base: number,
    onSample: (threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, stack: Uint32Array, depth: number) => void,
  ): void {
    let pos = 0;
    while (pos < region.length) pos = this.decodeBlock(region, base, pos, onSample);
  }

  /**
   * Decodes the one block that starts at `pos` in the region and returns
   * where the next one starts, so a caller can pull samples a block at a
   * time (ProfileReader.samples()) with the state kept between calls.
   */
  decodeBlock(
    region: Uint8Array,
    base: number,
    pos: number,
    onSample: (threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, stack: Uint32Array, depth: number) => void,
  ): number {
    const src = new ByteSource(region, pos, region.length, base);
    const stack = this.stack;
    const interval = this.interval;
    const blockAt = src.pos;
    if (src.remaining() < RECORD_PREFIX_SIZE) {
      throw src.fail(ErrorCode.V2_TRUNCATED, `${src.remaining()} trailing bytes cannot hold a record prefix`, `${RECORD_PREFIX_SIZE} bytes`);
    }
    for (let i = 0; i < RECORD_PREFIX_SIZE - 1; i++) {
      if (region[src.pos + i] !== 0) throw src.fail(ErrorCode.V2_BAD_BLOCK, 'a sample block names a thread in its record prefix', 'thread_id 0 and interpreter_id 0', src.pos + i);
    }
    const kind = region[src.pos + RECORD_PREFIX_SIZE - 1]!;
    if (kind !== BlockKind.Predict && kind !== BlockKind.StackTable && kind !== BlockKind.StackTableRecent) {
      throw src.fail(ErrorCode.V2_BAD_BLOCK, `unknown record kind ${kind} in a version-2 sample region`, `${BlockKind.Predict} (predict), ${BlockKind.StackTable} or ${BlockKind.StackTableRecent} (stack table)`, src.pos + RECORD_PREFIX_SIZE - 1);
    }
    src.pos += RECORD_PREFIX_SIZE;
    const count = src.uvarint32();
    const lengths: number[] = [];
    for (let c = 0; c < BLOCK_COLUMNS.length; c++) lengths.push(src.uvarint32());
    const total = lengths.reduce((a, b) => a + b, 0);
    if (total > src.remaining()) {
      throw src.fail(ErrorCode.V2_TRUNCATED, `block columns need ${total} bytes but ${src.remaining()} are left`, `at most ${src.remaining()} bytes`, blockAt);
    }
    for (const fixed of kind === BlockKind.Predict ? [Col.deltas, Col.statuses] : [Col.deltas, Col.statuses, Col.stacks]) {
      if (lengths[fixed] !== count) {
        throw src.fail(ErrorCode.V2_BAD_BLOCK, `block of ${count} samples has a ${BLOCK_COLUMNS[fixed]} column of ${lengths[fixed]} bytes`, `${count} bytes (one per sample)`, blockAt);
      }
    }
    const cols: ByteSource[] = [];
    let at = src.pos;
    for (const length of lengths) {
      cols.push(new ByteSource(region, at, at + length, base));
      at += length;
    }
    const threadsCol = cols[Col.threads]!;
    const threadDefs = cols[Col.threadDefinitions]!;
    const deltas = cols[Col.deltas]!;
    const deltasHigh = cols[Col.deltasHigh]!;
    const statuses = cols[Col.statuses]!;
    const stacks = cols[Col.stacks]!;
    const stackSources: StackTableSources = { stacks, stacksHigh: cols[Col.stacksHigh]!, parents: cols[Col.parents]!, parentsHigh: cols[Col.parentsHigh]!, stackFrames: cols[Col.stackFrames]! };
    for (let s = 0; s < count; s++) {
      const threadAt = threadsCol.pos;
      const index = threadsCol.uvarint32();
      let thread = this.threads[index];
      if (thread === undefined) {
        if (index !== this.threads.length) {
          throw threadsCol.fail(ErrorCode.V2_UNDEFINED_THREAD, `sample names thread ${index} but only ${this.threads.length} are defined`, `a thread index of at most ${this.threads.length}`, threadAt);
        }
        if (threadDefs.remaining() < THREAD_DEFINITION_SIZE) {
          throw threadDefs.fail(ErrorCode.V2_TRUNCATED, 'thread definition cut off by the end of its column', `${THREAD_DEFINITION_SIZE} bytes`);
        }
        const view = new DataView(region.buffer, region.byteOffset + threadDefs.pos, THREAD_DEFINITION_SIZE);
        thread = { threadId: view.getBigUint64(0, true), interpreterId: view.getUint32(8, true), last: this.start, predict: null };
        threadDefs.pos += THREAD_DEFINITION_SIZE;
        this.threads.push(thread);
      }
      let depth: number;
      if (kind === BlockKind.Predict) {
        if (thread.predict === null) {
          // Allocated on the thread's first predicted sample, and capped: 115 KiB each.
          if (this.predictThreads >= MAX_PREDICT_THREADS) {
            throw threadsCol.fail(ErrorCode.V2_LIMIT, `more than ${MAX_PREDICT_THREADS} threads use stack prediction`, `at most ${MAX_PREDICT_THREADS} predicted threads`, threadAt);
          }
          thread.predict = new PredictDecoder();
          this.predictThreads++;
        }
        depth = thread.predict.decode(stacks, stack);
      } else if (kind === BlockKind.StackTableRecent) {
        depth = this.recent.decode(stackSources, stack);
      } else {
        depth = this.stackTable.decode(stackSources, stack);
      }
      // Time code: zigzag(i64(delta − interval)); numbers while they stay exact.
      const low = region[deltas.pos++]!; // the column holds exactly one byte per sample (checked above)
      if (low > TIME_LOW_MASK) throw deltas.fail(ErrorCode.V2_BAD_BLOCK, `time code low part ${low} exceeds ${TIME_LOW_MASK}`, `0..${TIME_LOW_MASK}`, deltas.pos - 1);
      const h0 = deltasHigh.pos < deltasHigh.end ? region[deltasHigh.pos]! : 0x80;
      let now: number | bigint;
      const last = thread.last;
      const lastPlusInterval = typeof last === 'number' && typeof interval === 'number' ? last + interval : Infinity;
      if (h0 < 0x80 && lastPlusInterval <= Number.MAX_SAFE_INTEGER) {
        deltasHigh.pos++;
        const zz = h0 * (TIME_LOW_MASK + 1) + low;
        now = lastPlusInterval + (zz & 1 ? -(zz + 1) / 2 : zz / 2);
      } else {
        now = -1;
      }
      if (now < 0) {
        if (h0 < 0x80 && lastPlusInterval <= Number.MAX_SAFE_INTEGER) deltasHigh.pos--;
        const highAt = deltasHigh.pos;
        const high = deltasHigh.uvarint64();
        if (high > U64_MASK >> BigInt(TIME_LOW_BITS)) {
          throw deltasHigh.fail(ErrorCode.V2_BAD_BLOCK, `time code high part ${high} makes the code exceed u64`, `at most ${U64_MASK >> BigInt(TIME_LOW_BITS)}`, highAt);
        }
        const zz = (high << BigInt(TIME_LOW_BITS)) | BigInt(low);
        const x = zz & 1n ? -((zz + 1n) >> 1n) : zz >> 1n;
        const full = (BigInt(last) + BigInt(interval) + x) & U64_MASK;
        now = full <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(full) : full;
      }
      thread.last = now;
      const status = statuses.u8('status');
      this.samplesDecoded++;
      this.lastThreadIndex = index;
      onSample(thread.threadId, thread.interpreterId, typeof now === 'number' ? BigInt(now) : now, status, stack, depth);
    }
    for (let c = 0; c < cols.length; c++) {
      const col = cols[c]!;
      if (col.remaining() !== 0) {
        throw col.fail(ErrorCode.V2_BAD_BLOCK, `${col.remaining()} bytes left over in the ${BLOCK_COLUMNS[c]} column of a block`, 'every column used up by the block’s samples');
      }
    }
    return at;
  }
}
