/**
 * V8's sampling heap profiler, driven in-process through `node:inspector`
 * like the CPU sampler (../sampler.ts), polled without ever stopping it.
 *
 * `HeapProfiler.startSampling` samples an allocation every `intervalBytes` on
 * average (Poisson-drawn intervals) and keeps each sampled object's sample
 * while the object lives; `getSamplingProfile` returns the live samples and
 * the allocation tree. Polls are diffed (diff.ts) into allocation and free
 * events. V8's includeObjectsCollectedByMajorGC/MinorGC flags are left off:
 * with them V8 never drops a sample (Node 20 and 24 alike), so a poll could no
 * longer tell the dead from the live, and every poll would carry every sample
 * ever taken; the ordinal gaps count the short-lived objects instead.
 */
import * as inspector from 'node:inspector';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../../errors';
import { NO_STACK } from './events';
import { diffSamples, NO_SAMPLES, type LiveSamples } from './diff';
import { HeapStackNumbers, type SamplingHeapNode } from './stacks';

interface SamplingHeapProfile {
  head: SamplingHeapNode;
  samples?: { size: number; nodeId: number; ordinal: number }[];
}

/** One poll's events, on the monotonic clock (µs, as process.hrtime). */
export interface HeapPoll {
  intervalBytes: number;
  timeUs: number;
  sinceUs: number;
  /** Allocations first seen, ascending ordinal, with their sizes and stack ids (in `numbers.stacks`). */
  ordinals: Uint32Array;
  sizes: Uint32Array;
  stackIds: Uint32Array;
  shortLived: number;
  /** Ordinals freed since the previous poll. */
  freed: Uint32Array;
  /** How long the poll took, ms (what sets the pace near the heap limit). */
  costMs: number;
}

export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export class HeapSampler {
  private readonly session = new inspector.Session();
  /** The recorder's own code (lib/record): its allocations (parsing each poll) are not the program's. */
  readonly numbers = new HeapStackNumbers(path.dirname(__dirname));
  /** The recorder's own sampled objects alive at the last poll (a handful): their frees are not events either. */
  private readonly ownLive = new Set<number>();
  private live: LiveSamples = NO_SAMPLES;
  private lastPollUs: number;
  private running = false;

  constructor(readonly intervalBytes: number) {
    this.session.connect();
    this.post('HeapProfiler.enable');
    this.post('HeapProfiler.startSampling', { samplingInterval: intervalBytes });
    this.running = true;
    this.lastPollUs = monotonicUs();
  }

  private post<T>(method: string, params?: object): T {
    let failure: Error | null = null;
    let answered = false;
    let result: T | undefined;
    this.session.post(method, params, (err: Error | null, res?: object) => {
      failure = err;
      result = res as T | undefined;
      answered = true;
    });
    // Node's in-process session answers synchronously on the session's own thread.
    if (!answered)
      throw new ProfpackError(`inspector ${method} did not answer synchronously`, { code: ErrorCode.RECORD_FAILED });
    if (failure !== null)
      throw new ProfpackError(`inspector ${method} failed: ${(failure as Error).message}`, {
        code: ErrorCode.RECORD_FAILED,
        cause: failure,
      });
    return result as T;
  }

  poll(): HeapPoll | undefined {
    if (!this.running) return undefined;
    const started = process.hrtime.bigint();
    const { profile } = this.post<{ profile: SamplingHeapProfile }>('HeapProfiler.getSamplingProfile');
    const timeUs = monotonicUs();
    const samples = profile.samples ?? [];
    const n = samples.length;
    const ordinals = new Uint32Array(n);
    for (let i = 0; i < n; i++) ordinals[i] = samples[i]!.ordinal;
    const diff = diffSamples(this.live, ordinals);
    this.live = diff.live;
    const stackOfNode = this.numbers.number(profile.head);
    const born = diff.born;
    let bornOrdinals = new Uint32Array(born.length);
    let sizes = new Uint32Array(born.length);
    let stackIds = new Uint32Array(born.length);
    let kept = 0;
    for (let k = 0; k < born.length; k++) {
      const sample = samples[born[k]!]!;
      const stack = stackOfNode.get(sample.nodeId) ?? -1;
      if (this.numbers.isOwn(stack)) {
        this.ownLive.add(sample.ordinal);
        continue;
      }
      bornOrdinals[kept] = sample.ordinal;
      sizes[kept] = sample.size;
      stackIds[kept++] = stack < 0 ? NO_STACK : stack;
    }
    if (kept < born.length) {
      bornOrdinals = bornOrdinals.slice(0, kept);
      sizes = sizes.slice(0, kept);
      stackIds = stackIds.slice(0, kept);
    }
    let freed = diff.freed;
    if (this.ownLive.size > 0) freed = freed.filter((ordinal) => !this.ownLive.delete(ordinal));
    const sinceUs = this.lastPollUs;
    this.lastPollUs = timeUs;
    const costMs = Number(process.hrtime.bigint() - started) / 1e6;
    return {
      intervalBytes: this.intervalBytes,
      timeUs,
      sinceUs,
      ordinals: bornOrdinals,
      sizes,
      stackIds,
      shortLived: diff.shortLived,
      freed,
      costMs,
    };
  }

  /** Sampled objects alive at the last poll. */
  get liveCount(): number {
    return this.live.ordinals.length;
  }

  dispose(): void {
    if (this.running) {
      this.running = false;
      try {
        this.post('HeapProfiler.stopSampling');
        this.post('HeapProfiler.disable');
      } catch {
        // The session may already be gone at process exit.
      }
    }
    this.session.disconnect();
  }
}
