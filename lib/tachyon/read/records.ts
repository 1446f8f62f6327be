/**
 * The sample-region record decoder (../shared/notes/tachyon-format.md §3, §5,
 * §10 replay): the JS twin of native/tachyon/read/reader_records.h, with the same
 * contract, so one replay driver (replay.ts) serves both.
 *
 * Resumable: it decodes the window it is given and stops at a record (or
 * REPEAT entry) boundary when the window may not hold the next one, so the
 * zstd stream can be fed in chunks. Stacks are interned in a trie of
 * (parent node, frame index) -> node: a thread's stack is a node, node 0 is the
 * empty stack, and a node's frames are its frame then its parent's (innermost
 * first). Identical stacks share one node, so the driver resolves each
 * distinct stack once.
 *
 * The output contract, shared with the native decoder: decoder-output.ts.
 */
import { ErrorCode, type ErrorCodeValue } from '../../errors';
import { TWO_POW_32 } from '../../varint/index';
import { MAX_STACK_DEPTH, RECORD_PREFIX_SIZE, RecordKind, REPEAT_ENTRY_MAX } from '../format';
import * as fileEntry from '../file/index';
import { StackTable } from '../../profile/index';
import { PATH_STRIDE, Threads } from './trie';
import {
  DEFAULT_MAX_NODES,
  DecodeStatus,
  EVENT_STRIDE,
  EventKind,
  MAX_RECORD_SIZE,
  PROGRESS_INTERVAL,
  Result,
  type DecodeError,
  type DecodeOutput,
  type DecoderConfig,
} from './decoder-output';

// Bound once: an entry's re-exports are getters, one call each in the decoder's inner loop (30-70 % slower).
const { readU32, readU64, varint } = fileEntry;

/** Minimum room left before a record starts: thread + sample + two progress events, 256 nodes. */
const EVENT_MARGIN = 4;
const NODE_MARGIN = MAX_STACK_DEPTH;

const hostLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class RecordDecoderJs {
  private readonly le: boolean;
  private readonly startLow: number;
  private readonly startHigh: number;
  private readonly threadCount: number;
  private readonly total: number;
  private readonly trie = new StackTable();
  private readonly threads = new Threads();
  private readonly newFrames = new Uint32Array(MAX_STACK_DEPTH);
  private replayed = 0;
  /** A REPEAT record cut at an entry boundary: entries left, its thread, the open batch. */
  private repeatLeft = 0;
  private repeatCount = 0;
  private repeatThread = 0;
  private repeatBatchOpen = false;
  private repeatBatchStatus = 0;
  error: DecodeError | null = null;
  /** CPython's BinaryReader.get_stats() counters. */
  readonly stats = {
    repeatRecords: 0,
    repeatSamples: 0,
    fullRecords: 0,
    suffixRecords: 0,
    popPushRecords: 0,
    totalSamples: 0,
    stackReconstructions: 0,
  };

  // Output cursors of the current call.
  private ev!: Uint32Array;
  private evCount = 0;
  private ts32!: Uint32Array;
  private tsCount = 0;
  private tsCap = 0;
  private nodesOut!: Uint32Array;
  private nodeCount = 0;
  private nodesSeen = 1;
  private batchTsStart = 0;

  constructor(config: DecoderConfig) {
    this.le = config.littleEndian;
    this.startLow = Number(config.startTimeUs & 0xffffffffn);
    this.startHigh = Number(config.startTimeUs >> 32n);
    this.threadCount = config.threadCount;
    this.total = config.totalSize;
    this.maxNodes = config.maxNodes ?? DEFAULT_MAX_NODES;
  }

  private readonly maxNodes: number;

  /**
   * Rebuilds the trie from each thread's current stack when it has grown past
   * maxNodes and this call's node buffer can take every rebuilt node.
   */
  private maybeResetTrie(): boolean {
    const th = this.threads;
    if (this.trie.size <= this.maxNodes || th.count * MAX_STACK_DEPTH + NODE_MARGIN > this.nodesOut.length / 2)
      return false;
    const stacks: Uint32Array[] = [];
    for (let t = 0; t < th.count; t++) {
      const depth = th.depth[t]!;
      const frames = new Uint32Array(depth);
      let node = th.path[t * PATH_STRIDE + depth]!;
      for (let i = 0; i < depth; i++) {
        frames[i] = this.trie.frameIds[node]!;
        node = this.trie.parents[node]!;
      }
      stacks.push(frames);
    }
    this.trie.clear();
    for (let t = 0; t < th.count; t++) {
      this.newFrames.set(stacks[t]!);
      this.build(t, 0, stacks[t]!.length);
    }
    return true;
  }

  /**
   * Decodes window[0, length), which starts at `windowStart` in the sample
   * region; `final` when it reaches the region's end. Fills `out`.
   */
  decode(window: Uint8Array, windowStart: number, length: number, final: boolean, out: DecodeOutput): void {
    this.ev = out.events;
    this.evCount = 0;
    this.ts32 = new Uint32Array(out.timestamps.buffer, out.timestamps.byteOffset, out.timestamps.length * 2);
    this.tsCount = 0;
    this.tsCap = out.timestamps.length;
    this.nodesOut = out.nodes;
    this.nodeCount = 0;
    this.error = null;
    const reset = this.maybeResetTrie();
    const status = this.run(window, windowStart, length, final);
    const r = out.result;
    r[Result.trieReset] = reset ? 1 : 0;
    r[Result.status] = status;
    r[Result.consumed] = this.consumed;
    r[Result.events] = this.evCount;
    r[Result.timestamps] = this.tsCount;
    r[Result.nodes] = this.nodeCount;
    r[Result.replayed] = this.replayed;
    const error = this.error as DecodeError | null;
    r[Result.errorOffset] = error ? error.offset : -1;
  }

  private consumed = 0;

  private fail(code: ErrorCodeValue, message: string, offset: number): number {
    this.error = { code, message, offset };
    return DecodeStatus.Error;
  }

  private pushEvent(kind: number, a: number, b: number, c: number, d: number, e = 0): void {
    const i = this.evCount++ * EVENT_STRIDE;
    const ev = this.ev;
    ev[i] = kind;
    ev[i + 1] = a;
    ev[i + 2] = b;
    ev[i + 3] = c;
    ev[i + 4] = d;
    ev[i + 5] = e;
  }

  private progress(): void {
    this.pushEvent(EventKind.Progress, this.replayed % TWO_POW_32, Math.floor(this.replayed / TWO_POW_32), 0, 0);
  }

  private pushTimestamp(t: number): void {
    const i = this.tsCount++ * 2;
    if (hostLittleEndian) {
      this.ts32[i] = this.threads.tsLow[t]!;
      this.ts32[i + 1] = this.threads.tsHigh[t]!;
    } else {
      this.ts32[i] = this.threads.tsHigh[t]!;
      this.ts32[i + 1] = this.threads.tsLow[t]!;
    }
  }

  /** Adds varint.lo/hi to thread t's previous timestamp, modulo 2^64. */
  private advance(t: number): void {
    const th = this.threads;
    const low = th.tsLow[t]! + varint.lo;
    th.tsLow[t] = low >>> 0;
    th.tsHigh[t] = (th.tsHigh[t]! + varint.hi + (low > 0xffffffff ? 1 : 0)) >>> 0;
  }

  private child(parent: number, frame: number): number {
    const node = this.trie.push(parent, frame);
    if (this.trie.created) {
      const i = this.nodeCount++ * 2;
      this.nodesOut[i] = parent;
      this.nodesOut[i + 1] = frame;
    }
    return node;
  }

  /** Pushes newFrames[0, n) (innermost first) on top of the bottom `keep` frames of thread t. */
  private build(t: number, keep: number, n: number): void {
    const th = this.threads;
    const base = t * PATH_STRIDE;
    let node = th.path[base + keep]!;
    for (let k = n - 1, d = keep + 1; k >= 0; k--, d++) {
      node = this.child(node, this.newFrames[k]!);
      th.path[base + d] = node;
    }
    th.depth[t] = keep + n;
  }

  private closeBatch(t: number, kind: number): void {
    const count = this.tsCount - this.batchTsStart;
    const th = this.threads;
    // A REPEAT keeps the thread's whole stack.
    this.pushEvent(kind, t, th.path[t * PATH_STRIDE + th.depth[t]!]!, this.repeatBatchStatus, count, th.depth[t]);
    this.batchTsStart = this.tsCount;
  }

  /**
   * REPEAT entries of the current record, from where they stopped. Returns -1
   * when all are done, or a DecodeStatus to return. The per-entry state lives in locals, written back before
   * anything that reads it (a batch's close, a stop, a failure): fields per entry were 38 % of a small replay.
   */
  private repeatEntries(bytes: Uint8Array, pos: number, end: number, windowStart: number, final: boolean): number {
    const t = this.repeatThread;
    const th = this.threads;
    const ts32 = this.ts32;
    const lowAt = hostLittleEndian ? 0 : 1;
    // An entry starting after safeEnd may not be whole in a window that is not the last.
    const safeEnd = final ? end : end - REPEAT_ENTRY_MAX;
    const evRoom = this.ev.length / EVENT_STRIDE - EVENT_MARGIN;
    let low = th.tsLow[t]! | 0;
    let high = th.tsHigh[t]! | 0;
    let tsCount = this.tsCount;
    let left = this.repeatLeft;
    this.batchTsStart = tsCount;
    const save = (): void => {
      th.tsLow[t] = low;
      th.tsHigh[t] = high;
      this.tsCount = tsCount;
      this.repeatLeft = left;
    };
    while (left > 0) {
      if (pos > safeEnd || tsCount >= this.tsCap || this.evCount > evRoom) {
        save();
        if (this.repeatBatchOpen && tsCount > this.batchTsStart) this.closeBatch(t, EventKind.SamplePart);
        this.consumed = pos;
        return pos > safeEnd ? DecodeStatus.NeedMore : DecodeStatus.OutputFull;
      }
      // Deltas of one or two bytes (below 16 ms) inline; longer ones through readU64.
      let next = pos + 1;
      let deltaLow = pos < end ? bytes[pos]! : 0x80;
      let deltaHigh = 0;
      if (deltaLow >= 0x80) {
        const b1 = pos + 1 < end ? bytes[pos + 1]! : 0x80;
        if (b1 < 0x80) {
          deltaLow = (deltaLow & 0x7f) | (b1 << 7);
          next = pos + 2;
        } else {
          next = readU64(bytes, pos, end);
          deltaLow = varint.lo;
          deltaHigh = varint.hi;
        }
      }
      if (next < 0 || next >= end) {
        save();
        if (next < 0)
          return this.fail(ErrorCode.TACHYON_RLE_VARINT, 'Malformed varint in RLE sample data', windowStart + pos);
        return this.fail(ErrorCode.TACHYON_RLE_TRUNCATED, 'Unexpected end of sample data in RLE', windowStart + next);
      }
      const status = bytes[next]!;
      pos = next + 1;
      // Thread t's previous timestamp plus the delta, modulo 2^64 (advance()), in int32 halves: as uint32 (>>> 0)
      // the halves left V8's small integers and the loop spent most of its time on them.
      const sum = (low + deltaLow) | 0;
      high = (high + deltaHigh + (sum >>> 0 < low >>> 0 ? 1 : 0)) | 0;
      low = sum;
      if (!this.repeatBatchOpen || status !== this.repeatBatchStatus) {
        if (this.repeatBatchOpen) {
          this.tsCount = tsCount;
          this.closeBatch(t, EventKind.Sample);
        }
        this.repeatBatchOpen = true;
        this.repeatBatchStatus = status;
        this.batchTsStart = tsCount;
      }
      ts32[2 * tsCount + lowAt] = low;
      ts32[2 * tsCount + 1 - lowAt] = high;
      tsCount++;
      left--;
    }
    save();
    if (this.repeatBatchOpen) this.closeBatch(t, EventKind.Sample);
    this.repeatBatchOpen = false;
    const count = this.repeatCount;
    this.replayed += count;
    this.stats.totalSamples += count;
    if (this.replayed % PROGRESS_INTERVAL < count) this.progress();
    if (this.replayed % PROGRESS_INTERVAL === 0) this.progress();
    this.consumed = pos;
    return -1;
  }

  private run(bytes: Uint8Array, windowStart: number, length: number, final: boolean): number {
    const end = length;
    let pos = 0;
    this.consumed = 0;
    if (this.repeatLeft > 0) {
      const s = this.repeatEntries(bytes, pos, end, windowStart, final);
      if (s >= 0) return s;
      pos = this.consumed;
    }
    const le = this.le;
    const th = this.threads;
    const evCap = this.ev.length / EVENT_STRIDE;
    const nodeCap = this.nodesOut.length / 2;
    const total = this.total;
    for (;;) {
      this.consumed = pos;
      if (pos >= end) return final ? DecodeStatus.Done : DecodeStatus.NeedMore;
      const remaining = total - (windowStart + pos);
      if (remaining < RECORD_PREFIX_SIZE) {
        return this.fail(
          ErrorCode.TACHYON_TRUNCATED_RECORD,
          `Truncated sample data: ${remaining} trailing bytes`,
          windowStart + pos,
        );
      }
      if (!final && end - pos < MAX_RECORD_SIZE) return DecodeStatus.NeedMore;
      if (this.evCount + EVENT_MARGIN > evCap || this.nodeCount + NODE_MARGIN > nodeCap || this.tsCount >= this.tsCap)
        return DecodeStatus.OutputFull;
      const recordStart = pos;
      let low: number, high: number, interp: number;
      if (le) {
        low = (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) >>> 0;
        high = (bytes[pos + 4]! | (bytes[pos + 5]! << 8) | (bytes[pos + 6]! << 16) | (bytes[pos + 7]! << 24)) >>> 0;
        interp = (bytes[pos + 8]! | (bytes[pos + 9]! << 8) | (bytes[pos + 10]! << 16) | (bytes[pos + 11]! << 24)) >>> 0;
      } else {
        high = ((bytes[pos]! << 24) | (bytes[pos + 1]! << 16) | (bytes[pos + 2]! << 8) | bytes[pos + 3]!) >>> 0;
        low = ((bytes[pos + 4]! << 24) | (bytes[pos + 5]! << 16) | (bytes[pos + 6]! << 8) | bytes[pos + 7]!) >>> 0;
        interp = ((bytes[pos + 8]! << 24) | (bytes[pos + 9]! << 16) | (bytes[pos + 10]! << 8) | bytes[pos + 11]!) >>> 0;
      }
      let t = th.find(low, high, interp);
      if (t < 0) {
        if (th.count >= this.threadCount) {
          return this.fail(
            ErrorCode.TACHYON_THREAD_COUNT,
            `Invalid thread count: sample data contains more unique threads than declared in header ` +
              `(declared ${this.threadCount}, found at least ${th.count + 1})`,
            windowStart + recordStart,
          );
        }
        t = th.add(-1 - t, low, high, interp, this.startLow, this.startHigh);
        this.pushEvent(EventKind.Thread, interp, low, high, 0);
      }
      const encoding = bytes[pos + 12]!;
      pos += RECORD_PREFIX_SIZE;
      if (encoding === RecordKind.Repeat) {
        const next = readU32(bytes, pos, end);
        if (next < 0)
          return this.fail(ErrorCode.TACHYON_RLE_COUNT_VARINT, 'Malformed varint for RLE count', windowStart + pos);
        const count = varint.lo;
        pos = next;
        const maxPossible = Math.floor((total - (windowStart + pos)) / 2);
        if (count > maxPossible) {
          return this.fail(
            ErrorCode.TACHYON_RLE_COUNT,
            `Invalid RLE count ${count} exceeds maximum possible ${maxPossible} for remaining data`,
            windowStart + recordStart + RECORD_PREFIX_SIZE,
          );
        }
        this.stats.repeatRecords++;
        this.stats.repeatSamples += count;
        this.repeatLeft = count;
        this.repeatCount = count;
        this.repeatThread = t;
        this.repeatBatchOpen = false;
        const s = this.repeatEntries(bytes, pos, end, windowStart, final);
        if (s >= 0) return s;
        pos = this.consumed;
        continue;
      }
      if (encoding > RecordKind.PopPush) {
        return this.fail(
          ErrorCode.TACHYON_UNKNOWN_ENCODING,
          `Unknown stack encoding: ${encoding}`,
          windowStart + recordStart + 12,
        );
      }
      let next = readU64(bytes, pos, end);
      if (next < 0)
        return this.fail(ErrorCode.TACHYON_SAMPLE_VARINT, 'Malformed varint in sample data', windowStart + pos);
      if (next >= end)
        return this.fail(ErrorCode.TACHYON_SAMPLE_TRUNCATED, 'Unexpected end of sample data', windowStart + next);
      this.advance(t);
      const status = bytes[next]!;
      pos = next + 1;
      const base = t * PATH_STRIDE;
      const frames = this.newFrames;
      let shared = 0; // bottom frames of the thread's previous stack this one keeps (the event's last field)
      if (encoding === RecordKind.Full) {
        next = readU32(bytes, pos, end);
        if (next < 0) return this.stackVarint(windowStart + pos);
        const depth = varint.lo;
        if (depth > MAX_STACK_DEPTH) {
          return this.fail(
            ErrorCode.TACHYON_STACK_DEPTH,
            `Stack depth ${depth} exceeds capacity ${MAX_STACK_DEPTH}`,
            windowStart + pos,
          );
        }
        pos = next;
        for (let i = 0; i < depth; i++) {
          next = readU32(bytes, pos, end);
          if (next < 0) return this.stackVarint(windowStart + pos);
          frames[i] = varint.lo;
          pos = next;
        }
        this.build(t, 0, depth);
        this.stats.fullRecords++;
      } else {
        next = readU32(bytes, pos, end);
        if (next < 0) return this.stackVarint(windowStart + pos);
        const first = varint.lo;
        const firstAt = pos;
        pos = next;
        next = readU32(bytes, pos, end);
        if (next < 0) return this.stackVarint(windowStart + pos);
        const n = varint.lo;
        pos = next;
        const depth = th.depth[t]!;
        let keep: number;
        if (encoding === RecordKind.Suffix) {
          if (first > depth) {
            return this.fail(
              ErrorCode.TACHYON_SHARED_COUNT,
              `Shared count ${first} exceeds current stack depth ${depth}`,
              windowStart + firstAt,
            );
          }
          keep = first;
        } else {
          keep = depth > first ? depth - first : 0;
        }
        if (keep + n > MAX_STACK_DEPTH) {
          return this.fail(
            ErrorCode.TACHYON_FINAL_STACK_DEPTH,
            `Final stack depth ${keep + n} exceeds capacity ${MAX_STACK_DEPTH}`,
            windowStart + firstAt,
          );
        }
        for (let i = 0; i < n; i++) {
          next = readU32(bytes, pos, end);
          if (next < 0) return this.stackVarint(windowStart + pos);
          frames[i] = varint.lo;
          pos = next;
        }
        if (encoding === RecordKind.Suffix && n === 0 && keep < depth) {
          // CPython 3.15.2 moves the shared frames down only when it pushes new
          // ones: a SUFFIX with nothing new keeps the *top* `shared` frames.
          let node = th.path[base + depth]!;
          for (let i = 0; i < keep; i++) {
            frames[i] = this.trie.frameIds[node]!;
            node = this.trie.parents[node]!;
          }
          this.build(t, 0, keep);
        } else {
          this.build(t, keep, n);
          shared = keep;
        }
        if (encoding === RecordKind.Suffix) this.stats.suffixRecords++;
        else this.stats.popPushRecords++;
      }
      this.stats.stackReconstructions++;
      this.pushTimestamp(t);
      this.pushEvent(EventKind.Sample, t, th.path[base + th.depth[t]!]!, status, 1, shared);
      this.replayed++;
      this.stats.totalSamples++;
      if (this.replayed % PROGRESS_INTERVAL === 0) this.progress();
    }
  }

  private stackVarint(offset: number): number {
    // CPython's stack decoders return its generic varint error unchanged.
    return this.fail(ErrorCode.TACHYON_STACK_VARINT, 'Invalid or incomplete varint in binary data', offset);
  }
}
