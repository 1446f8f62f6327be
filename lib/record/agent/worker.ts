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
