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
import { ErrorCode, ProfpackError, invalidArgument } from '../../errors';
import { closeInput, edgeHash, inputChange, openInput, readInput, watchInput, type InputFile } from '../../input';
import { FOOTER_SIZE, HEADER_SIZE, ZSTD_MAX_DECOMPRESSED } from '../format';
import {
  checkTableCounts,
  parseFrameTable,
  parseLayout,
  parseStringTable,
  type FileBytes,
  type Layout,
  type ProfileInfo,
} from '../file/index';
import { nativeReader, type NativeFile, type NativeTachyonReader } from './native';
import { resolveFrame, type Frame } from './tables';
import {
  checkReaderOptions,
  checkReplayOptions,
  type Collector,
  type InterpreterInfo,
  type TypedCollector,
  type ReaderOptions,
  type ReplayOptions,
  type ReplayStats,
  type Sample,
} from './types';
import { checkZstdRegion, OUTPUT_CHUNK, withRecoverHint } from '../file/index';
import {
  NodeCache,
  ReplayRun,
  jsDecoder,
  nativeDecoder,
  type DecoderBackend,
  type Region,
  type RunVisitor,
  type Tuning,
} from './replay';
import { arrayDelivery, typedDelivery } from './collect';
import type { StackCoding } from '../codec/index';
import { readProfileV2, type V2Profile } from './v2/index';
import { isProfpackVersion2, v2Frames, v2Replay, v2Samples } from './v2/index';
import { replayNodesV1, replayNodesV2, type NodeReplay, type NodeVisitor } from './nodes';
import type { ModelSection, HeapTotals } from '../codec/index';
import { heapTotalsOf, heapTraceOf } from './heap-trace';
import type { HeapTraceSource } from '../../profile/index';

export type {
  Frame,
  ProfileInfo,
  ReaderOptions,
  Sample,
  ThreadInfo,
  InterpreterInfo,
  Collector,
  TypedCollector,
  ReplayOptions,
  ReplayStats,
} from './types';

/** Files up to this size are read whole at open by the native backend too, not mapped. */
const SMALL_FILE = 256 << 10;
/** A zstd region up to this size is kept decompressed after the open-stage check. */
const DEFAULT_KEEP_LIMIT = 16 << 20;

/**
 * A reader dropped without close() still gives its descriptor back when it is
 * collected (both backends hold one open for the change checks).
 */
const unclosed = new FinalizationRegistry<InputFile>((input) => closeInput(input));

export class ProfileReader {
  /** CPython's get_info(). */
  readonly info: ProfileInfo;
  readonly strings: readonly string[];
  /**
   * Resolved frame table; null for an entry whose string index is out of range (an error only if a sample uses it, as
   * in CPython).
   */
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
  private source: FileBytes | null;
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

  private constructor(
    source: FileBytes,
    file: NativeFile | null,
    native: NativeTachyonReader | null,
    options: ReaderOptions,
    input: InputFile | null = null,
  ) {
    this.native = native;
    this.file = file;
    this.input = input;
    this.source = source;
    this.backend = native ? 'native' : 'js';
    this.maxDecompressed = options.maxDecompressedSize ?? ZSTD_MAX_DECOMPRESSED;
    this.tuning = options.tuning ?? {};
    if (isProfpackVersion2(source)) {
      const v2 = readProfileV2(source.read(0, source.size), {
        backend: this.backend,
        maxDecompressedSize: this.maxDecompressed,
        keepDecompressedLimit: options.keepDecompressedLimit ?? DEFAULT_KEEP_LIMIT,
      });
      this.v2 = v2;
      this.stackCoding = v2.stackCoding;
      this.layout = v2.layout;
      this.info = this.layout.info;
      this.strings = v2.strings;
      this.frames = v2Frames(v2);
      this.sampleRegionSize = v2.regionSize;
      // Not read: samples come from this.v2, which decodes the region a block at a time.
      this.region = { kind: 'bytes', bytes: new Uint8Array(0) };
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
      const z = checkZstdRegion(
        source,
        regionEnd,
        this.maxDecompressed,
        options.keepDecompressedLimit ?? DEFAULT_KEEP_LIMIT,
      );
      this.sampleRegionSize = z.totalSize;
      this.region = z.data ? { kind: 'bytes', bytes: z.data } : { kind: 'zstd', length: z.totalSize };
    } else {
      this.sampleRegionSize = regionEnd - HEADER_SIZE;
      this.region = file
        ? { kind: 'file', file, length: this.sampleRegionSize }
        : { kind: 'bytes', bytes: source.read(HEADER_SIZE, regionEnd) };
    }
    checkTableCounts(layout);
    const tables = source.read(layout.stringTableOffset, layout.fileSize);
    this.strings = parseStringTable(
      tables,
      layout.stringTableOffset,
      layout.stringTableOffset,
      layout.info.stringCount,
      layout.fileSize,
    );
    const frameTable = parseFrameTable(
      tables,
      layout.stringTableOffset,
      layout.frameTableOffset,
      layout.info.frameCount,
      layout.fileSize,
    );
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
   * blocking): mapped by the native backend above 256 KiB, read whole otherwise and by the JS twin. Both
   * keep the descriptor and check between replay windows that the file is as
   * it was at open; a change is ERR_TACHYON_FILE_CHANGED (docs/reliability.md).
   */
  static open(path: string, options: ReaderOptions = {}): ProfileReader {
    const native = ProfileReader.pick(options);
    const input = openInput(path, ErrorCode.TACHYON_IO);
    try {
      // Between windows the header and footer are checked, not the metadata alone: an append, chmod or unlink goes on.
      const hasher = native ? native.edgeHash : edgeHash;
      // A small file is read whole and never mapped: unmapping, even a few pages, flushes the TLB of every CPU
      // the process runs on (an IPI each), 21 % of a 13k-sample open + replay + close (perf, bench/RESULTS.md).
      if (native && input.size > SMALL_FILE) {
        watchInput(input, hasher, HEADER_SIZE, FOOTER_SIZE);
        const file = native.openFile(input.fd, input.size, path);
        const source: FileBytes = { size: file.size, read: (start, end) => native.readRange(file, start, end) };
        try {
          return new ProfileReader(source, file, native, options, input);
        } catch (err) {
          native.closeFile(file);
          throw err;
        }
      }
      const bytes = readInput(input, ErrorCode.TACHYON_IO);
      // The edges' hash from the bytes just read, not two more preads; later checks pread them (the same FNV-1a 64).
      watchInput(input, hasher, HEADER_SIZE, FOOTER_SIZE, bytes);
      const source: FileBytes = { size: bytes.length, read: (start, end) => bytes.subarray(start, end) };
      return new ProfileReader(source, null, native, options, input);
    } catch (err) {
      closeInput(input);
      throw withRecoverHint(err, path);
    }
  }

  /** Reads a profile held in memory (not copied: do not modify it while the reader is in use). */
  static fromBuffer(bytes: Uint8Array, options: ReaderOptions = {}): ProfileReader {
    if (!(bytes instanceof Uint8Array))
      throw invalidArgument(
        'fromBuffer(bytes): bytes must be a Uint8Array (wrap an ArrayBuffer in new Uint8Array(buffer))',
        'Uint8Array',
      );
    const native = ProfileReader.pick(options);
    const source: FileBytes = { size: bytes.length, read: (start, end) => bytes.subarray(start, end) };
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
    let cache = new NodeCache();
    // One decoder step's samples, handed out before the next step (or before the error that ended it).
    const queue: Sample[] = [];
    const visitor: RunVisitor = {
      samples(t, node, status, ts, tsPos, count) {
        const seen = cache.seen(node);
        let stack = cache.get(node) as readonly number[] | undefined;
        if (stack === undefined) {
          stack = run.indices(node);
          cache.offer(node, stack, seen);
        }
        const threadId = run.threadIds[t]!;
        const interpreterId = run.interpreterIds[t]!;
        for (let k = 0; k < count; k++) {
          run.delivered++;
          queue.push({ threadId, interpreterId, timestampUs: ts[tsPos + k]!, status, stack });
        }
      },
      progress() {},
      reset() {
        cache = new NodeCache();
      },
    };
    for (let done = false; !done;) {
      let failure: { error: unknown } | null = null;
      try {
        done = run.next(visitor);
      } catch (err) {
        failure = { error: err };
      }
      for (let i = 0; i < queue.length; i++) yield queue[i]!;
      queue.length = 0;
      if (failure !== null) throw failure.error;
    }
  }

  /**
   * Replays every sample into collector.collect(stackFrames, timestampsUs), as
   * CPython's BinaryReader.replay does; returns the number of samples. With
   * `{ timestamps: 'typed' }` the timestamps come as a BigUint64Array view,
   * valid only during the call (TypedCollector).
   */
  replay(collector: Collector, options?: ReplayOptions & { timestamps?: 'array' }): number;
  replay(collector: TypedCollector, options: ReplayOptions & { timestamps: 'typed' }): number;
  replay(collector: Collector | TypedCollector, options: ReplayOptions = {}): number {
    if (
      collector === null ||
      typeof collector !== 'object' ||
      typeof (collector as Partial<Collector>).collect !== 'function'
    ) {
      throw invalidArgument(
        'replay(collector): collector must be an object with a collect(stackFrames, timestampsUs) method',
        'Collector',
      );
    }
    checkReplayOptions(options);
    // close() from inside collect() stops the replay at that call with one error, on both backends and versions
    // (the native decoder used to fail a batch later, the JS one to finish as if nothing had happened).
    const guarded = {
      collect: (stack: readonly InterpreterInfo[], timestamps: bigint[] & BigUint64Array): void => {
        collector.collect(stack, timestamps);
        if (this.region === null)
          throw new ProfpackError('the reader was closed during replay (close() inside collect())', {
            code: ErrorCode.TACHYON_READER_CLOSED,
          });
      },
    } as Collector & TypedCollector;
    if (this.v2 !== null) {
      this.assertOpen(false);
      return v2Replay(this.v2, this.frames, guarded, options, (stats) => (this.stats = stats));
    }
    return this.replayRun(guarded, options);
  }

  /** A version-2 file's model section (sample types, value columns, labels: docs/format-v2.md §8), or null. */
  /** A version-2 file's heap section totals (its events: heapTrace()), or null. */
  get heap(): HeapTotals | null {
    return this.v2 === null ? null : heapTotalsOf(this.v2);
  }

  /** The heap section's events (as openHeapTrace gives them), or null without one. */
  heapTrace(): HeapTraceSource | null {
    return this.v2 === null ? null : heapTraceOf(this.v2);
  }

  get model(): ModelSection | null {
    return this.v2?.model ?? null;
  }

  /**
   * The replay as stack-trie nodes (read/nodes.ts): one call per decoder
   * event, a version-1 REPEAT run as one call with its count, no frame list
   * per sample. Same checks and errors as replay(), thrown by the step that meets them.
   */
  replayNodes(visitor: NodeVisitor): NodeReplay {
    if (this.v2 !== null) {
      this.assertOpen(false);
      return replayNodesV2(this.v2, this.frames, visitor);
    }
    const run = this.startRun();
    return replayNodesV1(run, this.frames, visitor, (f) => run.invalidFrame(f));
  }

  private replayRun(collector: Collector | TypedCollector, options: ReplayOptions): number {
    const run = this.startRun();
    const onProgress = options.onProgress;
    const total = Number(this.info.sampleCount);
    const progress = onProgress ? (replayed: number) => onProgress(replayed, total) : () => {};
    const visitor =
      options.timestamps === 'typed'
        ? typedDelivery(run, collector as TypedCollector, progress)
        : arrayDelivery(run, collector as Collector, progress);
    onProgress?.(0, total);
    while (!run.next(visitor));
    const replayed = this.stats!.totalSamples;
    onProgress?.(replayed, total);
    return replayed;
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
    const context = {
      frames: this.frames,
      layout: this.layout,
      onStats: (stats: ReplayStats) => (this.stats = stats),
      fileChange: () => this.fileChange(),
      readsFile: this.file !== null && this.region!.kind !== 'bytes',
      path: this.path,
    };
    return new ReplayRun(
      context,
      decoder,
      this.region!,
      this.source!,
      this.sampleRegionSize,
      this.maxDecompressed,
      this.tuning.zstdChunk ?? OUTPUT_CHUNK,
    );
  }
}
