/**
 * The writer end of a recording (see lib/record/wire): owns the Tachyon file,
 * ingests the harvests a recorded process sends, and finalizes the file when
 * the pipe ends — after the recorder's 'end' message, or without one when
 * the recorded process died. The file is then complete up to the last
 * harvest that arrived.
 */
import { existsSync, statSync } from 'node:fs';
import type { Frame } from '../../profile/index';
import { createTachyonSink, type TachyonSink } from './tachyon-sink';
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import { removeFile } from '../../file-retry';
import { SourceMapper } from '../../sourcemap/index';
import { encodeRecordedBy, type RecordedBy } from '../../recorded-by';
import { JOURNAL_SUFFIX, ProfilingMode, defaultCompression } from '../../tachyon/index';
import { ChunkIngester } from './cpu-ingest';
import {
  checkRotate,
  DEFAULT_FLUSH_INTERVAL_MS,
  type OnFile,
  type RotateOptions,
  type RotatedFileStats,
} from '../settings/index';
import { RotationFiles } from './rotation';
import { recordWriteError } from './write-error';
import { FrameParser, HeapFrameReceiver, epochOffsetUs, type HeapEventSink } from '../wire/index';
import type { WireChunk, WireMessage } from '../wire/index';

export interface RecordingHostOptions {
  /** The file (ignored with `rotate`: the files are named in its dir). */
  out: string;
  /** Rotate: a new file every `everyMs` (startRotating()), `keep` finished files left on disk. */
  rotate?: RotateOptions;
  intervalUs: number;
  compression?: 'zstd' | 'none';
  /** Header start time, µs (default now, as Unix epoch µs). */
  startTimeUs?: bigint;
  /** Added to V8's monotonic sample times (default: epochOffsetUs() when startTimeUs is not given, else 0). */
  epochOffsetUs?: bigint;
  /**
   * ProfileWriter flushIntervalMs: what a SIGKILL of the writing process loses (default 1000; `profpack recover`
   * salvages the rest).
   */
  flushIntervalMs?: number;
  /** Frames of compiled scripts written at their source-mapped position (default true). */
  sourceMaps?: boolean;
  /** Where the heap events of a `heap` recording go instead of the file. */
  heapSink?: HeapEventSink;
  /** The file holds the heap events that arrive (format version 2: tachyon-sink.ts says why). */
  heap?: boolean;
  /** What is said of a source map not used (default: process.emitWarning). */
  onWarning?: (warning: string) => void;
  /** Called once, when a write error stops the recording (finish() then throws the same error). */
  onWriteError?: (error: ProfpackError) => void;
  /**
   * Who runs the periodic work. 'host' (default): the writers flush every flushIntervalMs, startRotating() rotates.
   * 'caller': the caller calls flush() and rotateAndReport() (the inline writer, from the agent's timers: they run in
   * the recorded program, ChunkTarget.timed in lib/record/program/agent.ts says why).
   */
  timers?: 'host' | 'caller';
}

/** What a heap recording delivered. */
export interface HeapSummary {
  allocations: number;
  frees: number;
  /** Sampled objects born and dead between two polls (no stack, no size). */
  shortLived: number;
  /** Bytes of heap frames on the pipe. */
  bytes: number;
}

export interface HostSummary {
  out: string;
  samples: number;
  threads: number;
  durationSec: number;
  /** False when the recorded process ended without its recorder's 'end' (it crashed or was killed). */
  complete: boolean;
  /** Bytes of a harvest that was being sent when the process died (dropped). */
  truncatedBytes: number;
  /** Whether any message arrived (false: the recorded command never ran the preload). */
  heard: boolean;
  /** Heap events received (a recording without heap frames has none). */
  heap?: HeapSummary;
  /** Samples whose stack reached 256 frames, the cap (deeper ones keep their innermost 256), over every file. */
  stacksAtCap: number;
  /** `record --inline`: heap events (allocations and frees) the program wrote (`heap` is then absent). */
  inlineHeapEvents?: number;
}

export class RecordingHost {
  private sink: TachyonSink;
  /** The file being written now. */
  private out: string;
  private readonly rotation: RotationFiles | undefined;
  private file = { index: 0, samplesBefore: 0, heapEventsBefore: 0, threads: new Set<number>() };
  /** The current file's header start time (µs): the next file starts no earlier. */
  private fileStartUs: bigint;
  /** The current file's heap batches' times (µs, same clock as the samples): a heap-only file's span. */
  private heapSpan: { firstUs: number; lastUs: number } | undefined;
  private rotateTimer: NodeJS.Timeout | undefined;
  private readonly ingester: ChunkIngester;
  private readonly parser = new FrameParser();
  /** Heap frames, on the same clock as the samples. */
  private readonly heap: HeapFrameReceiver;
  private heapHeard = false;
  /** What the recording's first heap frame said (a rotated file begins with it). */
  private heapInfo: { intervalBytes: number } | undefined;
  private readonly mapFrame: ((frame: Frame) => Frame) | undefined;
  private readonly threads = new Set<number>();
  private end: { durationSec: number; threads: number } | undefined;
  private summary: HostSummary | undefined;
  private stacksAtCap = 0;
  private failure: ProfpackError | undefined;
  /**
   * The file could not be written (a full disk…): it and its journal are kept for recover, nothing more is
   * written.
   */
  private writeFailed = false;
  /** The recorder's own report that it could not start ('failed'). */
  private startFailure: ProfpackError | undefined;
  private recordedBy: string | undefined;

  /** Creates the file now, so that a path that cannot be written fails before anything runs. */
  constructor(private readonly options: RecordingHostOptions) {
    this.rotation = options.rotate === undefined ? undefined : new RotationFiles(checkRotate(options.rotate));
    this.out = this.rotation?.next() ?? options.out;
    const offset = options.epochOffsetUs ?? (options.startTimeUs === undefined ? epochOffsetUs() : 0n);
    if (options.sourceMaps !== false) {
      const mapper = new SourceMapper();
      // Once per script, while the program runs: a map refused (too large, unreadable) leaves its frames unmapped.
      mapper.onWarning = options.onWarning ?? ((warning) => process.emitWarning(`profpack: ${warning}`));
      this.mapFrame = mapper.mapFrame;
    }
    this.fileStartUs = options.startTimeUs ?? process.hrtime.bigint() / 1000n + offset;
    this.sink = this.createSink(this.out, this.fileStartUs);
    this.ingester = new ChunkIngester(this.sink, offset, this.mapFrame);
    this.heap = new HeapFrameReceiver(options.heapSink ?? this.fileHeapSink(), Number(offset));
  }

  /** The current file's heap sink, followed across rotations; the recording's interval is kept for the next file. */
  private fileHeapSink(): HeapEventSink | undefined {
    if (this.options.heap !== true) return undefined;
    return {
      begin: (info) => {
        this.heapInfo = info;
        this.sink.heap?.begin(info);
      },
      allocations: (batch) => {
        this.noteHeapTime(batch.timeUs);
        this.sink.heap?.allocations(batch);
      },
      frees: (batch) => {
        this.noteHeapTime(batch.timeUs);
        this.sink.heap?.frees(batch);
      },
      memory: (sample) => {
        this.noteHeapTime(sample.timeUs);
        this.sink.heap?.memory(sample);
      },
    };
  }

  private noteHeapTime(timeUs: number): void {
    if (this.heapSpan === undefined) this.heapSpan = { firstUs: timeUs, lastUs: timeUs };
    else this.heapSpan.lastUs = Math.max(this.heapSpan.lastUs, timeUs);
  }

  /** Heap events this host has received (allocations and frees). */
  private get heapEvents(): number {
    return this.heap.allocations + this.heap.frees;
  }

  private createSink(out: string, startTimeUs: bigint): TachyonSink {
    return createTachyonSink(out, {
      sampleIntervalUs: BigInt(Math.max(1, Math.round(this.options.intervalUs))),
      startTimeUs,
      compression: this.options.compression ?? defaultCompression(),
      mode: ProfilingMode.Wall,
      flushIntervalMs:
        this.options.timers === 'caller' ? undefined : (this.options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS),
      heap: this.options.heap === true && this.options.heapSink === undefined,
      mapFrame: this.mapFrame,
    });
  }

  /** The file being written now. */
  get currentFile(): string {
    return this.out;
  }

  /** Rotates every `rotate.everyMs` until finish(), calling onFile with each finished file. */
  startRotating(onFile: OnFile): void {
    if (this.options.rotate === undefined || this.rotateTimer !== undefined) return;
    this.rotateTimer = setInterval(() => this.rotateAndReport(onFile), this.options.rotate.everyMs);
    this.rotateTimer.unref();
  }

  /** One rotation (rotate()), its finished file handed to onFile; false once the recording is over. */
  rotateAndReport(onFile: OnFile): boolean {
    const done = this.rotate();
    if (done !== undefined) onFile(done.path, done.stats);
    return this.summary === undefined && !this.writeFailed;
  }

  /** One flush of the file being written, with `timers: 'caller'`; false once the recording is over or broken. */
  flush(): boolean {
    return this.summary === undefined && !this.writeFailed && this.sink.flush();
  }

  /**
   * Finalizes the current file and starts the next (rotating hosts only). A
   * file that got no sample since the last rotation is kept open instead.
   * If the next file cannot be created, writing goes on into the current one.
   */
  rotate(): { path: string; stats: RotatedFileStats } | undefined {
    if (this.rotation === undefined || this.summary !== undefined || this.failure !== undefined) return undefined;
    try {
      return this.rotateNow(this.rotation);
    } catch (err) {
      if (this.stopOnWriteError(err)) return undefined;
      throw err;
    }
  }

  private rotateNow(rotation: RotationFiles): { path: string; stats: RotatedFileStats } | undefined {
    // A heap-only recording (record --no-cpu) has heap events and no samples.
    if (this.ingester.samples === this.file.samplesBefore && this.heapEvents === this.file.heapEventsBefore)
      return undefined;
    const next = rotation.next();
    let sink: TachyonSink;
    let startUs: bigint;
    try {
      // The next file starts where this one's samples (or heap events) end: every later one is newer. Never before
      // this one's start: a file holding only CPU samples V8 took during the previous file's last poll (stamped
      // before the poll's time, which started this file) ends before it began, and a directory's reader, which
      // orders files by start, read this file's live-at-start objects after the polls that freed them.
      const endUs = this.ingester.lastTimeUs ?? BigInt(Math.round(this.heapSpan?.lastUs ?? 0));
      startUs = endUs > this.fileStartUs ? endUs : this.fileStartUs;
      sink = this.createSink(next, startUs);
      if (this.recordedBy !== undefined) sink.note(this.recordedBy);
    } catch (err) {
      process.emitWarning(
        `profpack: cannot start the next file ${next} (${(err as Error).message}); recording goes on into ${this.out}`,
      );
      return undefined;
    }
    // Objects still live cross into the next file as its 'live' batches, so that file alone knows them.
    const live = this.sink.heap?.liveObjects() ?? [];
    const done = this.closeFile(this.ingester.samples - this.file.samplesBefore);
    if (sink.heap !== null && this.heapInfo !== undefined) {
      sink.heap.begin(this.heapInfo);
      for (const batch of live) sink.heap.live(batch);
    }
    this.sink = sink;
    this.fileStartUs = startUs;
    this.out = next;
    this.ingester.retarget(sink);
    this.file = {
      index: this.file.index + 1,
      samplesBefore: this.ingester.samples,
      heapEventsBefore: this.heapEvents,
      threads: new Set(),
    };
    this.heapSpan = undefined;
    return done;
  }

  /**
   * Seconds from the first to the last sample ingested (the ingester starts afresh at each rotation), or with no
   * sample (a heap-only file) from the first to the last heap event; 0 before any.
   */
  private sampleSpanSec(): number {
    const { firstTimeUs, lastTimeUs } = this.ingester;
    if (firstTimeUs !== undefined && lastTimeUs !== undefined) return Number(lastTimeUs - firstTimeUs) / 1e6;
    return this.heapSpan === undefined ? 0 : (this.heapSpan.lastUs - this.heapSpan.firstUs) / 1e6;
  }

  /** Stats and finalize of the current file (its samples' own span). */
  private closeFile(samples: number, durationOverride?: number): { path: string; stats: RotatedFileStats } {
    const durationSec = durationOverride ?? this.sampleSpanSec();
    const threads = Math.max(1, this.file.threads.size);
    this.sink.setStats(durationSec, durationSec > 0 ? samples / threads / durationSec : 0);
    this.stacksAtCap += Number(this.sink.finalize() ?? 0);
    const stats: RotatedFileStats = {
      samples,
      threads: this.file.threads.size,
      durationSec,
      bytes: statSync(this.out).size,
      index: this.file.index,
    };
    this.rotation?.finished(this.out);
    return { path: this.out, stats };
  }

  /** Whether nothing more will be read: the recorder's 'end' or 'failed' came, or the stream is not ours. */
  get settled(): boolean {
    return this.end !== undefined || this.startFailure !== undefined || this.failure !== undefined;
  }

  /** Bytes from the pipe. A stream that is not ours stops ingesting (reported by finish()). */
  accept(bytes: Buffer): void {
    if (this.failure !== undefined || this.summary !== undefined) return;
    try {
      for (const message of this.parser.push(bytes)) this.handle(message);
      this.failure ??= this.parser.failure;
    } catch (err) {
      if (this.stopOnWriteError(err)) return;
      this.failure =
        err instanceof ProfpackError
          ? err
          : new ProfpackError(`recording pipe: ${(err as Error).message}`, {
              code: ErrorCode.RECORD_FAILED,
              cause: err,
            });
    }
  }

  /** The write error that stopped this recording (the file and its journal are kept), if one did. */
  get writeError(): ProfpackError | undefined {
    return this.writeFailed ? this.failure : undefined;
  }

  /**
   * A write error (ENOSPC, EIO…: the writer is broken) stops the recording: the file is closed as it is on disk and
   * its journal kept, so `recover` gives back every sample flushed before; the error says the OS's cause and how.
   * False for any other error.
   */
  private stopOnWriteError(err: unknown): boolean {
    if (
      !isProfpackError(err) ||
      (err.code !== ErrorCode.TACHYON_WRITE_IO && err.code !== ErrorCode.TACHYON_WRITE_BROKEN)
    )
      return false;
    if (this.writeFailed) return true;
    this.writeFailed = true;
    clearInterval(this.rotateTimer);
    this.sink.close();
    // No journal: no flush reached this file (the first failed), which then holds nothing recover can read.
    const flushed = existsSync(this.out + JOURNAL_SUFFIX);
    if (!flushed) removeFile(this.out);
    this.failure = recordWriteError(err, this.out, flushed, this.rotation !== undefined && this.file.index > 0);
    this.options.onWriteError?.(this.failure);
    return true;
  }

  private handle(message: WireMessage): void {
    if (message.kind === 'chunk') {
      this.noteThread(message.threadId);
      this.ingestChunk(message.chunk, message.threadId, message.mainThread);
    } else if (message.kind === 'heap') {
      this.acceptHeapFrame(message.body, message.offset);
    } else if (message.kind === 'about') {
      this.setRecordedBy(message.about);
    } else if (message.kind === 'ping') {
      // nothing to write
    } else if (message.kind === 'failed') {
      this.startFailure = new ProfpackError(String(message.message), {
        code: typeof message.code === 'string' ? message.code : ErrorCode.RECORD_FAILED,
      });
    } else if (message.kind === 'end') {
      this.endRecording(message.durationSec, message.threads);
    } else {
      throw new ProfpackError(
        `recording pipe: unknown message kind ${JSON.stringify((message as { kind?: unknown }).kind)}`,
        {
          code: ErrorCode.RECORD_FAILED,
          offset: this.parser.offset,
          expected: "'chunk' | 'heap' | 'ping' | 'end' | 'failed'",
        },
      );
    }
  }

  /** One heap frame's body (after its length word); `offset`: where the frame began in the stream. */
  acceptHeapFrame(body: Uint8Array, offset = 0): void {
    this.heapHeard = true;
    if (this.writeFailed) return;
    try {
      this.heap.receive(body, offset);
    } catch (err) {
      if (!this.stopOnWriteError(err)) throw err;
    }
  }

  /** What recorded the file: noted in this file and every later one. */
  setRecordedBy(about: RecordedBy): void {
    // Frames are mapped here, not in the recorded process: this host says whether they are.
    this.recordedBy = encodeRecordedBy({ ...about, sourceMaps: this.options.sourceMaps !== false });
    this.sink.note(this.recordedBy);
  }

  /** One harvest of a thread, off the pipe or from the recording beside this host. */
  ingestChunk(chunk: WireChunk, threadId: number, mainThread: boolean): void {
    this.noteThread(threadId);
    if (this.writeFailed) return;
    try {
      this.ingester.ingest(chunk, BigInt(threadId), mainThread);
    } catch (err) {
      if (!this.stopOnWriteError(err)) throw err;
    }
  }

  private noteThread(threadId: number): void {
    this.threads.add(threadId);
    this.file.threads.add(threadId);
  }

  /** The recorder's last word: its measured duration and thread count. */
  endRecording(durationSec: number, threads: number): void {
    this.end = { durationSec, threads };
  }

  /** A rotating host's last file, once finish() has finalized it. */
  lastFile: { path: string; stats: RotatedFileStats } | undefined;

  /** Whether the recorder's 'end' message has arrived. */
  get ended(): boolean {
    return this.end !== undefined;
  }

  get samples(): number {
    return this.ingester.samples;
  }

  /**
   * Writes the stats block and finalizes. Without the recorder's 'end' the
   * duration is the span of the samples that arrived. Idempotent. Throws the
   * stream's error, if any, after finalizing what came before it.
   */
  finish(): HostSummary {
    if (this.summary !== undefined) return this.summary;
    // The recorder never started: no file, its error (profpack record's one line and exit 2).
    if (this.startFailure !== undefined) {
      this.abandon();
      throw this.startFailure;
    }
    clearInterval(this.rotateTimer);
    const ing = this.ingester;
    const durationSec = this.end?.durationSec ?? this.sampleSpanSec();
    if (!this.writeFailed) {
      try {
        if (this.rotation !== undefined) {
          this.lastFile = this.closeFile(ing.samples - this.file.samplesBefore);
        } else {
          const threads = Math.max(1, this.end?.threads ?? this.threads.size);
          this.sink.setStats(durationSec, durationSec > 0 ? ing.samples / threads / durationSec : 0);
          this.stacksAtCap += Number(this.sink.finalize() ?? 0);
        }
      } catch (err) {
        if (!this.stopOnWriteError(err)) throw err;
      }
    }
    this.summary = {
      out: this.out,
      samples: ing.samples,
      threads: this.end?.threads ?? this.threads.size,
      durationSec,
      complete: this.end !== undefined,
      truncatedBytes: this.parser.leftover,
      heard: this.parser.offset > 0,
      stacksAtCap: this.stacksAtCap,
    };
    if (this.heapHeard)
      this.summary.heap = {
        allocations: this.heap.allocations,
        frees: this.heap.frees,
        shortLived: this.heap.shortLived,
        bytes: this.heap.bytes,
      };
    if (this.failure !== undefined) throw this.failure;
    return this.summary;
  }

  /** Discards the file (the command could not even start): closed and removed; kept after a write error (recover). */
  abandon(): void {
    if (this.summary !== undefined || this.writeFailed) return;
    clearInterval(this.rotateTimer);
    this.sink.close();
    removeFile(this.out);
  }
}
