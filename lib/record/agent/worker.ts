/**
 * The worker agent: in a worker thread, V8's sampler on that isolate, each harvest posted as it comes (V8's own
 * shape) to the main thread's agent, which encodes it with its own (agent.ts).
 */
import { BroadcastChannel, isMainThread, threadId as ownThreadId } from 'node:worker_threads';
import type { CpuProfile } from '../../v8/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { MAX_INTERVAL_US, MAX_TIMER_MS, checkRange } from '../settings/index';
import { V8Sampler } from './sampler';

export interface WorkerChunkMessage {
  kind: 'profpack-chunk';
  threadId: number;
  profile: CpuProfile;
}

/** The channel a process's worker agents post to, unless told another. */
export function defaultChannelName(): string {
  return `profpack-record-${process.pid}`;
}

/** The channel a process's workers announce themselves on when no worker agent records them. */
export function unrecordedChannelName(): string {
  return `profpack-unrecorded-${process.pid}`;
}

export interface WorkerAnnouncement {
  kind: 'profpack-worker';
  threadId: number;
}

/** In a worker thread that nothing records: tells the main thread's agent, which warns once (warnOfWorkers). */
export function announceUnrecordedWorker(): void {
  const channel = new BroadcastChannel(unrecordedChannelName());
  channel.postMessage({ kind: 'profpack-worker', threadId: ownThreadId } satisfies WorkerAnnouncement);
  channel.close();
}

/** The main thread's watch for workers it does not (wholly) record. */
export interface WorkerWatch {
  /** A worker agent's chunk came from `threadId` (with `workers`). */
  seen(threadId: number): void;
  close(): void;
}

/**
 * On the main thread: one warning line the first time a worker ran with part of it unrecorded: all of it without
 * `workers`, its heap with `heap` (the worker agent samples CPU only).
 */
export function warnOfWorkers(settings: { workers: boolean; heap: boolean }, write = warnLine): WorkerWatch {
  const what = settings.workers
    ? 'its heap unrecorded (heap sampling covers the main thread; its CPU is recorded)'
    : `unrecorded (CPU${settings.heap ? ' and heap' : ''}): record with --workers to sample its CPU`;
  let warned = false;
  const warn = (threadId: number): void => {
    if (warned) return;
    warned = true;
    write(`profpack: worker thread ${threadId} ran ${what}`);
  };
  // With `workers` the agent's chunks name the workers (startAgent calls seen); without, they announce themselves.
  if (settings.workers) return { seen: settings.heap ? warn : () => undefined, close: () => undefined };
  const channel = new BroadcastChannel(unrecordedChannelName());
  channel.onmessage = (event: unknown) => {
    const data = (event as { data: WorkerAnnouncement }).data;
    if (data?.kind === 'profpack-worker') warn(data.threadId);
  };
  (channel as unknown as { unref?: () => void }).unref?.();
  return { seen: () => undefined, close: () => channel.close() };
}

function warnLine(line: string): void {
  process.stderr.write(`${line}\n`);
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
