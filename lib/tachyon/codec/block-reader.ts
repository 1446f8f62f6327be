/**
 * The reader of version-2 sample blocks (layout and time codes: blocks.ts, docs/format-v2.md §3): it checks every
 * block's prefix, column lengths and thread definitions and decodes its samples. Kept apart from blocks.ts, which
 * holds the writer and what both sides share: the two grow separately and a reader needs none of the encoders.
 */
import { ErrorCode } from '../../errors';
import { RECORD_PREFIX_SIZE } from '../format';
import { U64_MASK, toTimestamp } from './blocks';
import { ByteSource } from './bytes';
import {
  BLOCK_COLUMNS,
  BLOCK_MAX_FRAMES,
  MAX_PREDICT_THREADS,
  BlockColumnIndex as Col,
  BlockKind,
  THREAD_DEFINITION_SIZE,
  TIME_LOW_BITS,
  TIME_LOW_MASK,
  V2_MAX_STACK_DEPTH,
} from './format';
import { PredictDecoder } from './predict';
import { RecentStackDecoder } from './recent';
import { StackTableDecoder, type StackTableSources } from './stacktable';

/** One decoded sample: its frame ids are `stack[0..depth)`, in an array reused between calls. */
export type OnV2Sample = (
  threadId: bigint,
  interpreterId: number,
  timestampUs: bigint,
  status: number,
  stack: Uint32Array,
  depth: number,
) => void;

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
  private readonly stack = new Uint32Array(V2_MAX_STACK_DEPTH);
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
  decodeRegion(region: Uint8Array, base: number, onSample: OnV2Sample): void {
    let pos = 0;
    while (pos < region.length) pos = this.decodeBlock(region, base, pos, onSample);
  }

  /**
   * Decodes the one block that starts at `pos` in the region and returns
   * where the next one starts, so a caller can pull samples a block at a
   * time (ProfileReader.samples()) with the state kept between calls.
   */
  decodeBlock(region: Uint8Array, base: number, pos: number, onSample: OnV2Sample): number {
    const src = new ByteSource(region, pos, region.length, base);
    const stack = this.stack;
    const interval = this.interval;
    const blockAt = src.pos;
    if (src.remaining() < RECORD_PREFIX_SIZE) {
      throw src.fail(
        ErrorCode.V2_TRUNCATED,
        `${src.remaining()} trailing bytes cannot hold a record prefix`,
        `${RECORD_PREFIX_SIZE} bytes`,
      );
    }
    for (let i = 0; i < RECORD_PREFIX_SIZE - 1; i++) {
      if (region[src.pos + i] !== 0)
        throw src.fail(
          ErrorCode.V2_BAD_BLOCK,
          'a sample block names a thread in its record prefix',
          'thread_id 0 and interpreter_id 0',
          src.pos + i,
        );
    }
    const kind = region[src.pos + RECORD_PREFIX_SIZE - 1]!;
    if (kind !== BlockKind.Predict && kind !== BlockKind.StackTable && kind !== BlockKind.StackTableRecent) {
      throw src.fail(
        ErrorCode.V2_BAD_BLOCK,
        `unknown record kind ${kind} in a version-2 sample region`,
        `${BlockKind.Predict} (predict), ${BlockKind.StackTable} or ${BlockKind.StackTableRecent} (stack table)`,
        src.pos + RECORD_PREFIX_SIZE - 1,
      );
    }
    src.pos += RECORD_PREFIX_SIZE;
    const count = src.uvarint32();
    const lengths: number[] = [];
    for (let c = 0; c < BLOCK_COLUMNS.length; c++) lengths.push(src.uvarint32());
    const total = lengths.reduce((a, b) => a + b, 0);
    if (total > src.remaining()) {
      throw src.fail(
        ErrorCode.V2_TRUNCATED,
        `block columns need ${total} bytes but ${src.remaining()} are left`,
        `at most ${src.remaining()} bytes`,
        blockAt,
      );
    }
    for (const fixed of kind === BlockKind.Predict
      ? [Col.deltas, Col.statuses]
      : [Col.deltas, Col.statuses, Col.stacks]) {
      if (lengths[fixed] !== count) {
        throw src.fail(
          ErrorCode.V2_BAD_BLOCK,
          `block of ${count} samples has a ${BLOCK_COLUMNS[fixed]} column of ${lengths[fixed]} bytes`,
          `${count} bytes (one per sample)`,
          blockAt,
        );
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
    const stackSources: StackTableSources = {
      stacks,
      stacksHigh: cols[Col.stacksHigh]!,
      parents: cols[Col.parents]!,
      parentsHigh: cols[Col.parentsHigh]!,
      stackFrames: cols[Col.stackFrames]!,
    };
    let blockFrames = 0;
    for (let s = 0; s < count; s++) {
      const threadAt = threadsCol.pos;
      const index = threadsCol.uvarint32();
      let thread = this.threads[index];
      if (thread === undefined) {
        if (index !== this.threads.length) {
          throw threadsCol.fail(
            ErrorCode.V2_UNDEFINED_THREAD,
            `sample names thread ${index} but only ${this.threads.length} are defined`,
            `a thread index of at most ${this.threads.length}`,
            threadAt,
          );
        }
        if (threadDefs.remaining() < THREAD_DEFINITION_SIZE) {
          throw threadDefs.fail(
            ErrorCode.V2_TRUNCATED,
            'thread definition cut off by the end of its column',
            `${THREAD_DEFINITION_SIZE} bytes`,
          );
        }
        const view = new DataView(region.buffer, region.byteOffset + threadDefs.pos, THREAD_DEFINITION_SIZE);
        thread = {
          threadId: view.getBigUint64(0, true),
          interpreterId: view.getUint32(8, true),
          last: this.start,
          predict: null,
        };
        threadDefs.pos += THREAD_DEFINITION_SIZE;
        this.threads.push(thread);
      }
      let depth: number;
      const stackAt = stacks.pos;
      if (kind === BlockKind.Predict) {
        if (thread.predict === null) {
          // Allocated on the thread's first predicted sample, and capped: 115 KiB each.
          if (this.predictThreads >= MAX_PREDICT_THREADS) {
            throw threadsCol.fail(
              ErrorCode.V2_LIMIT,
              `more than ${MAX_PREDICT_THREADS} threads use stack prediction`,
              `at most ${MAX_PREDICT_THREADS} predicted threads`,
              threadAt,
            );
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
      blockFrames += depth;
      if (blockFrames > BLOCK_MAX_FRAMES) {
        throw stacks.fail(
          ErrorCode.V2_LIMIT,
          `a block's stacks pass ${BLOCK_MAX_FRAMES} frames`,
          `at most ${BLOCK_MAX_FRAMES} frames in a block (what writers make)`,
          stackAt,
        );
      }
      // Time code: zigzag(i64(delta − interval)); numbers while they stay exact.
      const low = region[deltas.pos++]!; // the column holds exactly one byte per sample (checked above)
      if (low > TIME_LOW_MASK)
        throw deltas.fail(
          ErrorCode.V2_BAD_BLOCK,
          `time code low part ${low} exceeds ${TIME_LOW_MASK}`,
          `0..${TIME_LOW_MASK}`,
          deltas.pos - 1,
        );
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
          throw deltasHigh.fail(
            ErrorCode.V2_BAD_BLOCK,
            `time code high part ${high} makes the code exceed u64`,
            `at most ${U64_MASK >> BigInt(TIME_LOW_BITS)}`,
            highAt,
          );
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
      onSample(
        thread.threadId,
        thread.interpreterId,
        typeof now === 'number' ? BigInt(now) : now,
        status,
        stack,
        depth,
      );
    }
    for (let c = 0; c < cols.length; c++) {
      const col = cols[c]!;
      if (col.remaining() !== 0) {
        throw col.fail(
          ErrorCode.V2_BAD_BLOCK,
          `${col.remaining()} bytes left over in the ${BLOCK_COLUMNS[c]} column of a block`,
          'every column used up by the block’s samples',
        );
      }
    }
    return at;
  }
}
