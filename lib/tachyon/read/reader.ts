/**
 * ProfileReader: reads every Tachyon file CPython 3.15.2 writes, exactly as
 * its BinaryReader does (../shared/notes/tachyon-format.md), on the native
 * backend (mmap + C++ record decoder) or the pure-JS twin.
 *
 * Stages follow CPython: `open` parses header, footer, stats block, the whole
 * zstd region and both tables; `replay`/`samples()` decode records and fail
 * where CPython's replay fails, after delivering what came before.
 */
import { backend } from '../../backend';
import { ErrorCode, ProfpackError, invalidArgument, type ErrorCodeValue } from '../../errors';
import { closeInput, inputChange, openInput, readInput, type InputFile } from '../../input';
import { HEADER_SIZE, MAX_STACK_DEPTH, ZSTD_MAX_DECOMPRESSED } from '../format';
import { checkTableCounts, parseLayout, type ByteSource, type Layout, type ProfileInfo } from '../file/layout';
import { nativeReader, type NativeFile, type NativeTachyonReader } from './native';
import {
  DEFAULT_MAX_NODES,
  DecodeStatus,
  EVENT_STRIDE,
  EventKind,
  MAX_RECORD_SIZE,
  RecordDecoderJs,
  Result,
  type DecodeError,
  type DecodeOutput,
} from './records';
import { parseFrameTable, parseStringTable, resolveFrame, type Frame } from './tables';
import { checkReaderOptions, MAX_TIMESTAMPS_PER_COLLECT, type Collector, type InterpreterInfo, type ReaderOptions, type ReplayOptions, type ReplayStats, type Sample, type ThreadInfo } from './types';
import { checkZstdRegion, OUTPUT_CHUNK, ZstdStream } from '../file/regions';
import type { StackCoding } from '../v2/blocks';
import { readProfileV2, stackCodingOf, type V2Profile } from '../v2/file';
import { isProfpackVersion2, v2Frames, v2Layout, v2Replay, v2Samples } from './v2';

export type { Frame, ProfileInfo, ReaderOptions, Sample, ThreadInfo, InterpreterInfo, Collector, ReplayOptions, ReplayStats } from './types';
export { MAX_TIMESTAMPS_PER_COLLECT } from './types';

const EVENT_CAPACITY = 1 << 15;
const TIMESTAMP_CAPACITY = 1 << 16;
const NODE_CAPACITY = 1 << 15;
const DEFAULT_KEEP_LIMIT = 16 << 20;
const WRAP_CACHE_SIZE = 1 << 9;

function replayError(code: ErrorCodeValue, message: string, offset: number, delivered: number, regionOffset: number | null): ProfpackError {
  return new ProfpackError(message, {
    code,
    offset,
    details: { stage: 'replay', samplesDelivered: delivered, sampleDataOffset: regionOffset },
  });
}

interface DecoderBackend {
  readonly out: DecodeOutput;
  decodeBytes(window: Uint8Array, windowStart: number, length: number, final: boolean): DecodeError | null;
  decodeFile(file: NativeFile, fileOffset: number, windowStart: number, length: number, final: boolean): DecodeError | null;
  stats(): number[];
  /** Frees what the decoder holds (native memory now, not at a later finalizer). */
  release(): void;
}

type Tuning = NonNullable<ReaderOptions['tuning']>;

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
  if (pooled && pooled.events.length === events * EVENT_STRIDE && pooled.timestamps.length === timestamps && pooled.nodes.length === nodes * 2) {
    return pooled;
  }
  return {
    events: new Uint32Array(events * EVENT_STRIDE),
    timestamps: new BigUint64Array(timestamps),
    nodes: new Uint32Array(nodes * 2),
    result: new Float64Array(8),
  };
}

/**
 * A reader dropped without close() still gives its descriptor back when it is
 * collected (both backends hold one open for the change checks).
 */
const unclosed = new FinalizationRegistry<InputFile>((input) => closeInput(input));

/** Output buffers of finished runs (the last one only: a reader replays one run at a time). */
const outputPool: DecodeOutput[] = [];

function releaseOutput(out: DecodeOutput): void {
  outputPool.length = 0;
  outputPool.push(out);
}

function jsDecoder(layout: Layout, totalSize: number, tuning: Tuning): DecoderBackend {
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
      return [s.repeatRecords, s.repeatSamples, s.fullRecords, s.suffixRecords, s.popPushRecords, s.totalSamples, s.stackReconstructions];
    },
    release() {},
  };
}

function nativeDecoder(native: NativeTachyonReader, layout: Layout, totalSize: number, tuning: Tuning): DecoderBackend {
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
    decodeFile: (file, fileOffset, windowStart, length, final) => native.decodeFile(handle, file, fileOffset, windowStart, length, final),
    stats: () => Array.from(native.decoderStats(handle)),
    release: () => native.releaseDecoder(handle),
  };
}

/** Where replay gets the sample region from. */
type Region =
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'file'; file: NativeFile; length: number }
  | { kind: 'zstd'; length: number };

export class ProfileReader {
  /** CPython's get_info(). */
  readonly info: ProfileInfo;
  readonly strings: readonly string[];
  /** Resolved frame table; null for an entry whose string index is out of range (an error only if a sample uses it, as in CPython). */
  readonly frames: readonly (Frame | null)[];
  readonly layout: Readonly<Layout>;
  /** The backend that decodes records for this reader. */
  readonly backend: 'native' | 'js';
  /** Counters of the last complete replay (CPython's get_stats()), or null. */
  stats: ReplayStats | null = null;
  /** How a version-2 file codes its stacks (docs/format-v2.md §4); null for version 1 or a file without samples. */
  readonly stackCoding: StackCoding | null = null;

  private readonly native: NativeTachyonReader | null;
  private file: NativeFile | null;
  private source: ByteSource | null;
  private region: Region | null;
  private readonly sampleRegionSize: number;
  private readonly maxDecompressed: number;
  private readonly tuning: Tuning;
  /** A version-2 file, decoded at open (docs/format-v2.md); null for version 1. */
  private readonly v2: V2Profile | null = null;
  /** The opened file, watched for changes between replay windows; null for fromBuffer. */
  private input: InputFile | null;
  /** The replay in progress, released by close(). */
  private activeDecoder: DecoderBackend | null = null;

  private constructor(source: ByteSource, file: NativeFile | null, native: NativeTachyonReader | null, options: ReaderOptions, input: InputFile | null = null) {
    this.native = native;
    this.file = file;
    this.input = input;
    this.source = source;
    this.backend = native ? 'native' : 'js';
    this.maxDecompressed = options.maxDecompressedSize ?? ZSTD_MAX_DECOMPRESSED;
    this.tuning = options.tuning ?? {};
    if (isProfpackVersion2(source)) {
      const v2 = readProfileV2(source.read(0, source.size), { backend: this.backend, maxDecompressedSize: this.maxDecompressed });
      this.v2 = v2;
      this.stackCoding = stackCodingOf(v2.region);
      this.layout = v2Layout(v2, source.size);
      this.info = this.layout.info;
      this.strings = v2.strings;
      this.frames = v2Frames(v2);
      this.sampleRegionSize = v2.region.length;
      this.region = { kind: 'bytes', bytes: v2.region };
      // The whole file is in memory now: neither the mapping nor the descriptor is needed.
      if (file && native) native.closeFile(file);
      this.file = null;
      if (input) closeInput(input);
      this.input = null;
      return;
    }
    const layout = parseLayout(source);
    this.layout = layout;
    this.info = layout.info;
    const regionEnd = layout.stringTableOffset;
    if (layout.zstd) {
      const z = checkZstdRegion(source, regionEnd, this.maxDecompressed, options.keepDecompressedLimit ?? DEFAULT_KEEP_LIMIT);
      this.sampleRegionSize = z.totalSize;
      this.region = z.data ? { kind: 'bytes', bytes: z.data } : { kind: 'zstd', length: z.totalSize };
    } else {
      this.sampleRegionSize = regionEnd - HEADER_SIZE;
      this.region = file ? { kind: 'file', file, length: this.sampleRegionSize } : { kind: 'bytes', bytes: source.read(HEADER_SIZE, regionEnd) };
    }
    checkTableCounts(layout);
    const tables = source.read(layout.stringTableOffset, layout.fileSize);
    this.strings = parseStringTable(tables, layout.stringTableOffset, layout.stringTableOffset, layout.info.stringCount, layout.fileSize);
    const frameTable = parseFrameTable(tables, layout.stringTableOffset, layout.frameTableOffset, layout.info.frameCount, layout.fileSize);
    const frames = new Array<Frame | null>(frameTable.count);
    for (let i = 0; i < frames.length; i++) frames[i] = resolveFrame(frameTable, this.strings, i);
    this.frames = frames;
    // Only a reader that was fully built owns its descriptor (open() closes it when the constructor throws).
    if (input) unclosed.register(this, input, this);
  }

  private static pick(options: ReaderOptions): NativeTachyonReader | null {
    checkReaderOptions(options);
    const wanted = options.backend ?? backend.name;
    if (wanted === 'js') return null;
    const native = nativeReader();
    if (!native) {
      throw new ProfpackError('the native backend is not available', { code: ErrorCode.NATIVE_UNAVAILABLE });
    }
    return native;
  }

  /**
   * Opens a regular file (anything else is ERR_NOT_REGULAR_FILE, without
   * blocking): mapped by the native backend, read whole by the JS twin. Both
   * keep the descriptor and check between replay windows that the file is as
   * it was at open; a change is ERR_TACHYON_FILE_CHANGED (docs/reliability.md).
   */
  static open(path: string, options: ReaderOptions = {}): ProfileReader {
    const native = ProfileReader.pick(options);
    const input = openInput(path, ErrorCode.TACHYON_IO);
    try {
      if (native) {
        const file = native.openFile(input.fd, input.size, path);
        const source: ByteSource = { size: file.size, read: (start, end) => native.readRange(file, start, end) };
        try {
          return new ProfileReader(source, file, native, options, input);
        } catch (err) {
          native.closeFile(file);
          throw err;
        }
      }
      const bytes = readInput(input, ErrorCode.TACHYON_IO);
      const source: ByteSource = { size: bytes.length, read: (start, end) => bytes.subarray(start, end) };
      return new ProfileReader(source, null, null, options, input);
    } catch (err) {
      closeInput(input);
      throw err;
    }
  }

  /** Reads a profile held in memory (not copied: do not modify it while the reader is in use). */
  static fromBuffer(bytes: Uint8Array, options: ReaderOptions = {}): ProfileReader {
    if (!(bytes instanceof Uint8Array)) throw invalidArgument('fromBuffer(bytes): bytes must be a Uint8Array (wrap an ArrayBuffer in new Uint8Array(buffer))', 'Uint8Array');
    const native = ProfileReader.pick(options);
    const source: ByteSource = { size: bytes.length, read: (start, end) => bytes.subarray(start, end) };
    return new ProfileReader(source, null, native, options);
  }

  /** Releases the mapping, the descriptor, buffers and native decoder memory; the reader cannot replay afterwards. */
  close(): void {
    this.activeDecoder?.release();
    this.activeDecoder = null;
    if (this.file && this.native) this.native.closeFile(this.file);
    this.file = null;
    if (this.input) {
      unclosed.unregister(this);
      closeInput(this.input);
    }
    this.input = null;
    this.source = null;
    this.region = null;
  }

  /**
   * @internal Throws-free check used between replay windows: what changed in
   * the opened file since open, or null (always null for fromBuffer).
   */
  fileChange(): string | null {
    return this.input ? inputChange(this.input) : null;
  }

  /** @internal the path the reader was opened from, for messages. */
  get path(): string | null {
    return this.input?.path ?? null;
  }

  /** Every sample in file order; throws CPython's replay errors where CPython would. */
  *samples(): IterableIterator<Sample> {
    if (this.v2 !== null) {
      this.assertOpen(false);
      yield* v2Samples(this.v2, this.frames, (stats) => (this.stats = stats));
      return;
    }
    const run = this.startRun();
    let delivered = 0;
    let cache = new NodeCache();
    let generation = run.generation;
    const indicesOf = (node: number): readonly number[] => {
      const seen = cache.seen(node);
      let s = cache.get(node) as readonly number[] | undefined;
      if (s === undefined) {
        s = run.indices(node, delivered);
        cache.offer(node, s, seen);
      }
      return s;
    };
    for (;;) {
      const status = run.step();
      if (run.generation !== generation) {
        generation = run.generation;
        cache = new NodeCache();
      }
      const out = run.decoder.out;
      const ev = out.events;
      const nEvents = out.result[Result.events]!;
      const ts = out.timestamps;
      let tsPos = 0;
      for (let e = 0; e < nEvents; e++) {
        const i = e * EVENT_STRIDE;
        const kind = ev[i]!;
        if (kind === EventKind.Sample || kind === EventKind.SamplePart) {
          const t = ev[i + 1]!;
          const stack = indicesOf(ev[i + 2]!);
          const sampleStatus = ev[i + 3]!;
          const count = ev[i + 4]!;
          const threadId = run.threadIds[t]!;
          const interpreterId = run.interpreterIds[t]!;
          for (let k = 0; k < count; k++) {
            delivered++;
            yield { threadId, interpreterId, timestampUs: ts[tsPos + k]!, status: sampleStatus, stack };
          }
          tsPos += count;
        } else if (kind === EventKind.Thread) {
          run.addThread(ev[i + 1]!, ev[i + 2]!, ev[i + 3]!);
        }
      }
      if (status === DecodeStatus.Done) {
        run.finish(delivered);
        return;
      }
      if (status === DecodeStatus.Error) throw run.failure(delivered);
    }
  }

  /**
   * Replays every sample into collector.collect(stackFrames, timestampsUs), as
   * CPython's BinaryReader.replay does; returns the number of samples.
   */
  replay(collector: Collector, options: ReplayOptions = {}): number {
    if (collector === null || typeof collector !== 'object' || typeof (collector as Partial<Collector>).collect !== 'function') {
      throw invalidArgument('replay(collector): collector must be an object with a collect(stackFrames, timestampsUs) method', 'Collector');
    }
    if (options === null || typeof options !== 'object') throw invalidArgument('replay(collector, options): options must be an object', 'ReplayOptions');
    if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw invalidArgument('replay(collector, options): onProgress must be a function', 'function');
    if (this.v2 !== null) {
      this.assertOpen(false);
      return v2Replay(this.v2, this.frames, collector, options, (stats) => (this.stats = stats));
    }
    const run = this.startRun();
    const onProgress = options.onProgress;
    const total = Number(this.info.sampleCount);
    let delivered = 0;
    let cache = new NodeCache();
    let generation = run.generation;
    const framesOf = (node: number): readonly Frame[] => {
      const seen = cache.seen(node);
      let f = cache.get(node) as readonly Frame[] | undefined;
      if (f === undefined) {
        f = run.frames(node, delivered);
        cache.offer(node, f, seen);
      }
      return f;
    };
    // The last stackFrames handed out per thread, reused while stack and status stay the same.
    let lastNode = new Int32Array(16).fill(-1);
    let lastStatus = new Int32Array(16);
    const lastStackFrames: (readonly InterpreterInfo[] | undefined)[] = [];
    // stackFrames of recent (node, thread, status) triples, so a recurring stack costs no allocation.
    const wrapNode = new Int32Array(WRAP_CACHE_SIZE).fill(-1);
    const wrapThread = new Int32Array(WRAP_CACHE_SIZE);
    const wrapStatus = new Int32Array(WRAP_CACHE_SIZE);
    const wrapValue = new Array<readonly InterpreterInfo[] | undefined>(WRAP_CACHE_SIZE).fill(undefined);
    const stackFramesOf = (t: number, node: number, status: number): readonly InterpreterInfo[] => {
      if (t >= lastNode.length) {
        const grownNode = new Int32Array(lastNode.length * 2 + t).fill(-1);
        grownNode.set(lastNode);
        lastNode = grownNode;
        const grownStatus = new Int32Array(lastNode.length);
        grownStatus.set(lastStatus);
        lastStatus = grownStatus;
      }
      if (lastNode[t] === node && lastStatus[t] === status) return lastStackFrames[t]!;
      const slot = (node ^ (t << 7) ^ (status << 3)) & (WRAP_CACHE_SIZE - 1);
      let sf: readonly InterpreterInfo[];
      if (wrapNode[slot] === node && wrapThread[slot] === t && wrapStatus[slot] === status) sf = wrapValue[slot]!;
      else {
        // Not frozen (Object.freeze costs more than the whole sample): read-only by contract.
        const thread: ThreadInfo = { threadId: run.threadIds[t]!, status, frameInfo: framesOf(node) };
        sf = [{ interpreterId: run.interpreterIds[t]!, threads: [thread] }];
        wrapNode[slot] = node;
        wrapThread[slot] = t;
        wrapStatus[slot] = status;
        wrapValue[slot] = sf;
      }
      lastNode[t] = node;
      lastStatus[t] = status;
      lastStackFrames[t] = sf;
      return sf;
    };
    let pending: bigint[] | null = null;
    onProgress?.(0, total);
    for (;;) {
      const status = run.step();
      if (run.generation !== generation) {
        generation = run.generation;
        cache = new NodeCache();
        wrapNode.fill(-1);
        lastNode.fill(-1);
      }
      const out = run.decoder.out;
      const ev = out.events;
      const nEvents = out.result[Result.events]!;
      const ts = out.timestamps;
      let tsPos = 0;
      for (let e = 0; e < nEvents; e++) {
        const i = e * EVENT_STRIDE;
        const kind = ev[i]!;
        if (kind === EventKind.Sample && pending === null && ev[i + 4]! <= MAX_TIMESTAMPS_PER_COLLECT) {
          const n = ev[i + 4]!;
          let timestamps: bigint[];
          if (n === 1) timestamps = [ts[tsPos]!];
          else {
            timestamps = new Array<bigint>(n);
            for (let k = 0; k < n; k++) timestamps[k] = ts[tsPos + k]!;
          }
          tsPos += n;
          collector.collect(stackFramesOf(ev[i + 1]!, ev[i + 2]!, ev[i + 3]!), timestamps);
          delivered += n;
        } else if (kind === EventKind.Sample || kind === EventKind.SamplePart) {
          // A run split across decoder calls, or longer than one collect() may take: full batches go out as they fill.
          const n = ev[i + 4]!;
          for (let k = 0; k < n; k++) {
            pending ??= [];
            pending.push(ts[tsPos + k]!);
            if (pending.length === MAX_TIMESTAMPS_PER_COLLECT) {
              const batch: bigint[] = pending;
              pending = null;
              collector.collect(stackFramesOf(ev[i + 1]!, ev[i + 2]!, ev[i + 3]!), batch);
              delivered += batch.length;
            }
          }
          tsPos += n;
          if (kind === EventKind.Sample && pending !== null) {
            const batch: bigint[] = pending;
            pending = null;
            collector.collect(stackFramesOf(ev[i + 1]!, ev[i + 2]!, ev[i + 3]!), batch);
            delivered += batch.length;
          }
        } else if (kind === EventKind.Thread) {
          run.addThread(ev[i + 1]!, ev[i + 2]!, ev[i + 3]!);
        } else if (onProgress) {
          onProgress(ev[i + 1]! + ev[i + 2]! * 0x1_0000_0000, total);
        }
      }
      if (status === DecodeStatus.Done) {
        const replayed = run.finish(delivered);
        onProgress?.(replayed, total);
        return replayed;
      }
      if (status === DecodeStatus.Error) throw run.failure(delivered);
    }
  }

  /** A version-1 run also needs the byte source; a version-2 file was read whole at open. */
  private assertOpen(needSource: boolean): void {
    if (!this.region || (needSource && !this.source)) {
      throw new ProfpackError('the reader is closed', { code: ErrorCode.TACHYON_READER_CLOSED });
    }
  }

  private startRun(): ReplayRun {
    this.assertOpen(true); // region and source are set from here on
    this.activeDecoder?.release();
    const decoder = this.native
      ? nativeDecoder(this.native, this.layout, this.sampleRegionSize, this.tuning)
      : jsDecoder(this.layout, this.sampleRegionSize, this.tuning);
    this.activeDecoder = decoder;
    return new ReplayRun(this, decoder, this.region!, this.source!, this.sampleRegionSize, this.maxDecompressed, this.tuning.zstdChunk ?? OUTPUT_CHUNK);
  }
}

/**
 * The resolved stacks of recently emitted nodes, direct-mapped and bounded:
 * hot stacks are resolved once, and a profile with millions of distinct stacks
 * does not keep them all alive (CPython builds a new frame list per sample).
 */
class NodeCache {
  private static readonly SIZE = 1 << 10;
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

/** One pass over the sample region: feeds windows to the decoder, keeps threads and stack nodes. */
class ReplayRun {
  threadIds: bigint[] = [];
  interpreterIds: number[] = [];
  nodeParent = new Uint32Array(1024);
  nodeFrame = new Uint32Array(1024);
  nodeCount = 1;
  /** Bumped when node ids restart (see Result.trieReset). */
  generation = 0;
  private readonly frameTable: readonly (Frame | null)[];
  private consumed = 0;
  private error: DecodeError | null = null;
  private lastStatus: number = DecodeStatus.NeedMore;
  private stream: ZstdStream | null = null;
  private window: Uint8Array | null = null;
  private windowStart = 0;
  private windowLength = 0;
  private checkedAtStart = false;

  constructor(
    private readonly reader: ProfileReader,
    readonly decoder: DecoderBackend,
    private readonly region: Region,
    private readonly source: ByteSource,
    private readonly total: number,
    maxDecompressed: number,
    zstdChunk: number,
  ) {
    this.frameTable = reader.frames;
    if (region.kind === 'zstd') {
      this.stream = new ZstdStream(source, reader.layout.stringTableOffset, maxDecompressed);
      this.window = new Uint8Array(Math.max(1, zstdChunk) + 2 * MAX_RECORD_SIZE);
    }
  }

  /**
   * A change of the opened file (since open) as a decoder error, with this
   * call's events dropped: nothing decoded from changed bytes is delivered.
   */
  private fileChanged(r: Float64Array): number | null {
    const what = this.reader.fileChange();
    if (what === null) return null;
    r[Result.events] = 0;
    r[Result.nodes] = 0;
    r[Result.timestamps] = 0;
    this.error = {
      code: ErrorCode.TACHYON_FILE_CHANGED,
      message: `the file changed since it was opened (${what}): ${this.reader.path}`,
      offset: this.consumed,
    };
    this.lastStatus = DecodeStatus.Error;
    return this.lastStatus;
  }

  /** One decoder call; its events are in decoder.out until the next call. */
  step(): number {
    const r = this.decoder.out.result;
    if (!this.checkedAtStart) {
      this.checkedAtStart = true;
      const changed = this.fileChanged(r);
      if (changed !== null) return changed;
    }
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
    const changed = this.fileChanged(r);
    if (changed !== null) return changed;
    if (r[Result.trieReset] === 1) {
      // The decoder rebuilt its trie: node ids restart, every cache keyed by node is void.
      this.nodeCount = 1;
      this.generation++;
    }
    const nodes = this.decoder.out.nodes;
    const nNodes = r[Result.nodes]!;
    if (nNodes > 0) {
      if (this.nodeCount + nNodes > this.nodeParent.length) {
        let size = this.nodeParent.length * 2;
        while (size < this.nodeCount + nNodes) size *= 2;
        const p = new Uint32Array(size);
        p.set(this.nodeParent);
        this.nodeParent = p;
        const f = new Uint32Array(size);
        f.set(this.nodeFrame);
        this.nodeFrame = f;
      }
      for (let k = 0; k < nNodes; k++) {
        this.nodeParent[this.nodeCount] = nodes[2 * k]!;
        this.nodeFrame[this.nodeCount] = nodes[2 * k + 1]!;
        this.nodeCount++;
      }
    }
    this.lastStatus = r[Result.status]!;
    return this.lastStatus;
  }

  addThread(interpreterId: number, low: number, high: number): void {
    this.threadIds.push((BigInt(high) << 32n) | BigInt(low));
    this.interpreterIds.push(interpreterId);
  }

  /**
   * The frame indices of a node's stack, innermost first, checked as CPython
   * checks them when it builds a sample's frame list (innermost first).
   */
  indices(node: number, delivered: number): number[] {
    const out: number[] = [];
    for (let n = node; n !== 0; n = this.nodeParent[n]!) {
      const f = this.nodeFrame[n]!;
      if (this.frameTable[f] == null) this.invalidFrame(f, delivered);
      out.push(f);
    }
    return out;
  }

  /** The resolved frames of a node's stack, innermost first, checked like indices(). */
  frames(node: number, delivered: number): Frame[] {
    const out: Frame[] = [];
    const table = this.frameTable;
    const parent = this.nodeParent;
    const frameOf = this.nodeFrame;
    for (let n = node; n !== 0; n = parent[n]!) {
      const frame = table[frameOf[n]!];
      if (frame == null) this.invalidFrame(frameOf[n]!, delivered);
      out.push(frame!);
    }
    return out;
  }

  private invalidFrame(f: number, delivered: number): never {
    if (f >= this.frameTable.length) throw replayError(ErrorCode.TACHYON_FRAME_INDEX, `Invalid frame index: ${f}`, this.regionOffset(-1), delivered, null);
    throw replayError(ErrorCode.TACHYON_STRING_INDEX, 'Invalid string index in frame', this.reader.layout.frameTableOffset, delivered, null);
  }

  private regionOffset(offset: number): number {
    // Offsets inside a zstd region are not file offsets: point at the region then.
    if (offset < 0 || this.region.kind === 'zstd' || this.reader.layout.zstd) return HEADER_SIZE;
    return HEADER_SIZE + offset;
  }

  failure(delivered: number): ProfpackError {
    this.decoder.release();
    releaseOutput(this.decoder.out);
    const e = this.error!;
    return replayError(e.code, e.message, this.regionOffset(e.offset), delivered, e.offset);
  }

  /** End of the region: CPython's sample-count check; sets the reader's stats. */
  finish(delivered: number): number {
    releaseOutput(this.decoder.out);
    const s = this.decoder.stats();
    this.decoder.release();
    const replayed = s[5]!;
    const declared = this.reader.info.sampleCount;
    if (BigInt(replayed) !== declared) {
      throw replayError(
        ErrorCode.TACHYON_SAMPLE_COUNT_MISMATCH,
        `Sample count mismatch: header declares ${declared} samples but replay decoded ${replayed}`,
        28,
        delivered,
        null,
      );
    }
    this.reader.stats = {
      repeatRecords: s[0]!,
      repeatSamples: s[1]!,
      fullRecords: s[2]!,
      suffixRecords: s[3]!,
      popPushRecords: s[4]!,
      totalRecords: s[0]! + s[2]! + s[3]! + s[4]!,
      totalSamples: s[5]!,
      stackReconstructions: s[6]!,
    };
    return replayed;
  }
}
