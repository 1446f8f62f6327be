/**
 * One replay of a version-1 sample region, shared by ProfileReader's
 * samples() and replay(): the record decoder of the reader's backend (native
 * or the JS twin, records.ts) fed window by window from the bytes, the mapped
 * file or the zstd stream; the threads and stack nodes it reports; and the
 * step/event loop both callers walk (ReplayRun.next with a RunVisitor).
 */
import { ErrorCode, ProfpackError, type ErrorCodeValue } from '../../errors';
import { TWO_POW_32 } from '../../varint/index';
import { HEADER_SIZE, MAX_STACK_DEPTH } from '../format';
import type { FileBytes, Layout } from '../file/index';
import { ZstdRegionStream } from '../file/index';
import type { NativeFile, NativeTachyonReader } from './native';
import {
  DEFAULT_MAX_NODES,
  DecodeStatus,
  EVENT_STRIDE,
  EventKind,
  MAX_RECORD_SIZE,
  Result,
  type DecodeError,
  type DecodeOutput,
} from './decoder-output';
import { RecordDecoderJs } from './records';
import type { Frame } from './tables';
import type { ReaderOptions, ReplayStats } from './types';
import { resized } from '../../typed-arrays';

const EVENT_CAPACITY = 1 << 15;
const TIMESTAMP_CAPACITY = 1 << 16;
const NODE_CAPACITY = 1 << 15;

export function replayError(
  code: ErrorCodeValue,
  message: string,
  offset: number,
  delivered: number,
  regionOffset: number | null,
): ProfpackError {
  return new ProfpackError(message, {
    code,
    offset,
    details: { stage: 'replay', samplesDelivered: delivered, sampleDataOffset: regionOffset },
  });
}

export interface DecoderBackend {
  readonly out: DecodeOutput;
  decodeBytes(window: Uint8Array, windowStart: number, length: number, final: boolean): DecodeError | null;
  decodeFile(
    file: NativeFile,
    fileOffset: number,
    windowStart: number,
    length: number,
    final: boolean,
  ): DecodeError | null;
  stats(): number[];
  /** Frees what the decoder holds (native memory now, not at a later finalizer). */
  release(): void;
}

export type Tuning = NonNullable<ReaderOptions['tuning']>;

/**
 * Output buffers sized to the region (a small file needs small ones: every
 * record is >= 13 bytes, every REPEAT entry >= 2), reused between runs.
 */
function newOutput(tuning: Tuning, totalSize: number): DecodeOutput {
  const bound = Math.ceil(totalSize / 2) + 8;
  const events = Math.max(tuning.events ?? Math.min(EVENT_CAPACITY, bound), 6);
  const timestamps = Math.max(tuning.timestamps ?? Math.min(TIMESTAMP_CAPACITY, bound), 1);
  const nodes = Math.max(tuning.nodes ?? Math.min(NODE_CAPACITY, totalSize + 2 * MAX_STACK_DEPTH), MAX_STACK_DEPTH + 1);
  const pooled = outputPool.pop();
  if (
    pooled &&
    pooled.events.length === events * EVENT_STRIDE &&
    pooled.timestamps.length === timestamps &&
    pooled.nodes.length === nodes * 2
  ) {
    return pooled;
  }
  return {
    events: new Uint32Array(events * EVENT_STRIDE),
    timestamps: new BigUint64Array(timestamps),
    nodes: new Uint32Array(nodes * 2),
    result: new Float64Array(8),
  };
}

/** Output buffers of finished runs (the last one only: a reader replays one run at a time). */
const outputPool: DecodeOutput[] = [];

function releaseOutput(out: DecodeOutput): void {
  outputPool.length = 0;
  outputPool.push(out);
}

export function jsDecoder(layout: Layout, totalSize: number, tuning: Tuning): DecoderBackend {
  const out = newOutput(tuning, totalSize);
  const d = new RecordDecoderJs({
    littleEndian: layout.littleEndian,
    startTimeUs: layout.info.startTimeUs,
    threadCount: layout.info.threadCount,
    totalSize,
    maxNodes: tuning.maxNodes ?? DEFAULT_MAX_NODES,
  });
  return {
    out,
    decodeBytes(window, windowStart, length, final) {
      d.decode(window, windowStart, length, final, out);
      return d.error;
    },
    decodeFile() {
      throw new Error('unreachable: the JS twin has no mapped file');
    },
    stats() {
      const s = d.stats;
      return [
        s.repeatRecords,
        s.repeatSamples,
        s.fullRecords,
        s.suffixRecords,
        s.popPushRecords,
        s.totalSamples,
        s.stackReconstructions,
      ];
    },
    release() {},
  };
}

export function nativeDecoder(
  native: NativeTachyonReader,
  layout: Layout,
  totalSize: number,
  tuning: Tuning,
): DecoderBackend {
  const out = newOutput(tuning, totalSize);
  const handle = native.createDecoder(
    layout.littleEndian,
    layout.info.startTimeUs,
    layout.info.threadCount,
    totalSize,
    out.events,
    out.timestamps,
    out.nodes,
    out.result,
    tuning.maxNodes ?? DEFAULT_MAX_NODES,
  );
  return {
    out,
    decodeBytes: (window, windowStart, length, final) => native.decodeBytes(handle, window, windowStart, length, final),
    decodeFile: (file, fileOffset, windowStart, length, final) =>
      native.decodeFile(handle, file, fileOffset, windowStart, length, final),
    stats: () => Array.from(native.decoderStats(handle)),
    release: () => native.releaseDecoder(handle),
  };
}

/** Where replay gets the sample region from. */
export type Region =
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'file'; file: NativeFile; length: number }
  | { kind: 'zstd'; length: number };

/**
 * The resolved stacks of recently emitted nodes, direct-mapped and bounded:
 * hot stacks are resolved once, and a profile with millions of distinct stacks
 * does not keep them all alive (CPython builds a new frame list per sample).
 */
export class NodeCache {
  // Small on purpose: what the cache holds survives V8's scavenges; at 1024 entries (512 in collect.ts) V8 grew
  // its young generation to the maximum on a 1 M-sample replay (+16 MB RSS, bench/RESULTS.md "read").
  private static readonly SIZE = 1 << 7;
  private readonly keys = new Int32Array(NodeCache.SIZE).fill(-1);
  private readonly values: unknown[] = new Array<unknown>(NodeCache.SIZE).fill(undefined);
  /** The cached value, or undefined (then the node is remembered, and cached on its next use). */
  get(node: number): unknown {
    const slot = node & (NodeCache.SIZE - 1);
    if (this.keys[slot] === node) return this.values[slot];
    this.keys[slot] = node;
    this.values[slot] = undefined;
    return undefined;
  }
  /** Keeps the value of a node seen twice in a row of its slot; a node used once keeps nothing alive. */
  offer(node: number, value: unknown, seenBefore: boolean): void {
    if (seenBefore) this.values[node & (NodeCache.SIZE - 1)] = value;
  }
  seen(node: number): boolean {
    return this.keys[node & (NodeCache.SIZE - 1)] === node;
  }
}

/** What a run hands its caller, event by event (RunVisitor.samples is called once per decoder event). */
export interface RunVisitor {
  /**
   * `count` samples of thread `t` with stack `node` and `status`, timestamps
   * ts[tsPos .. tsPos + count); `part`: a REPEAT batch continued by the next call;
   * `shared`: the bottom frames of the thread's previous stack this one keeps (decoder-output.ts).
   */
  samples(
    t: number,
    node: number,
    status: number,
    ts: BigUint64Array,
    tsPos: number,
    count: number,
    part: boolean,
    shared: number,
  ): void;
  /** CPython's progress_callback points (replayed samples so far). */
  progress(replayed: number): void;
  /** Node ids restarted (the decoder rebuilt its trie): whatever is keyed by node is void. */
  reset(): void;
}

/**
 * What a run needs from its reader: the resolved frames, the layout, where to leave the stats, and the file's changes.
 */
export interface RunContext {
  readonly frames: readonly (Frame | null)[];
  readonly layout: Readonly<Layout>;
  readonly onStats: (stats: ReplayStats) => void;
  /** What changed in the opened file since open, or null (always null for bytes in memory). */
  readonly fileChange: () => string | null;
  /** Whether the region's bytes are read from the file (a mapping) as it is replayed, not held since open. */
  readonly readsFile: boolean;
  /** The opened file's path, for messages. */
  readonly path: string | null;
}

/** One pass over the sample region: feeds windows to the decoder, keeps threads and stack nodes. */
export class ReplayRun {
  threadIds: bigint[] = [];
  interpreterIds: number[] = [];
  nodeParent = new Uint32Array(1024);
  nodeFrame = new Uint32Array(1024);
  /** Frames from the root to each node (the root's is 0): framesFrom() sizes its list by it. */
  nodeDepth = new Uint32Array(1024);
  nodeCount = 1;
  /** Samples handed to the caller so far (replay errors report it). */
  delivered = 0;
  private readonly frameTable: readonly (Frame | null)[];
  private consumed = 0;
  private error: DecodeError | null = null;
  private lastStatus: number = DecodeStatus.NeedMore;
  private stream: ZstdRegionStream | null = null;
  private window: Uint8Array | null = null;
  private windowStart = 0;
  private windowLength = 0;
  private checkedBeforeFirstRead = false;

  constructor(
    private readonly context: RunContext,
    readonly decoder: DecoderBackend,
    private readonly region: Region,
    source: FileBytes,
    private readonly total: number,
    maxDecompressed: number,
    zstdChunk: number,
  ) {
    this.frameTable = context.frames;
    if (region.kind === 'zstd') {
      this.stream = new ZstdRegionStream(source, context.layout.stringTableOffset, maxDecompressed);
      this.window = new Uint8Array(Math.max(1, zstdChunk) + 2 * MAX_RECORD_SIZE);
    }
  }

  /**
   * One decoder call with its events handed to `visitor` (threads are kept here). Returns true at the end of the
   * region, after CPython's sample-count check; throws the replay error where the region is bad.
   */
  next(visitor: RunVisitor): boolean {
    const status = this.step(visitor);
    const out = this.decoder.out;
    const ev = out.events;
    const nEvents = out.result[Result.events]!;
    const ts = out.timestamps;
    let tsPos = 0;
    for (let e = 0; e < nEvents; e++) {
      const i = e * EVENT_STRIDE;
      const kind = ev[i]!;
      if (kind === EventKind.Sample || kind === EventKind.SamplePart) {
        const count = ev[i + 4]!;
        visitor.samples(
          ev[i + 1]!,
          ev[i + 2]!,
          ev[i + 3]!,
          ts,
          tsPos,
          count,
          kind === EventKind.SamplePart,
          ev[i + 5]!,
        );
        tsPos += count;
      } else if (kind === EventKind.Thread) {
        this.threadIds.push((BigInt(ev[i + 3]!) << 32n) | BigInt(ev[i + 2]!));
        this.interpreterIds.push(ev[i + 1]!);
      } else {
        visitor.progress(ev[i + 1]! + ev[i + 2]! * TWO_POW_32);
      }
    }
    if (status === DecodeStatus.Done) {
      this.finish();
      return true;
    }
    if (status === DecodeStatus.Error) throw this.failure();
    return false;
  }

  /**
   * A change of the opened file (since open) as a decoder error, with this
   * call's events dropped: nothing decoded from changed bytes is delivered.
   */
  private fileChanged(r: Float64Array): number | null {
    const what = this.context.fileChange();
    if (what === null) return null;
    r[Result.events] = 0;
    r[Result.nodes] = 0;
    r[Result.timestamps] = 0;
    this.error = {
      code: ErrorCode.TACHYON_FILE_CHANGED,
      message: `the file changed since it was opened (${what}): ${this.context.path}`,
      offset: this.consumed,
    };
    this.lastStatus = DecodeStatus.Error;
    return this.lastStatus;
  }

  /** One decoder call; its events are in decoder.out until the next call. */
  private step(visitor: RunVisitor): number {
    const r = this.decoder.out.result;
    // A region read from the file is checked before its first read and after each. One held since open is checked
    // before each window only: after it as well would ask the same question twice with nothing read from the file
    // between (one fstat of three in a small file's open + replay + close, bench/RESULTS.md).
    const readsFile = this.context.readsFile;
    const before = !readsFile || !this.checkedBeforeFirstRead ? this.fileChanged(r) : null;
    this.checkedBeforeFirstRead = true;
    if (before !== null) return before;
    const region = this.region;
    const remaining = this.total - this.consumed;
    if (region.kind === 'bytes') {
      this.error = this.decoder.decodeBytes(region.bytes.subarray(this.consumed), this.consumed, remaining, true);
      this.consumed += r[Result.consumed]!;
    } else if (region.kind === 'file') {
      this.error = this.decoder.decodeFile(region.file, HEADER_SIZE + this.consumed, this.consumed, remaining, true);
      this.consumed += r[Result.consumed]!;
    } else {
      const window = this.window!;
      // Keep the unconsumed tail, then top the window up from the zstd stream.
      const used = this.consumed - this.windowStart;
      const tail = this.windowLength - used;
      if (used > 0) window.copyWithin(0, used, this.windowLength);
      this.windowStart = this.consumed;
      this.windowLength = tail;
      if (this.lastStatus !== DecodeStatus.OutputFull || tail < MAX_RECORD_SIZE) {
        while (this.windowLength < window.length && !this.stream!.done) {
          this.windowLength += this.stream!.fill(window.subarray(this.windowLength));
        }
      }
      const final = this.windowStart + this.windowLength >= this.total;
      this.error = this.decoder.decodeBytes(window, this.windowStart, this.windowLength, final);
      this.consumed = this.windowStart + r[Result.consumed]!;
    }
    const after = readsFile ? this.fileChanged(r) : null;
    if (after !== null) return after;
    if (r[Result.trieReset] === 1) {
      // The decoder rebuilt its trie: node ids restart, every cache keyed by node is void.
      this.nodeCount = 1;
      visitor.reset();
    }
    const nodes = this.decoder.out.nodes;
    const nNodes = r[Result.nodes]!;
    if (nNodes > 0) {
      if (this.nodeCount + nNodes > this.nodeParent.length) {
        let size = this.nodeParent.length * 2;
        while (size < this.nodeCount + nNodes) size *= 2;
        this.nodeParent = resized(this.nodeParent, size);
        this.nodeFrame = resized(this.nodeFrame, size);
        this.nodeDepth = resized(this.nodeDepth, size);
      }
      const depth = this.nodeDepth;
      for (let k = 0; k < nNodes; k++) {
        const parent = nodes[2 * k]!;
        this.nodeParent[this.nodeCount] = parent;
        this.nodeFrame[this.nodeCount] = nodes[2 * k + 1]!;
        depth[this.nodeCount] = depth[parent]! + 1;
        this.nodeCount++;
      }
    }
    this.lastStatus = r[Result.status]!;
    return this.lastStatus;
  }

  /** The frame indices of a node's stack, innermost first, checked as CPython checks them for a sample's frames. */
  indices(node: number): number[] {
    const out: number[] = [];
    for (let n = node; n !== 0; n = this.nodeParent[n]!) {
      const f = this.nodeFrame[n]!;
      if (this.frameTable[f] == null) this.invalidFrame(f);
      out.push(f);
    }
    return out;
  }

  /**
   * The resolved frames of a node's stack, innermost first, checked like indices(), built from `prev`, the frames
   * of the thread's previous stack, whose bottom `shared` frames this stack keeps (0: none; the decoder's event
   * says how many): only the frames above them are walked up the trie, the shared part is copied from `prev`. A new
   * stack usually differs from its thread's previous one by a few frames, and walking to the root (or to a common
   * ancestor found by climbing both stacks) was most of a 1 M-sample replay.
   */
  framesFrom(node: number, shared: number, prev: readonly Frame[]): Frame[] {
    const table = this.frameTable;
    const parent = this.nodeParent;
    const frameOf = this.nodeFrame;
    const fresh = this.nodeDepth[node]! - shared; // frames above the shared part
    const from = prev.length - shared; // prev[from] and on are the shared frames
    let out: Frame[];
    if (shared > 0 && from >= fresh) {
      // As many frames popped as pushed, or more: one slice copies the shared part (a builtin copy, ~3x a loop of
      // element stores; sized up front either way: growing by push was ~8 % of a replay), the slots before it
      // are overwritten below.
      out = prev.slice(from - fresh);
    } else {
      out = new Array<Frame>(fresh + shared);
      for (let k = fresh, j = from; k < out.length;) out[k++] = prev[j++]!;
    }
    let n = node;
    for (let k = 0; k < fresh; k++) {
      const frame = table[frameOf[n]!];
      if (frame == null) this.invalidFrame(frameOf[n]!);
      out[k] = frame!;
      n = parent[n]!;
    }
    return out;
  }

  /** Throws the replay error for a frame index the table cannot resolve. */
  invalidFrame(f: number): never {
    if (f >= this.frameTable.length)
      throw replayError(
        ErrorCode.TACHYON_FRAME_INDEX,
        `Invalid frame index: ${f}`,
        this.regionOffset(-1),
        this.delivered,
        null,
      );
    throw replayError(
      ErrorCode.TACHYON_STRING_INDEX,
      'Invalid string index in frame',
      this.context.layout.frameTableOffset,
      this.delivered,
      null,
    );
  }

  private regionOffset(offset: number): number {
    // Offsets inside a zstd region are not file offsets: point at the region then.
    if (offset < 0 || this.region.kind === 'zstd' || this.context.layout.zstd) return HEADER_SIZE;
    return HEADER_SIZE + offset;
  }

  private failure(): ProfpackError {
    this.decoder.release();
    releaseOutput(this.decoder.out);
    const e = this.error!;
    return replayError(e.code, e.message, this.regionOffset(e.offset), this.delivered, e.offset);
  }

  /** End of the region: CPython's sample-count check, then the stats go to the reader. */
  private finish(): void {
    releaseOutput(this.decoder.out);
    const s = this.decoder.stats();
    this.decoder.release();
    const replayed = s[5]!;
    const declared = this.context.layout.info.sampleCount;
    if (BigInt(replayed) !== declared) {
      throw replayError(
        ErrorCode.TACHYON_SAMPLE_COUNT_MISMATCH,
        `Sample count mismatch: header declares ${declared} samples but replay decoded ${replayed}`,
        28,
        this.delivered,
        null,
      );
    }
    this.context.onStats({
      repeatRecords: s[0]!,
      repeatSamples: s[1]!,
      fullRecords: s[2]!,
      suffixRecords: s[3]!,
      popPushRecords: s[4]!,
      totalRecords: s[0]! + s[2]! + s[3]! + s[4]!,
      totalSamples: s[5]!,
      stackReconstructions: s[6]!,
    });
  }
}
