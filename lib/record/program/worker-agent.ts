/**
 * The worker agent: in a worker thread, V8's sampler on that isolate, each harvest posted as it comes (V8's own
 * shape) to the main thread's agent, which encodes it with its own (agent.ts). With `heap`, the worker's own heap
 * recorder polls this isolate (the native addon keeps one capture per isolate; the inspector sampler uses this
 * thread's session) and posts each poll as a whole heap frame, numbered by its own stacks: the receiving end maps
 * each thread's numbers (wire/heap.ts), and the events land on this thread's id.
 */
import { BroadcastChannel, isMainThread, threadId as ownThreadId } from 'node:worker_threads';
import type { CpuProfile } from '../../v8/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { checkHeapOptions, type HeapOptions } from '../settings/index';
import { driveHarvests, HeapRecorder } from './heap-recorder';
import { MAX_INTERVAL_US, MAX_TIMER_MS, checkRange } from '../settings/index';
import { V8Sampler } from './cpu-sampler';

export interface WorkerChunkMessage {
  kind: 'profpack-chunk';
  threadId: number;
  profile: CpuProfile;
}

/** One heap poll of a worker: a whole heap frame (length word included), as HeapRecorder sends it. */
export interface WorkerHeapMessage {
  kind: 'profpack-heap';
  threadId: number;
  frame: Uint8Array;
}

/** A worker whose heap could not be recorded (its sampler did not start, or a poll failed): the main thread warns. */
export interface WorkerHeapLostMessage {
  kind: 'profpack-heap-lost';
  threadId: number;
  reason: string;
}

export type WorkerMessage = WorkerChunkMessage | WorkerHeapMessage | WorkerHeapLostMessage;

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
  /** A worker's heap went unrecorded (with `workers`: its agent said why). */
  heapLost(threadId: number, reason: string): void;
  close(): void;
}

/**
 * On the main thread: one warning line the first time a worker ran with part of it unrecorded: all of it without
 * `workers`; with `workers` and `heap`, a heap its agent could not record (it says why).
 */
export function warnOfWorkers(settings: { workers: boolean; heap: boolean }, write = warnLine): WorkerWatch {
  let warned = false;
  const warn = (threadId: number, what: string): void => {
    if (warned) return;
    warned = true;
    write(`profpack: worker thread ${threadId} ran ${what}`);
  };
  const lost = (threadId: number, reason: string) => warn(threadId, `its heap unrecorded (${reason})`);
  // With `workers` the agents report only a heap they lost (startAgent calls heapLost); without, they announce
  // themselves.
  if (settings.workers) return { heapLost: settings.heap ? lost : () => undefined, close: () => undefined };
  const what = settings.heap
    ? 'unrecorded (CPU and heap): record with --workers to sample both'
    : 'unrecorded (CPU): record with --workers to sample its CPU';
  const channel = new BroadcastChannel(unrecordedChannelName());
  channel.onmessage = (event: unknown) => {
    const data = (event as { data: WorkerAnnouncement }).data;
    if (data?.kind === 'profpack-worker') warn(data.threadId, what);
  };
  (channel as unknown as { unref?: () => void }).unref?.();
  // A worker this thread starts, also where no preload announces it (record --inline in record's own process).
  const started = (worker: { threadId: number }): void => warn(worker.threadId, what);
  process.on('worker', started);
  return {
    heapLost: () => undefined,
    close: () => {
      channel.close();
      process.off('worker', started);
    },
  };
}

function warnLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

/**
 * In a worker thread: sample this isolate (and with `heap` its heap) and post each harvest to the main thread's
 * recorder. Returns a stop function (also run on the worker's 'exit': the last CPU chunk, and a last heap poll that
 * collects the garbage first, as the main thread's last poll does).
 */
export function startWorkerAgent(
  options: { intervalUs?: number; harvestMs?: number; channel?: string; heap?: HeapOptions | true } = {},
): () => void {
  if (isMainThread)
    throw new ProfpackError('startWorkerAgent() runs in a worker thread', { code: ErrorCode.INVALID_ARGUMENT });
  const sampler = new V8Sampler(checkRange('intervalUs', options.intervalUs ?? 1000, 1, MAX_INTERVAL_US, 'µs'));
  const harvestMs = checkRange('harvestMs', options.harvestMs ?? 1000, 1, MAX_TIMER_MS, 'ms');
  const heap = options.heap === undefined ? undefined : checkHeapOptions(options.heap);
  const channel = new BroadcastChannel(options.channel ?? defaultChannelName());
  (channel as unknown as { unref?: () => void }).unref?.();
  const send = (message: WorkerMessage) => channel.postMessage(message);
  let stopped = false;
  const post = (profile: CpuProfile | undefined) => {
    if (profile !== undefined && profile.samples.length > 0)
      send({ kind: 'profpack-chunk', threadId: ownThreadId, profile });
  };
  const heapRecorder = heap === undefined ? undefined : startWorkerHeap(heap, send);
  sampler.start();
  const harvest = () => {
    post(sampler.harvest(true));
    heapRecorder?.poll();
  };
  const stopHarvests = driveHarvests(heapRecorder, harvest, harvestMs);
  const stop = () => {
    if (stopped) return;
    stopped = true;
    stopHarvests();
    post(sampler.harvest(false));
    sampler.dispose();
    heapRecorder?.poll();
    heapRecorder?.dispose();
    channel.close();
  };
  process.on('exit', stop);
  return stop;
}

/** This worker's heap recorder, or undefined when its sampler does not start here (the main thread is told why). */
function startWorkerHeap(
  heap: Required<HeapOptions>,
  send: (message: WorkerMessage) => void,
): HeapRecorder | undefined {
  const lost = (reason: string) => send({ kind: 'profpack-heap-lost', threadId: ownThreadId, reason });
  try {
    // A frame is posted as it is (structured clone copies it once); the main thread hands it to its target. A poll
    // that fails later warns in this thread (HeapRecorder).
    return new HeapRecorder(
      heap,
      (frame) => send({ kind: 'profpack-heap', threadId: ownThreadId, frame }),
      ownThreadId,
    );
  } catch (err) {
    lost(err instanceof Error ? err.message : String(err));
    return undefined;
  }
}
