/**
 * `startRecording()`: sample this process's JS stacks with V8's sampler and
 * stream them, one harvest at a time, into a Tachyon file (or any sink).
 *
 * Threads: the main thread is Node's threadId 0 with the MAIN_THREAD status
 * bit; with `workers`, each worker thread that runs the worker agent (the
 * `profpack record` preload does that in every worker) samples its own
 * isolate and posts its chunks here over a BroadcastChannel, and is written
 * as thread `worker.threadId`. All threads use interpreter id 0.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BroadcastChannel, isMainThread, threadId as ownThreadId } from 'node:worker_threads';
import type { CpuProfile } from '../convert/cpuprofile';
import type { Frame, ProfileSink } from '../convert/model';
import { SourceMapper } from '../sourcemap/index';
import { ErrorCode, ProfpackError, type ErrorCodeValue } from '../errors';
import { ProfilingMode } from '../tachyon/index';
import { createTachyonSink, type TachyonSink } from '../convert/tachyon';
import { DEFAULT_FLUSH_INTERVAL_MS, RecordingHost } from './host';
import { ChunkIngester, epochOffsetUs, newSamplesInOrder } from './ingest';
import { checkRotate, safeOnFile, type OnFile, type RotateOptions } from './rotate';
import { RecordEnv } from './preload-env';
import { describeThisProcess, encodeRecordedBy, type RecordedBy } from './recorded-by';
import { V8Sampler } from './sampler';
import { FdSender, FrameNumbers } from './wire';

export interface RecordingOptions {
  /** Tachyon file to write (ignored when `sink` or `fd` is given). */
  out?: string;
  /** Where samples go instead of a file (e.g. a MemoryProfile). */
  sink?: ProfileSink & Partial<Pick<TachyonSink, 'finalize' | 'setStats' | 'close'>>;
  /**
   * Who writes `out`. 'process' (default): a small writer process fed over a
   * pipe (wire.ts), so that a hard crash of this process (SIGKILL, abort, out
   * of memory) loses at most the last harvest interval. 'inline': a
   * ProfileWriter in this process (no extra process; a hard crash loses the
   * recording). Either way the file is finalized on exit, SIGINT/SIGTERM and
   * fatal exceptions, and is final when stop() returns.
   */
  writer?: 'inline' | 'process';
  /** Send harvests over this pipe descriptor to a RecordingHost instead (what `profpack record`'s preload uses). */
  fd?: number;
  /** V8 sampling interval in µs (default 1000). */
  intervalUs?: number;
  /** How often chunks are harvested and written, in ms (default 1000): what a hard crash can lose. */
  harvestMs?: number;
  /**
   * How often the file is flushed with its recovery journal, in ms (default
   * 1000): what a SIGKILL of the writing process loses (`profpack recover`).
   */
  flushIntervalMs?: number;
  compression?: 'zstd' | 'none';
  /** Also record worker threads that run the worker agent. */
  workers?: boolean;
  /** Channel name the worker agents post to (default derived from the pid). */
  channel?: string;
  /**
   * Finalize on normal exit, on SIGINT/SIGTERM that nothing else handles (then
   * re-raise it) and on an uncaught exception that will end the process
   * (default true).
   */
  handleExit?: boolean;
  /**
   * Rotate: finalize a file every `everyMs` and go on in the next one in
   * `dir` (named PREFIX-<start>-<pid>-NNNNN.tach), `keep` finished files at
   * most left on disk. `out` is then not used. Works with both writers.
   */
  rotate?: RotateOptions;
  /** Each finished file of a rotating recording (the last one at stop()), e.g. to ship it. */
  onFile?: OnFile;
  /** Frames of compiled scripts written at their source-mapped position (default true; files only, not `sink`). */
  sourceMaps?: boolean;
}

export interface RecordingSummary {
  /** The file written (a rotating recording's last file). */
  out: string | undefined;
  samples: number;
  threads: number;
  durationSec: number;
}

export interface Recording {
  /** Harvests now (also done every `harvestMs`). */
  harvest(): void;
  /** Final harvest, then finalizes the file (waiting for the writer process, if any). Idempotent. */
  stop(): RecordingSummary;
  readonly stopped: boolean;
}

export interface WorkerChunkMessage {
  kind: 'profpack-chunk';
  threadId: number;
  profile: CpuProfile;
}

export function defaultChannelName(): string {
  return `profpack-record-${process.pid}`;
}

/** Where harvests go: into a sink here, or over a pipe to a writer elsewhere. */
interface ChunkTarget {
  chunk(profile: CpuProfile, threadId: number, mainThread: boolean): void;
  /** The last word: stats and finalize (inline), the 'end' message (pipe). */
  end(durationSec: number, threads: number): void;
  readonly samples: number;
  /** After a harvest: whether the writer is still there (a pipe's writer process may be gone). */
  alive(): boolean;
}

function sinkTarget(sink: NonNullable<RecordingOptions['sink']>, clockOffsetUs = 0n, mapFrame?: (frame: Frame) => Frame): ChunkTarget {
  const ingester = new ChunkIngester(sink, clockOffsetUs, mapFrame);
  return {
    chunk: (profile, threadId, mainThread) => void ingester.ingest(profile, BigInt(threadId), mainThread),
    end(durationSec, threads) {
      // The stats block: measured duration and the rate of samples actually taken.
      sink.setStats?.(durationSec, durationSec > 0 ? ingester.samples / threads / durationSec : 0);
      sink.finalize?.();
    },
    get samples() {
      return ingester.samples;
    },
    alive: () => true,
  };
}

/** The inline writer of a rotating recording: a RecordingHost in this process (the writer process runs the same host). */
function hostTarget(host: RecordingHost, onFile: OnFile): ChunkTarget {
  host.startRotating(onFile);
  return {
    chunk: (profile, threadId, mainThread) => host.ingestChunk(profile, threadId, mainThread),
    end(durationSec, threads) {
      host.endRecording(durationSec, threads);
      host.finish();
      if (host.lastFile !== undefined) onFile(host.lastFile.path, host.lastFile.stats);
    },
    get samples() {
      return host.samples;
    },
    alive: () => true,
  };
}

function pipeTarget(sender: FdSender, about: RecordedBy): ChunkTarget {
  sender.send({ kind: 'about', about });
  const numbers = new FrameNumbers();
  // Counted as the writer will count them (overlapping harvests share ticks).
  const newest = new Map<number, bigint>();
  let samples = 0;
  let sent = false;
  return {
    chunk(profile, threadId, mainThread) {
      const { order, times } = newSamplesInOrder(profile, newest.get(threadId));
      if (order.length === 0) return;
      newest.set(threadId, times[order[order.length - 1]!]!);
      samples += order.length;
      sent = true;
      sender.send({ kind: 'chunk', threadId, mainThread, profile: numbers.encode(profile) });
    },
    alive() {
      // An idle harvest still writes (a ping): only a write finds out that the writer has gone.
      if (!sent) sender.send({ kind: 'ping' });
      sent = false;
      return sender.ok;
    },
    end(durationSec, threads) {
      sender.send({ kind: 'end', durationSec, threads });
    },
    get samples() {
      return samples;
    },
  };
}

export function startRecording(options: RecordingOptions = {}): Recording {
  if (!isMainThread) {
    throw new ProfpackError('startRecording() runs on the main thread; workers use startWorkerAgent()', { code: ErrorCode.INVALID_ARGUMENT });
  }
  const intervalUs = options.intervalUs ?? 1000;
  if (!Number.isFinite(intervalUs) || intervalUs < 1) throw new ProfpackError(`intervalUs must be ≥ 1, not ${intervalUs}`, { code: ErrorCode.INVALID_ARGUMENT });
  const harvestMs = options.harvestMs ?? 1000;
  if (!Number.isFinite(harvestMs) || harvestMs < 1) throw new ProfpackError(`harvestMs must be ≥ 1, not ${harvestMs}`, { code: ErrorCode.INVALID_ARGUMENT });
  const writerMode = options.writer ?? 'process';
  if (writerMode !== 'inline' && writerMode !== 'process') throw new ProfpackError(`writer must be 'inline' or 'process', not ${String(writerMode)}`, { code: ErrorCode.INVALID_ARGUMENT });
  const rotate = options.rotate === undefined ? undefined : checkRotate(options.rotate);
  if (rotate !== undefined && (options.sink !== undefined || options.fd !== undefined)) throw new ProfpackError('rotate writes files: it excludes sink and fd', { code: ErrorCode.INVALID_ARGUMENT });
  const onFile = safeOnFile(options.onFile);
  const out = options.sink === undefined && options.fd === undefined ? (options.out ?? 'profile.tach') : undefined;
  // A file recording is on the Unix epoch (V8's own sample times are monotonic).
  const clockOffsetUs = epochOffsetUs();
  const startTimeUs = process.hrtime.bigint() / 1000n + clockOffsetUs;
  const about = describeThisProcess(intervalUs);
  let writerProcess: WriterProcess | undefined;
  let rotatingHost: RecordingHost | undefined;
  let target: ChunkTarget;
  if (options.sink !== undefined) {
    target = sinkTarget(options.sink);
  } else if (options.fd !== undefined) {
    target = pipeTarget(new FdSender(options.fd), about);
  } else if (writerMode === 'process') {
    writerProcess = spawnWriterProcess({ out: out!, intervalUs, compression: options.compression ?? 'zstd', startTimeUs, epochOffsetUs: clockOffsetUs, rotate, flushIntervalMs: options.flushIntervalMs, sourceMaps: options.sourceMaps });
    target = pipeTarget(writerProcess.sender, about);
  } else if (rotate !== undefined) {
    rotatingHost = new RecordingHost({ out: out!, intervalUs, compression: options.compression ?? 'zstd', startTimeUs, epochOffsetUs: clockOffsetUs, rotate, flushIntervalMs: options.flushIntervalMs, sourceMaps: options.sourceMaps });
    rotatingHost.setRecordedBy(about);
    target = hostTarget(rotatingHost, onFile);
  } else {
    const sink = createTachyonSink(out!, {
      sampleIntervalUs: BigInt(Math.round(intervalUs)),
      startTimeUs,
      compression: options.compression ?? 'zstd',
      mode: ProfilingMode.Wall,
      flushIntervalMs: options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS,
    });
    sink.note(encodeRecordedBy(about));
    target = sinkTarget(sink, clockOffsetUs, options.sourceMaps === false ? undefined : new SourceMapper().mapFrame);
  }
  const sampler = new V8Sampler(intervalUs);
  const threads = new Set<number>([ownThreadId]);
  let channel: BroadcastChannel | undefined;
  if (options.workers === true) {
    channel = new BroadcastChannel(options.channel ?? defaultChannelName());
    channel.onmessage = (event: unknown) => {
      const data = (event as { data: WorkerChunkMessage }).data;
      if (data?.kind !== 'profpack-chunk' || stopped) return;
      threads.add(data.threadId);
      target.chunk(data.profile, data.threadId, false);
    };
    (channel as unknown as { unref?: () => void }).unref?.();
  }
  sampler.start();
  let stopped = false;
  let summary: RecordingSummary | undefined;
  const startedAt = process.hrtime.bigint();

  const harvest = (): void => {
    if (stopped) return;
    const chunk = sampler.harvest(true);
    if (chunk !== undefined) target.chunk(chunk, ownThreadId, true);
    // The writer process reports the files it finished; hand them to onFile here.
    writerProcess?.pollFiles(onFile);
    // The writer process (or `profpack record`) is gone, killed: the program
    // outlives its profiler, but stops paying for sampling nobody writes.
    if (!target.alive()) detach();
  };
  let detached = false;
  const detach = (): void => {
    detached = true;
    clearInterval(timer);
    sampler.dispose();
    channel?.close();
    stopped = true;
  };
  const timer = setInterval(harvest, harvestMs);
  timer.unref();

  // On the way out the program's own exit code and signal matter more than the recording: warn, never throw.
  const stopQuietly = (): void => {
    try {
      recording.stop();
    } catch (err) {
      process.stderr.write(`profpack: the recording could not be finalized: ${(err as Error).message}\n`);
    }
  };
  const onExit = stopQuietly;
  const onSignal = (signal: NodeJS.Signals): void => {
    // Another listener means the program handles the signal itself: keep recording; 'exit' finalizes.
    if (process.listenerCount(signal) > 1) return;
    stopQuietly();
    process.kill(process.pid, signal);
  };
  const onUncaught = (): void => {
    if (process.listenerCount('uncaughtException') === 0) stopQuietly();
  };
  const handleExit = options.handleExit ?? true;
  if (handleExit) {
    process.on('exit', onExit);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('uncaughtExceptionMonitor', onUncaught);
  }

  const recording: Recording = {
    harvest,
    get stopped() {
      return stopped;
    },
    stop(): RecordingSummary {
      if (summary !== undefined) return summary;
      clearInterval(timer);
      if (handleExit) {
        process.removeListener('exit', onExit);
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
        process.removeListener('uncaughtExceptionMonitor', onUncaught);
      }
      const chunk = detached ? undefined : sampler.harvest(false);
      if (!detached) sampler.dispose();
      stopped = true;
      channel?.close();
      if (chunk !== undefined) target.chunk(chunk, ownThreadId, true);
      const durationSec = Number(process.hrtime.bigint() - startedAt) / 1e9;
      summary = { out, samples: target.samples, threads: threads.size, durationSec };
      target.end(durationSec, threads.size);
      if (writerProcess !== undefined) summary.out = writerProcess.waitFinal(onFile) ?? out;
      else if (rotatingHost !== undefined) summary.out = rotatingHost.currentFile;
      if (options.fd !== undefined) closeQuietly(options.fd);
      return summary;
    },
  };
  return recording;
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed by the program, or never ours to close.
  }
}

interface WriterProcess {
  sender: FdSender;
  /** A rotating writer's finished files so far ('file' lines), without waiting. */
  pollFiles(onFile: OnFile): void;
  /** After the 'end' message: blocks until the writer has finalized the file (its summary line); returns the last file. */
  waitFinal(onFile: OnFile): string | undefined;
}

/** A writer process's stdout line about a finished file of a rotating recording. */
const FILE_LINE = 'file ';

function fileLine(line: string, onFile: OnFile): boolean {
  if (!line.startsWith(FILE_LINE)) return false;
  const { path: file, stats } = JSON.parse(line.slice(FILE_LINE.length)) as { path: string; stats: Parameters<OnFile>[1] };
  onFile(file, stats);
  return true;
}

/** How long startRecording() waits for the writer process to create the file, and stop() for it to finalize. */
const WRITER_READY_TIMEOUT_MS = 20_000;
const WRITER_FINAL_TIMEOUT_MS = 60_000;

/**
 * The 'process' writer: `node writer-process.js` in its own process group (a
 * terminal's Ctrl-C must not kill it before the last harvest arrives),
 * reading the pipe on its stdin. On stdout it says 'ready' once the file is
 * created and answers the 'end' message with one line once the file is
 * final; both are read synchronously (stop() also runs in 'exit' handlers,
 * where nothing asynchronous does).
 */
function spawnWriterProcess(settings: WriterProcessSettings): WriterProcess {
  const script = path.join(__dirname, 'writer-process.js');
  if (!fs.existsSync(script)) throw new ProfpackError(`the writer process script is missing (${script}); run "npm run compile"`, { code: ErrorCode.RECORD_FAILED });
  const child = spawn(process.execPath, [script, JSON.stringify({ ...settings, startTimeUs: String(settings.startTimeUs), epochOffsetUs: String(settings.epochOffsetUs) })], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
    env: { ...process.env, [RecordEnv.children]: '' }, // not a child to record (it would record itself, and so on)
  });
  // The recording must not keep the program alive.
  child.unref();
  const handles = [child.stdin, child.stdout] as unknown as { _handle?: { fd?: number }; unref?: () => void }[];
  for (const h of handles) h.unref?.();
  const inFd = handles[0]!._handle?.fd;
  const outFd = handles[1]!._handle?.fd;
  if (typeof inFd !== 'number' || inFd < 0 || typeof outFd !== 'number' || outFd < 0) {
    child.kill();
    throw new ProfpackError("writer: 'process' needs pipe descriptors, which this platform's Node does not expose; use writer: 'inline'", { code: ErrorCode.RECORD_FAILED });
  }
  // Between harvests the event loop runs, and libuv reads the pipe into child.stdout's buffer: take that first.
  const lines = new LineReader(outFd, () => child.stdout?.read() as Buffer | null);
  // It answers 'ready' once the file is created, or why it could not be: a bad path fails here, as inline.
  const ready = lines.next(WRITER_READY_TIMEOUT_MS);
  if (ready !== 'ready') {
    child.stdin?.destroy();
    child.stdout?.destroy();
    if (ready?.startsWith('error: ')) {
      const { code, message } = JSON.parse(ready.slice(7)) as { code?: string; message: string };
      throw new ProfpackError(message, { code: (Object.values(ErrorCode) as string[]).includes(code ?? '') ? (code as ErrorCodeValue) : ErrorCode.RECORD_FAILED });
    }
    throw new ProfpackError(`the recording's writer process did not start (no answer in ${WRITER_READY_TIMEOUT_MS} ms)`, { code: ErrorCode.RECORD_FAILED });
  }
  const sender = new FdSender(inFd);
  return {
    sender,
    pollFiles(onFile) {
      for (let line = lines.next(0); line !== undefined; line = lines.next(0)) {
        // Anything else (an error) is for waitFinal.
        if (!fileLine(line, onFile)) {
          lines.unread(line);
          return;
        }
      }
    },
    waitFinal(onFile) {
      let line = lines.next(WRITER_FINAL_TIMEOUT_MS);
      let last: string | undefined;
      while (line !== undefined && line.startsWith(FILE_LINE)) {
        last = (JSON.parse(line.slice(FILE_LINE.length)) as { path: string }).path;
        fileLine(line, onFile);
        line = lines.next(WRITER_FINAL_TIMEOUT_MS);
      }
      child.stdin?.destroy();
      child.stdout?.destroy();
      if (!sender.ok || line === undefined || !line.startsWith('{')) {
        const why = line?.startsWith('error: ') ? `: ${line.slice(7)}` : ' (it is gone)';
        throw new ProfpackError(`the recording's writer process did not finalize ${last ?? settings.out}${why}`, { code: ErrorCode.RECORD_FAILED });
      }
      return last;
    },
  };
}

/** Lines from a (non-blocking) pipe, read synchronously by polling. */
class LineReader {
  private text = '';
  private readonly chunk = Buffer.alloc(4096);
  private readonly pause = new Int32Array(new SharedArrayBuffer(4));
  private eof = false;

  constructor(
    private readonly fd: number,
    /** Bytes already read from the pipe by someone else (the stream over it), older than anything readSync gets. */
    private readonly buffered: () => Buffer | null = () => null,
  ) {}

  /** The next line; undefined at EOF, on a read error or after `timeoutMs` (0: only what has arrived). */
  next(timeoutMs: number): string | undefined {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.text.indexOf('\n');
      if (nl >= 0) {
        const line = this.text.slice(0, nl);
        this.text = this.text.slice(nl + 1);
        return line;
      }
      if (this.eof) return undefined;
      const early = this.buffered();
      if (early !== null && early.length > 0) {
        this.text += early.toString('utf8');
        continue;
      }
      try {
        const n = fs.readSync(this.fd, this.chunk, 0, this.chunk.length, null);
        if (n === 0) this.eof = true;
        else this.text += this.chunk.toString('utf8', 0, n);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= deadline) return undefined;
        Atomics.wait(this.pause, 0, 0, 2);
      }
    }
  }

  /** Puts a line back: the next next() returns it. */
  unread(line: string): void {
    this.text = `${line}\n${this.text}`;
  }
}

export interface WriterProcessSettings {
  out: string;
  intervalUs: number;
  compression: 'zstd' | 'none';
  startTimeUs: bigint;
  epochOffsetUs: bigint;
  rotate?: RotateOptions;
  flushIntervalMs?: number;
  sourceMaps?: boolean;
}

/**
 * In a worker thread: sample this isolate and post each harvested chunk to
 * the main thread's recorder. Returns a stop function (also run on the
 * worker's 'exit').
 */
export function startWorkerAgent(options: { intervalUs?: number; harvestMs?: number; channel?: string } = {}): () => void {
  if (isMainThread) throw new ProfpackError('startWorkerAgent() runs in a worker thread', { code: ErrorCode.INVALID_ARGUMENT });
  const sampler = new V8Sampler(options.intervalUs ?? 1000);
  const channel = new BroadcastChannel(options.channel ?? defaultChannelName());
  (channel as unknown as { unref?: () => void }).unref?.();
  let stopped = false;
  const post = (profile: CpuProfile | undefined) => {
    if (profile !== undefined && profile.samples.length > 0) channel.postMessage({ kind: 'profpack-chunk', threadId: ownThreadId, profile } satisfies WorkerChunkMessage);
  };
  sampler.start();
  const timer = setInterval(() => post(sampler.harvest(true)), options.harvestMs ?? 1000);
  timer.unref();
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    post(sampler.harvest(false));
    sampler.dispose();
    channel.close();
  };
  process.on('exit', stop);
  return stop;
}
