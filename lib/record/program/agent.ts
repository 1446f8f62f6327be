/**
 * The in-process agent: V8's sampler on this thread (none with `cpu: false`, a heap-only recording), harvested
 * every `harvestMs` into WireChunks (lib/record/wire, the one encoder of a recording), handed to a ChunkTarget (a
 * writer in this process, or a pipe to one elsewhere). It finalizes on exit, SIGINT/SIGTERM and fatal exceptions,
 * and takes the worker agents' harvests too.
 *
 * Threads: the main thread is Node's threadId 0 with the MAIN_THREAD status bit; with `workers`, each worker
 * thread that runs the worker agent samples its own isolate and posts its chunks here over a BroadcastChannel,
 * and is written as thread `worker.threadId`. All threads use interpreter id 0.
 */
import {
  BroadcastChannel,
  isMainThread,
  receiveMessageOnPort,
  threadId as ownThreadId,
  type MessagePort,
} from 'node:worker_threads';
import { ErrorCode, ProfpackError } from '../../errors';
import { checkHeapOptions, type HeapOptions } from '../settings/index';
import { driveHarvests, HeapRecorder } from './heap-recorder';
import { MAX_INTERVAL_US, MAX_TIMER_MS, checkCpu, checkRange } from '../settings/index';
import { HarvestEncoder, type WireChunk } from '../wire/index';
import { V8Sampler } from './cpu-sampler';
import { defaultChannelName, warnOfWorkers, type WorkerMessage } from './worker-agent';

/** Where harvests go: into a writer here, or over a pipe to a writer elsewhere. */
export interface ChunkTarget {
  /** One harvest of a thread: its new samples in time order. */
  chunk(chunk: WireChunk, threadId: number, mainThread: boolean): void;
  /** One heap poll as a whole heap frame (wire/heap.ts). */
  heapFrame(frame: Buffer): void;
  /** After each harvest: whether the writer is still there (a pipe's writer process may be gone). */
  alive(): boolean;
  /** The last word (stats and finalize, or the 'end' message); returns the last file written, when it names one. */
  end(durationSec: number, threads: number): string | undefined;
  /** A writer in this process: its periodic work (a flush, a rotation), run on the agent's timers until end(). */
  timed?: readonly TimedWork[];
}

/** Work a writer does every `everyMs`; `run` returns false when it is over (the writer finished or broken). */
export interface TimedWork {
  everyMs: number;
  run(): boolean;
}

/**
 * The timers of a writer in this process. Their callbacks are this file's: the heap sampler knows an allocation as
 * the recorder's by a frame of lib/record/program on its stack (heap/stacks.ts), and a timer's stack starts at its
 * callback, so a writer's own timer (ProfileWriter's flushIntervalMs, in lib/tachyon) would have its flushes'
 * allocations recorded as the program's. Returns the function that stops them.
 */
function startTimedWork(work: readonly TimedWork[]): () => void {
  const timers = work.map(({ everyMs, run }) => {
    const timer: NodeJS.Timeout = setInterval(() => {
      if (!run()) clearInterval(timer);
    }, everyMs);
    timer.unref();
    return timer;
  });
  return () => {
    for (const timer of timers) clearInterval(timer);
  };
}

export interface AgentOptions {
  /** V8 sampling interval in µs (default 1000). */
  intervalUs?: number;
  /** How often chunks are harvested and written, in ms (default 1000): what a hard crash can lose. */
  harvestMs?: number;
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
   * Also record the heap (this thread; each worker agent given `heap` records its own): polled at every harvest, and
   * at once and often near V8's limit.
   */
  heap?: HeapOptions | true;
  /**
   * Sample JS stacks with V8's CPU profiler (default true). `false` records the heap alone (it needs `heap`): the
   * CPU profiler is never started, and the file holds heap events and no CPU samples.
   */
  cpu?: boolean;
  /** Called once with the summary when the recording stops, however it stops (stop(), exit, a signal). */
  onStop?: (summary: RecordingSummary) => void;
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

/** AgentOptions checked, with their defaults. */
export interface AgentSettings {
  intervalUs: number;
  harvestMs: number;
  workers: boolean;
  channel: string;
  handleExit: boolean;
  heap: Required<HeapOptions> | undefined;
  /** Whether V8's CPU profiler samples (false: a heap-only recording). */
  cpu: boolean;
  onStop: ((summary: RecordingSummary) => void) | undefined;
}

/** Checks an agent's options before anything starts (a bad one throws ERR_INVALID_ARGUMENT naming its bound). */
export function checkAgentOptions(options: AgentOptions): AgentSettings {
  if (!isMainThread) {
    throw new ProfpackError('startRecording() runs on the main thread; workers use startWorkerAgent()', {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  }
  const intervalUs = checkRange('intervalUs', options.intervalUs ?? 1000, 1, MAX_INTERVAL_US, 'µs');
  const harvestMs = checkRange('harvestMs', options.harvestMs ?? 1000, 1, MAX_TIMER_MS, 'ms');
  const heap = options.heap === undefined ? undefined : checkHeapOptions(options.heap);
  const cpu = checkCpu(options.cpu, heap !== undefined, options.workers === true);
  return {
    intervalUs,
    harvestMs,
    workers: options.workers === true,
    channel: options.channel ?? defaultChannelName(),
    handleExit: options.handleExit ?? true,
    heap,
    cpu,
    onStop: options.onStop,
  };
}

/** Starts sampling into `target`. `out`: the file the summary names unless the target's end names another. */
export function startAgent(settings: AgentSettings, target: ChunkTarget, out: string | undefined): Recording {
  const { intervalUs, harvestMs, heap, handleExit } = settings;
  // Made at the first harvest: a heap-only recording never loads the CPU encoding (wire/cpu.ts).
  let encoder: HarvestEncoder | undefined;
  // A heap-only recording never starts V8's CPU profiler (its sampler thread ticks whatever the interval).
  const sampler = settings.cpu ? new V8Sampler(intervalUs) : undefined;
  const threads = new Set<number>([ownThreadId]);
  const deliver = (profile: Parameters<HarvestEncoder['encode']>[0], threadId: number, mainThread: boolean) => {
    const chunk = (encoder ??= new HarvestEncoder()).encode(profile, threadId);
    if (chunk !== undefined) target.chunk(chunk, threadId, mainThread);
  };
  let channel: BroadcastChannel | undefined;
  const workerWatch = warnOfWorkers({ workers: settings.workers, heap: heap !== undefined });
  const fromWorker = (data: WorkerMessage | undefined): void => {
    if (stopped || data === undefined || typeof data.threadId !== 'number') return;
    if (data.kind === 'profpack-chunk') {
      threads.add(data.threadId);
      deliver(data.profile, data.threadId, false);
    } else if (data.kind === 'profpack-heap' && heap !== undefined) {
      threads.add(data.threadId);
      const frame = data.frame;
      target.heapFrame(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
    } else if (data.kind === 'profpack-heap-lost') workerWatch.heapLost(data.threadId, String(data.reason));
  };
  // A worker's last harvest, posted from its 'exit', may still be queued when this thread stops: taken at once.
  const drainWorkers = (): void => {
    if (channel === undefined) return;
    // Node takes a BroadcastChannel here too (its docs say so; @types/node says MessagePort only).
    const port = channel as unknown as MessagePort;
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) fromWorker(m.message);
  };
  if (settings.workers) {
    channel = new BroadcastChannel(settings.channel);
    channel.onmessage = (event: unknown) => fromWorker((event as { data: WorkerMessage }).data);
    (channel as unknown as { unref?: () => void }).unref?.();
  }
  sampler?.start();
  const heapRecorder =
    heap === undefined ? undefined : new HeapRecorder(heap, (frame) => target.heapFrame(frame), ownThreadId);
  let stopped = false;
  let summary: RecordingSummary | undefined;
  const startedAt = process.hrtime.bigint();

  const harvest = (): void => {
    if (stopped) return;
    const chunk = sampler?.harvest(true);
    if (chunk !== undefined) deliver(chunk, ownThreadId, true);
    heapRecorder?.poll();
    // The writer process (or `profpack record`) is gone, killed: the program
    // outlives its profiler, but stops paying for sampling nobody writes.
    if (!target.alive()) detach();
  };
  let detached = false;
  const detach = (): void => {
    detached = true;
    stopHarvests();
    stopTimedWork();
    heapRecorder?.dispose();
    sampler?.dispose();
    channel?.close();
    workerWatch.close();
    stopped = true;
  };
  const stopHarvests = driveHarvests(heapRecorder, harvest, harvestMs);
  const stopTimedWork = startTimedWork(target.timed ?? []);

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
      stopTimedWork();
      if (handleExit) {
        process.removeListener('exit', onExit);
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
        process.removeListener('uncaughtExceptionMonitor', onUncaught);
      }
      const chunk = detached ? undefined : sampler?.harvest(false);
      if (!detached) sampler?.dispose();
      if (!detached) drainWorkers();
      channel?.close();
      workerWatch.close();
      if (chunk !== undefined) deliver(chunk, ownThreadId, true);
      if (!detached) {
        heapRecorder?.poll();
        heapRecorder?.dispose();
      }
      stopped = true;
      const durationSec = Number(process.hrtime.bigint() - startedAt) / 1e9;
      summary = { out, samples: encoder?.samples ?? 0, threads: threads.size, durationSec };
      if (heapRecorder !== undefined) summary.heapEvents = heapRecorder.events;
      summary.out = target.end(durationSec, threads.size) ?? out;
      settings.onStop?.(summary);
      return summary;
    },
  };
  return recording;
}
