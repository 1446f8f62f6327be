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
import { BroadcastChannel, isMainThread, threadId as ownThreadId } from 'node:worker_threads';
import type { CpuProfile } from '../convert/cpuprofile';
import type { ProfileSink } from '../convert/model';
import { ErrorCode, ProfpackError } from '../errors';
import { ProfilingMode } from '../tachyon/format';
import { createTachyonSink, type TachyonSink } from '../convert/tachyon';
import { ChunkIngester } from './ingest';
import { V8Sampler } from './sampler';

export interface RecordingOptions {
  /** Tachyon file to write (ignored when `sink` is given). */
  out?: string;
  /** Where samples go instead of a file (e.g. a MemoryProfile). */
  sink?: ProfileSink & Partial<Pick<TachyonSink, 'finalize' | 'setStats' | 'close'>>;
  /** V8 sampling interval in µs (default 1000). */
  intervalUs?: number;
  /** How often chunks are harvested and written, in ms (default 1000): what a hard crash can lose. */
  harvestMs?: number;
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
}

export interface RecordingSummary {
  out: string | undefined;
  samples: number;
  threads: number;
  durationSec: number;
}

export interface Recording {
  /** Harvests now (also done every `harvestMs`). */
  harvest(): void;
  /** Final harvest, then finalizes the file. Idempotent. */
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

export function startRecording(options: RecordingOptions = {}): Recording {
  if (!isMainThread) {
    throw new ProfpackError('startRecording() runs on the main thread; workers use startWorkerAgent()', { code: ErrorCode.INVALID_ARGUMENT });
  }
  const intervalUs = options.intervalUs ?? 1000;
  if (!Number.isFinite(intervalUs) || intervalUs < 1) throw new ProfpackError(`intervalUs must be ≥ 1, not ${intervalUs}`, { code: ErrorCode.INVALID_ARGUMENT });
  const harvestMs = options.harvestMs ?? 1000;
  const startTimeUs = process.hrtime.bigint() / 1000n;
  const sink =
    options.sink ??
    createTachyonSink(options.out ?? 'profile.tach', {
      sampleIntervalUs: BigInt(Math.round(intervalUs)),
      startTimeUs,
      compression: options.compression ?? 'zstd',
      mode: ProfilingMode.Wall,
    });
  const ingester = new ChunkIngester(sink);
  const sampler = new V8Sampler(intervalUs);
  const threads = new Set<number>([ownThreadId]);
  let channel: BroadcastChannel | undefined;
  if (options.workers === true) {
    channel = new BroadcastChannel(options.channel ?? defaultChannelName());
    channel.onmessage = (event: unknown) => {
      const data = (event as { data: WorkerChunkMessage }).data;
      if (data?.kind !== 'profpack-chunk' || stopped) return;
      threads.add(data.threadId);
      ingester.ingest(data.profile, BigInt(data.threadId), false);
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
    if (chunk !== undefined) ingester.ingest(chunk, BigInt(ownThreadId), true);
  };
  const timer = setInterval(harvest, harvestMs);
  timer.unref();

  const onExit = (): void => {
    recording.stop();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    // Another listener means the program handles the signal itself: keep recording; 'exit' finalizes.
    if (process.listenerCount(signal) > 1) return;
    recording.stop();
    process.kill(process.pid, signal);
  };
  const onUncaught = (): void => {
    if (process.listenerCount('uncaughtException') === 0) recording.stop();
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
      const chunk = sampler.harvest(false);
      stopped = true;
      sampler.dispose();
      channel?.close();
      if (chunk !== undefined) ingester.ingest(chunk, BigInt(ownThreadId), true);
      const durationSec = Number(process.hrtime.bigint() - startedAt) / 1e9;
      summary = { out: options.sink === undefined ? (options.out ?? 'profile.tach') : undefined, samples: ingester.samples, threads: threads.size, durationSec };
      // The stats block: measured duration and the rate of samples actually taken.
      sink.setStats?.(durationSec, durationSec > 0 ? ingester.samples / threads.size / durationSec : 0);
      sink.finalize?.();
      return summary;
    },
  };
  return recording;
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
