/**
 * V8's sampling heap profiler, polled without ever stopping it, through one
 * of two paths (probe.ts chooses): V8's C++ API in native/heap/ (no GC at a
 * poll), or `node:inspector` like the CPU sampler (../cpu-sampler.ts), where
 * every poll is a full GC (../heap-recorder.ts). Both give the same flat form
 * (probe.ts's FlatHeapProfile) to one conversion below.
 *
 * V8 samples an allocation every `intervalBytes` on average (Poisson-drawn
 * intervals) and keeps each sampled object's sample while the object lives;
 * a poll returns the live samples and the allocation tree. Polls are diffed
 * (diff.ts) into allocation and free events. Without the forced GC (native),
 * a dead object keeps its sample until V8's own next GC collects it, so its
 * free shows at the first poll after that GC. With shortLived 'stacks' the
 * native path also looks before each GC (native/heap/) and hands back the
 * samples born and collected since the last poll: allocations with their
 * stacks, freed at the same poll. V8's includeObjectsCollectedByMajorGC/MinorGC
 * flags are left off: with them V8 never drops a sample (Node 20 and 24 alike),
 * so a poll could no longer tell the dead from the live, and every poll would
 * carry every sample ever taken; the ordinal gaps count what nothing saw.
 */
import type * as inspector from 'node:inspector';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { ErrorCode, ProfpackError } from '../../../errors';
import { postSync } from '../../../v8/index';
import type { HeapPollColumns } from '../../../profile/index';
import { NO_STACK } from '../../wire/index';
import { diffSamples, NO_SAMPLES, type LiveSamples } from './diff';
import {
  heapSamplerChoice,
  type FlatHeapProfile,
  type HeapSamplerChoice,
  type HeapSamplerKind,
  type NativeHeapSampler,
} from './probe';
import { flattenHeapTree, HeapStackNumbers, type SamplingHeapNode } from './stacks';
import { sizeForUnsampledBytes } from './inspector-size';
import type { HeapShortLived } from '../../settings/index';

interface SamplingHeapProfile {
  head: SamplingHeapNode;
  samples?: { size: number; nodeId: number; ordinal: number }[];
}

/** Where polls come from: V8's API or the inspector. */
interface HeapProfileSource {
  /** `collect`: collect the garbage first, so that the poll's live samples are exactly the live objects. */
  poll(collect: boolean): FlatHeapProfile | undefined;
  dispose(): void;
}

/** V8's `gc` extension: a full GC, or with `{ type: 'minor' }` a scavenge. */
type GcFunction = (options?: { type: 'minor' }) => void;
let fullGc: GcFunction | undefined;

/**
 * One full GC, as `global.gc()` does: the program's own gc when it runs with
 * --expose-gc, else one taken from a fresh context with the flag set for that
 * moment only (later contexts and workers see no `gc`).
 */
function collectGarbage(): void {
  if (fullGc === undefined) {
    const own = (globalThis as { gc?: unknown }).gc;
    if (typeof own === 'function') fullGc = own as GcFunction;
    else {
      v8.setFlagsFromString('--expose-gc');
      try {
        fullGc = vm.runInNewContext('gc') as GcFunction;
      } finally {
        v8.setFlagsFromString('--no-expose-gc');
      }
    }
  }
  fullGc();
  // Then a scavenge: V8 frees ArrayBuffer stores on a concurrent sweeper after the GC, and any GC first finishes the
  // last one's sweeping, so the external memory read after the poll counts only what is live (the full GC alone read
  // up to 50 % more on test/fixtures/heap/buffer-leak.js, whose sampled Buffers, held by WeakRefs, outlive scavenges
  // and wait for it). A second full GC did the same, marking the whole heap again (~20 ms on a 15 MB heap).
  fullGc({ type: 'minor' });
}

class InspectorSource implements HeapProfileSource {
  // Required here: on V8's API path (the usual one) the recorded program loads no node:inspector.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  private readonly session = new (require('node:inspector') as typeof inspector).Session();

  constructor(private readonly intervalBytes: number) {
    this.session.connect();
    this.post('HeapProfiler.enable');
    this.post('HeapProfiler.startSampling', { samplingInterval: intervalBytes });
  }

  private post<T>(method: string, params?: object): T {
    return postSync<T>(this.session, method, params);
  }

  /** Every inspector poll collects the garbage first (kSamplingForceGC, ../heap-recorder.ts). */
  poll(): FlatHeapProfile {
    const { profile } = this.post<{ profile: SamplingHeapProfile }>('HeapProfiler.getSamplingProfile');
    const flat = flattenHeapTree(profile.head);
    const samples = profile.samples ?? [];
    const n = samples.length;
    flat.ordinals = new Uint32Array(n);
    flat.sizes = new Uint32Array(n);
    flat.sampleNodes = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const sample = samples[i]!;
      flat.ordinals[i] = sample.ordinal;
      // The inspector's size is already unsampled (size x count): keep the size whose 1/p weight is those bytes.
      flat.sizes[i] = sizeForUnsampledBytes(sample.size, this.intervalBytes);
      flat.sampleNodes[i] = sample.nodeId;
    }
    return flat;
  }

  dispose(): void {
    try {
      this.post('HeapProfiler.stopSampling');
      this.post('HeapProfiler.disable');
    } catch {
      // The session may already be gone at process exit.
    }
    this.session.disconnect();
  }
}

class NativeSource implements HeapProfileSource {
  constructor(
    private readonly addon: NativeHeapSampler,
    intervalBytes: number,
    captureAtGc: boolean,
  ) {
    if (!addon.start(intervalBytes, captureAtGc))
      throw new ProfpackError("V8's sampling heap profiler is already running in this thread (another profiler?)", {
        code: ErrorCode.RECORD_FAILED,
      });
  }

  poll(collect: boolean): FlatHeapProfile | undefined {
    if (collect) collectGarbage();
    return this.addon.poll();
  }

  dispose(): void {
    this.addon.stop();
  }
}

/** Allocations first seen (stack ids in `numbers.stacks`), and the frees. */
export interface HeapPoll extends HeapPollColumns {
  intervalBytes: number;
  /** Ordinals freed since the previous poll. */
  freed: Uint32Array;
  /**
   * Ordinals among this poll's allocations that were collected before it (a GC prologue saw them), ascending.
   * Absent: none.
   */
  collected?: Uint32Array;
  /** How long the poll took, ms (what sets the pace near the heap limit). */
  costMs: number;
}

export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export class HeapSampler {
  /** Which path polls (probe.ts). */
  readonly kind: HeapSamplerKind;
  private readonly source: HeapProfileSource;
  /** The recorder's own code (lib/record): its allocations (parsing each poll) are not the program's. */
  readonly numbers = new HeapStackNumbers(path.dirname(__dirname));
  /** The recorder's own sampled objects alive at the last poll (a handful): their frees are not events either. */
  private readonly ownLive = new Set<number>();
  private live: LiveSamples = NO_SAMPLES;
  private lastPollUs: number;
  private running = false;

  constructor(
    readonly intervalBytes: number,
    choice: HeapSamplerChoice = heapSamplerChoice(),
    shortLived: HeapShortLived = 'stacks',
  ) {
    const { addon } = choice;
    this.source =
      addon !== undefined
        ? new NativeSource(addon, intervalBytes, shortLived === 'stacks')
        : new InspectorSource(intervalBytes);
    this.kind = addon !== undefined ? 'native' : 'inspector';
    this.running = true;
    this.lastPollUs = monotonicUs();
  }

  /**
   * `collect`: a poll that must see exactly the live objects (one asked for
   * directly, the last one) collects the garbage first; the inspector's always do.
   */
  poll(collect = false): HeapPoll | undefined {
    if (!this.running) return undefined;
    const started = process.hrtime.bigint();
    const profile = this.source.poll(collect);
    if (profile === undefined) return undefined;
    const timeUs = monotonicUs();
    const collected = profile.collectedOrdinals ?? new Uint32Array(0);
    const diff = diffSamples(this.live, profile.ordinals, collected);
    // V8 keeps one sampling heap profiler per isolate, shared by every inspector session and its C++ API: another
    // profiler in this thread that stops it and starts it again restarts its ordinals at 1, under the live set's
    // (an inspector poll then saw 0 samples of a 100 MB hoard). Its samples are no longer this recording's. Seen
    // when a new number falls under the highest seen, in a gap of the live set; numbers that land only on live
    // objects (a program keeping every sampled object since the start) cannot be told from a quiet poll.
    const reborn = diff.born.length > 0 && profile.ordinals[diff.born[0]!]! <= this.live.maxOrdinal;
    if (reborn)
      throw new ProfpackError("V8's sampling heap profiler was restarted by another profiler in this thread", {
        code: ErrorCode.RECORD_FAILED,
      });
    this.live = diff.live;
    const stackOfNode = this.numbers.numberFlat(profile);
    // The objects born since the last poll, live or collected already, in ordinal order (the pipe's deltas).
    const bornCount = diff.born.length + collected.length;
    const order = new Float64Array(bornCount);
    for (let k = 0; k < diff.born.length; k++) order[k] = profile.ordinals[diff.born[k]!]! * 2;
    for (let k = 0; k < collected.length; k++) order[diff.born.length + k] = collected[k]! * 2 + 1;
    order.sort();
    let bornOrdinals = new Uint32Array(bornCount);
    let sizes = new Uint32Array(bornCount);
    let stackIds = new Uint32Array(bornCount);
    const gone: number[] = [];
    const sizeOf = new Map<number, number>();
    const nodeOf = new Map<number, number>();
    for (let k = 0; k < diff.born.length; k++) {
      const index = diff.born[k]!;
      sizeOf.set(profile.ordinals[index]!, profile.sizes[index]!);
      nodeOf.set(profile.ordinals[index]!, profile.sampleNodes[index]!);
    }
    for (let k = 0; k < collected.length; k++) {
      sizeOf.set(collected[k]!, profile.collectedSizes![k]!);
      nodeOf.set(collected[k]!, profile.collectedNodes![k]!);
    }
    let kept = 0;
    for (let k = 0; k < bornCount; k++) {
      const ordinal = Math.floor(order[k]! / 2);
      const stack = stackOfNode.get(nodeOf.get(ordinal)!) ?? -1;
      const isCollected = order[k]! % 2 === 1;
      if (this.numbers.isOwn(stack)) {
        if (!isCollected) this.ownLive.add(ordinal);
        continue;
      }
      bornOrdinals[kept] = ordinal;
      sizes[kept] = sizeOf.get(ordinal)!;
      stackIds[kept++] = stack < 0 ? NO_STACK : stack;
      if (isCollected) gone.push(ordinal);
    }
    if (kept < bornCount) {
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
      collected: Uint32Array.from(gone),
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
      this.source.dispose();
    }
  }
}
