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
import * as fs from 'node:fs';
import { BroadcastChannel, isMainThread, threadId as ownThreadId } from 'node:worker_threads';
import type { CpuProfile } from '../../v8/index';
import type { ProfileSink } from '../writer/index';
import type { Frame } from '../../profile/index';
import { SourceMapper } from '../../sourcemap/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { ProfilingMode } from '../../tachyon/index';
import { createTachyonSink, type TachyonSink } from '../writer/index';
import { checkHeapOptions, HeapFrameReceiver, HeapRecorder, type HeapEventSink, type HeapOptions } from '../heap/index';
import { DEFAULT_FLUSH_INTERVAL_MS, RecordingHost } from '../writer/index';
import { ChunkIngester, epochOffsetUs, newSamplesInOrder } from '../writer/index';
import {
  MAX_INTERVAL_US,
  MAX_TIMER_MS,
  checkRange,
  checkRotate,
  safeOnFile,
  type OnFile,
  type RotateOptions,
} from '../settings/index';
import { describeThisProcess, encodeRecordedBy, type RecordedBy } from '../agent/index';
import { V8Sampler } from '../agent/index';
import { FdSender, FrameNumbers } from '../wire/index';
import { spawnWriterProcess, type WriterProcess } from '../agent/index';

export type { WriterProcessSettings } from '../agent/index';

export interface RecordingOptions {
  /** Tachyon file to write (ignored when `sink` or `fd` is given). */
  out?: string;
  /** Where samples go instead of a file (e.g. a MemoryProfile). */
  sink?: ProfileSink & Partial<Pick<TachyonSink, 'finalize' | 'setStats' | 'close'>>;
  /**
   * Who writes `out`. 'process' (default): a small writer process fed over a
   * pipe (lib/record/wire), so that a hard crash of this process (SIGKILL, abort, out
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
  /**
   * Also record the heap: V8's sampled allocations and when they die, polled
   * at every harvest, and at once and often once the used heap nears V8's
   * limit. Main thread only.
   */
  heap?: HeapOptions | true;
  /** Where heap events go with `sink` or the inline writer (the writer process has its own). */
  heapSink?: HeapEventSink;
  /** Frames of compiled scripts written at their source-mapped position (default true; files only, not `sink`). */
  sourceMaps?: boolean;
}

export interface RecordingSummary {
  /** The file written (a rotating recording's last file). */
  out: string | undefined;
  samples: number;
  threads: number;
  durationSec: number;
  /** Heap events sent (allocations and frees), with `heap`. */
  heapEvents?: number;
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
  /** One heap poll as a whole heap frame (heap/wire.ts). */
  heapFrame(frame: Buffer): void;
}

function sinkTarget(
  sink: NonNullable<RecordingOptions['sink']>,
  clockOffsetUs = 0n,
  heapSink?: HeapEventSink,
  mapFrame?: (frame: Frame) => Frame,
): ChunkTarget {
  const ingester = new ChunkIngester(sink, clockOffsetUs, mapFrame);
  // Heap polls take the pipe's coding here too: one path from poll to sink.
  const heap = new HeapFrameReceiver(heapSink, Number(clockOffsetUs));
  return {
    heapFrame: (frame) => heap.receive(frame.subarray(4), 0),
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

/**
 * The inline writer of a rotating recording: a RecordingHost in this process (the writer process runs the same
 * host).
 */
function hostTarget(host: RecordingHost, onFile: OnFile): ChunkTarget {
  host.startRotating(onFile);
  return {
    heapFrame: (frame) => host.acceptHeapFrame(frame.subarray(4)),
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
    heapFrame(frame) {
      sent = true;
      sender.sendFrame(frame);
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
    throw new ProfpackError('startRecording() runs on the main thread; workers use startWorkerAgent()', {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  }
  const intervalUs = options.intervalUs ?? 1000;
  checkRange('intervalUs', intervalUs, 1, MAX_INTERVAL_US, 'µs');
  const harvestMs = checkRange('harvestMs', options.harvestMs ?? 1000, 1, MAX_TIMER_MS, 'ms');
  const writerMode = options.writer ?? 'process';
  if (writerMode !== 'inline' && writerMode !== 'process')
    throw new ProfpackError(`writer must be 'inline' or 'process', not ${String(writerMode)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  const rotate = options.rotate === undefined ? undefined : checkRotate(options.rotate);
  if (rotate !== undefined && (options.sink !== undefined || options.fd !== undefined))
    throw new ProfpackError('rotate writes files: it excludes sink and fd', { code: ErrorCode.INVALID_ARGUMENT });
  const onFile = safeOnFile(options.onFile);
  const heapOptions = options.heap === undefined ? undefined : checkHeapOptions(options.heap);
  if (
    options.heapSink !== undefined &&
    (heapOptions === undefined ||
      (options.sink === undefined && writerMode === 'process') ||
      options.fd !== undefined ||
      rotate !== undefined)
  ) {
    throw new ProfpackError(
      'heapSink takes the heap events of a heap recording with sink or the inline writer ' +
        '(the writer process and fd have their own)',
      { code: ErrorCode.INVALID_ARGUMENT },
    );
  }
  const out = options.sink === undefined && options.fd === undefined ? (options.out ?? 'profile.tach') : undefined;
  // A file recording is on the Unix epoch (V8's own sample times are monotonic).
  const clockOffsetUs = epochOffsetUs();
  const startTimeUs = process.hrtime.bigint() / 1000n + clockOffsetUs;
  const about = describeThisProcess(intervalUs, options.sourceMaps !== false);
  let writerProcess: WriterProcess | undefined;
  let rotatingHost: RecordingHost | undefined;
  let target: ChunkTarget;
  if (options.sink !== undefined) {
    target = sinkTarget(options.sink, 0n, options.heapSink);
  } else if (options.fd !== undefined) {
    target = pipeTarget(new FdSender(options.fd), about);
  } else if (writerMode === 'process') {
    writerProcess = spawnWriterProcess({
      out: out!,
      intervalUs,
      compression: options.compression ?? 'zstd',
      startTimeUs,
      epochOffsetUs: clockOffsetUs,
      rotate,
      flushIntervalMs: options.flushIntervalMs,
      sourceMaps: options.sourceMaps,
      heap: heapOptions !== undefined,
    });
    target = pipeTarget(writerProcess.sender, about);
  } else if (rotate !== undefined) {
    rotatingHost = new RecordingHost({
      out: out!,
      intervalUs,
      compression: options.compression ?? 'zstd',
      startTimeUs,
      epochOffsetUs: clockOffsetUs,
      rotate,
      flushIntervalMs: options.flushIntervalMs,
      sourceMaps: options.sourceMaps,
      heap: heapOptions !== undefined,
    });
    rotatingHost.setRecordedBy(about);
    target = hostTarget(rotatingHost, onFile);
  } else {
    const mapFrame = options.sourceMaps === false ? undefined : new SourceMapper().mapFrame;
    const sink = createTachyonSink(out!, {
      sampleIntervalUs: BigInt(Math.round(intervalUs)),
      startTimeUs,
      compression: options.compression ?? 'zstd',
      mode: ProfilingMode.Wall,
      flushIntervalMs: options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS,
      heap: heapOptions !== undefined && options.heapSink === undefined,
      mapFrame,
    });
    sink.note(encodeRecordedBy(about));
    target = sinkTarget(sink, clockOffsetUs, options.heapSink ?? sink.heap ?? undefined, mapFrame);
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
  const heapRecorder =
    heapOptions === undefined
      ? undefined
      : new HeapRecorder(heapOptions, (frame) => target.heapFrame(frame), ownThreadId);
  let stopped = false;
  let summary: RecordingSummary | undefined;
  const startedAt = process.hrtime.bigint();

  const harvest = (): void => {
    if (stopped) return;
    const chunk = sampler.harvest(true);
    if (chunk !== undefined) target.chunk(chunk, ownThreadId, true);
    heapRecorder?.poll();
    // The writer process reports the files it finished; hand them to onFile here.
    writerProcess?.pollFiles(onFile);
    // The writer process (or `profpack record`) is gone, killed: the program
    // outlives its profiler, but stops paying for sampling nobody writes.
    if (!target.alive()) detach();
  };
  let detached = false;
  const detach = (): void => {
    detached = true;
    stopHarvests();
    heapRecorder?.dispose();
    sampler.dispose();
    channel?.close();
    stopped = true;
  };
  let stopHarvests: () => void;
  if (heapRecorder === undefined) {
    const timer = setInterval(harvest, harvestMs);
    timer.unref();
    stopHarvests = () => clearInterval(timer);
  } else {
    // Near the heap limit harvests come at once and faster (heap/limit.ts).
    stopHarvests = heapRecorder.drive(harvest, harvestMs);
  }

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
      stopHarvests();
      if (handleExit) {
        process.removeListener('exit', onExit);
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
        process.removeListener('uncaughtExceptionMonitor', onUncaught);
      }
      const chunk = detached ? undefined : sampler.harvest(false);
      if (!detached) sampler.dispose();
      channel?.close();
      if (chunk !== undefined) target.chunk(chunk, ownThreadId, true);
      if (!detached) {
        heapRecorder?.poll();
        heapRecorder?.dispose();
      }
      stopped = true;
      const durationSec = Number(process.hrtime.bigint() - startedAt) / 1e9;
      summary = { out, samples: target.samples, threads: threads.size, durationSec };
      if (heapRecorder !== undefined) summary.heapEvents = heapRecorder.events;
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

/**
 * In a worker thread: sample this isolate and post each harvested chunk to
 * the main thread's recorder. Returns a stop function (also run on the
 * worker's 'exit').
 */
export function startWorkerAgent(
  options: { intervalUs?: number; harvestMs?: number; channel?: string } = {},
): () => void {
  if (isMainThread)
    throw new ProfpackError('startWorkerAgent() runs in a worker thread', { code: ErrorCode.INVALID_ARGUMENT });
  const sampler = new V8Sampler(checkRange('intervalUs', options.intervalUs ?? 1000, 1, MAX_INTERVAL_US, 'µs'));
  const harvestMs = checkRange('harvestMs', options.harvestMs ?? 1000, 1, MAX_TIMER_MS, 'ms');
  const channel = new BroadcastChannel(options.channel ?? defaultChannelName());
  (channel as unknown as { unref?: () => void }).unref?.();
  let stopped = false;
  const post = (profile: CpuProfile | undefined) => {
    if (profile !== undefined && profile.samples.length > 0)
      channel.postMessage({ kind: 'profpack-chunk', threadId: ownThreadId, profile } satisfies WorkerChunkMessage);
  };
  sampler.start();
  const timer = setInterval(() => post(sampler.harvest(true)), harvestMs);
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
