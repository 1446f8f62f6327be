/**
 * The pure-JS sample encoder: per-thread previous stack, timestamp and
 * pending REPEAT run, and the record choice of CPython 3.15.2's writer
 * (../shared/notes/tachyon-format.md §5). Twin of native/tachyon/write/writer.h.
 */
import {
  MAX_STACK_DEPTH,
  RECORD_PREFIX_SIZE,
  RecordKind,
  REPEAT_BUFFER_SIZE,
  REPEAT_ENTRY_MAX,
  U32_MAX,
} from '../../format';
import {
  COUNTER_COUNT,
  Counter,
  ThreadCursor,
  writeBatchAsStacks,
  writeTickAsStacks,
  type EngineOptions,
  type SampleEngine,
  StackRecord,
  type TickRecord,
} from './contract';
import { CompressingSink, FileOutput, type RecordSink } from '../../file/index';
import { ErrorCode, ProfpackError } from '../../../errors';
import { TWO_POW_32 } from '../../../varint/index';

/** Largest non-REPEAT record: prefix, 10-byte delta, status, two 5-byte counts, 256 5-byte indices. */
const MAX_STACK_RECORD = RECORD_PREFIX_SIZE + 10 + 1 + 5 + 5 + 5 * MAX_STACK_DEPTH;
const MAX_REPEAT_RECORD = RECORD_PREFIX_SIZE + 5 + REPEAT_BUFFER_SIZE;

class ThreadState {
  /** thread_id u64 then interpreter_id u32, in the file's byte order. */
  readonly prefix = new Uint8Array(12);
  /** The previous stack, outermost first, so a shared bottom keeps its indices. */
  readonly stack = new Uint32Array(MAX_STACK_DEPTH);
  depth = 0;
  tsHi: number;
  tsLo: number;
  readonly repeat = new Uint8Array(REPEAT_BUFFER_SIZE);
  repeatUsed = 0;
  repeatCount = 0;
  constructor(
    tidHi: number,
    tidLo: number,
    interpreterId: number,
    startHi: number,
    startLo: number,
    littleEndian: boolean,
  ) {
    const view = new DataView(this.prefix.buffer);
    view.setUint32(littleEndian ? 0 : 4, tidLo, littleEndian);
    view.setUint32(littleEndian ? 4 : 0, tidHi, littleEndian);
    view.setUint32(8, interpreterId, littleEndian);
    // A thread's first delta is relative to the header's start time (§3.1).
    this.tsHi = startHi;
    this.tsLo = startLo;
  }
}

/** Unsigned LEB128 of the u64 (hi, lo) into `b` at `pos`; returns the new position. */
function putU64(b: Uint8Array, pos: number, hi: number, lo: number): number {
  while (hi !== 0) {
    b[pos++] = (lo & 0x7f) | 0x80;
    lo = ((lo >>> 7) | ((hi & 0x7f) << 25)) >>> 0;
    hi >>>= 7;
  }
  while (lo >= 0x80) {
    b[pos++] = (lo & 0x7f) | 0x80;
    lo >>>= 7;
  }
  b[pos++] = lo;
  return pos;
}

function putU32(b: Uint8Array, pos: number, value: number): number {
  while (value >= 0x80) {
    b[pos++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  b[pos++] = value;
  return pos;
}

/** A thread's pending run as one REPEAT record at b[pos]; returns the position after it. */
function encodeRepeat(t: ThreadState, b: Uint8Array, pos: number): number {
  b.set(t.prefix, pos);
  b[pos + 12] = RecordKind.Repeat;
  pos = putU32(b, pos + RECORD_PREFIX_SIZE, t.repeatCount);
  b.set(t.repeat.subarray(0, t.repeatUsed), pos);
  return pos + t.repeatUsed;
}

export class JsSampleEngine implements SampleEngine {
  readonly output: FileOutput;
  private readonly records: RecordSink;
  private readonly compressing: CompressingSink | null;
  private readonly threadCursor = new ThreadCursor<ThreadState>((hi, lo, interp) => this.newThread(hi, lo, interp));
  /** First-seen order: pending REPEAT runs are flushed in it at finalize. */
  private readonly threads: ThreadState[] = [];
  private readonly stats = new Float64Array(COUNTER_COUNT);
  private readonly littleEndian: boolean;
  private readonly startHi: number;
  private readonly startLo: number;
  /** writeTick's and writeBatch's stacks, one at a time. */
  private readonly record = new StackRecord();

  constructor(options: EngineOptions) {
    this.output = new FileOutput(options.fd, options.memory ?? null);
    this.littleEndian = options.littleEndian;
    this.startHi = options.startTimeHi;
    this.startLo = options.startTimeLo;
    this.compressing = options.compression === 'zstd' ? new CompressingSink(this.output, options.level) : null;
    this.records = this.compressing ?? this.output;
  }

  /** A thread not seen before: its state, in first-seen order. */
  private newThread(tidHi: number, tidLo: number, interpreterId: number): ThreadState {
    if (this.threads.length >= U32_MAX) {
      throw new ProfpackError(`the format allows at most ${U32_MAX} threads`, {
        code: ErrorCode.TACHYON_WRITE_LIMIT,
      });
    }
    const state = new ThreadState(tidHi, tidLo, interpreterId, this.startHi, this.startLo, this.littleEndian);
    this.threads.push(state);
    this.stats[Counter.threadCount] = this.threads.length;
    return state;
  }

  writeStack(rec: StackRecord): void {
    const { tidHi, tidLo, tsHi, tsLo, status, frames, start, depth } = rec;
    const t = this.threadCursor.find(tidHi, tidLo, rec.interpreterId);
    // Per-thread delta in u64 arithmetic: an earlier timestamp wraps (§3.1).
    let dLo = tsLo - t.tsLo;
    let dHi = tsHi - t.tsHi;
    if (dLo < 0) {
      dLo += TWO_POW_32;
      dHi -= 1;
    }
    if (dHi < 0) dHi += TWO_POW_32;
    t.tsHi = tsHi;
    t.tsLo = tsLo;
    this.stats[Counter.totalSamples]! += 1;

    const prev = t.stack;
    const prevDepth = t.depth;
    const top = start + depth - 1;
    const limit = depth < prevDepth ? depth : prevDepth;
    let shared = 0;
    while (shared < limit && frames[top - shared] === prev[shared]) shared++;

    if (shared === depth && shared === prevDepth) {
      // Same stack: one (delta, status) entry in the thread's REPEAT run.
      if (t.repeatUsed + REPEAT_ENTRY_MAX > REPEAT_BUFFER_SIZE) this.flushRepeat(t);
      const pos = putU64(t.repeat, t.repeatUsed, dHi, dLo);
      t.repeat[pos] = status;
      t.repeatUsed = pos + 1;
      t.repeatCount++;
      return;
    }
    if (t.repeatCount > 0) this.flushRepeat(t);

    const pop = prevDepth - shared;
    const push = depth - shared;
    let kind: RecordKind;
    if (shared === 0) kind = RecordKind.Full;
    else if (pop === 0) kind = RecordKind.Suffix;
    else if (shared < depth >>> 1) kind = RecordKind.Full;
    else kind = RecordKind.PopPush;

    const sink = this.records;
    sink.ensure(MAX_STACK_RECORD);
    const b = sink.buf;
    const begin = sink.len;
    b.set(t.prefix, begin);
    let pos = begin + 12;
    b[pos++] = kind;
    pos = putU64(b, pos, dHi, dLo);
    b[pos++] = status;
    const s = this.stats;
    let newCount: number;
    if (kind === RecordKind.Full) {
      pos = putU32(b, pos, depth);
      newCount = depth;
      s[Counter.fullRecords]! += 1;
    } else {
      pos = putU32(b, pos, kind === RecordKind.Suffix ? shared : pop);
      pos = putU32(b, pos, push);
      newCount = push;
      s[Counter.framesSaved]! += shared;
      s[kind === RecordKind.Suffix ? Counter.suffixRecords : Counter.popPushRecords]! += 1;
    }
    // The new frames are the innermost `newCount`, written innermost first.
    for (let i = 0; i < newCount; i++) pos = putU32(b, pos, frames[start + i]!);
    s[Counter.framesWritten]! += newCount;
    s[Counter.bytesWritten]! += pos - begin;
    sink.len = pos;

    // Outermost-first storage: only the frames above the shared bottom change.
    const from = kind === RecordKind.Full ? 0 : shared;
    for (let j = from; j < depth; j++) prev[j] = frames[top - j]!;
    t.depth = depth;
  }

  writeTick(tick: TickRecord): void {
    writeTickAsStacks(this, tick, this.record);
  }

  writeBatch(words: Uint32Array, count: number): void {
    writeBatchAsStacks(this, words, count, this.record);
  }

  private flushRepeat(t: ThreadState): void {
    const sink = this.records;
    sink.ensure(MAX_REPEAT_RECORD);
    const begin = sink.len;
    const pos = encodeRepeat(t, sink.buf, begin);
    sink.len = pos;
    const s = this.stats;
    s[Counter.repeatRecords]! += 1;
    s[Counter.repeatSamples]! += t.repeatCount;
    s[Counter.framesSaved]! += t.depth * t.repeatCount;
    s[Counter.bytesWritten]! += pos - begin;
    t.repeatUsed = 0;
    t.repeatCount = 0;
  }

  finishSamples(): void {
    for (const t of this.threads) if (t.repeatCount > 0) this.flushRepeat(t);
    if (this.compressing !== null) this.compressing.finish();
  }

  flushSamples(): void {
    if (this.compressing !== null) this.compressing.flush();
    else this.output.flush();
  }

  counters(): Float64Array {
    return this.stats;
  }

  discard(): void {
    this.output.len = 0;
    if (this.compressing !== null) this.compressing.len = 0;
  }

  pendingRepeats(): Uint8Array {
    let size = 0;
    for (const t of this.threads) if (t.repeatCount > 0) size += RECORD_PREFIX_SIZE + 5 + t.repeatUsed;
    const b = new Uint8Array(size);
    let pos = 0;
    for (const t of this.threads) if (t.repeatCount > 0) pos = encodeRepeat(t, b, pos);
    return b.subarray(0, pos);
  }

  release(): void {
    this.compressing?.release();
    this.threads.length = 0;
    this.threadCursor.clear();
  }
}
