/**
 * A heap trace as a heap profile in the one model: Go's four heap sample
 * types, each sampled object scaled by unsampledWeight as pprof heap profiles
 * are, one record per (thread, allocation stack).
 *
 *   alloc_objects, alloc_space: the allocations made in the window [from, to]
 *   inuse_objects, inuse_space: what of them was still live at `at`
 *
 * The window is the whole recording by default and `at` its end; `peak` is
 * the poll at which the sampled live bytes (all of them, not only the
 * window's) were highest. One pass: state is the live set and per-stack sums.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { ProfileBuilder, Remapper, makeFrame, type ProfileSource, type SampleType } from '../profile/index';
import type { LiveSet } from './live-set';
import { replayHeapTrace } from './replay';
import { NO_HEAP_STACK, unsampledWeight, type HeapTraceSource } from '../profile/index';

export const HEAP_SAMPLE_TYPES: readonly SampleType[] = [
  { type: 'alloc_objects', unit: 'count' },
  { type: 'alloc_space', unit: 'bytes' },
  { type: 'inuse_objects', unit: 'count' },
  { type: 'inuse_space', unit: 'bytes' },
];
export const HEAP_TYPE_NAMES = HEAP_SAMPLE_TYPES.map((t) => t.type);
const INUSE_SPACE = 3;

/** A moment of a recording: ms after its start, its end, or its peak of live bytes (estimated). */
export type HeapMoment = number | 'peak' | 'end';

export interface HeapProfileOptions {
  /** Allocations made at or after this many ms after the start (default: from the start). */
  fromMs?: number;
  /** …and at or before this many (default: to the end). */
  toMs?: number;
  /** The moment inuse_* are taken at (default 'end'). */
  at?: HeapMoment;
}

export interface HeapProfileInfo {
  /** The moment inuse_* describe, ms after the start. */
  atMs: number;
  at: HeapMoment;
  /** The last poll, ms after the start. */
  endMs: number;
  /** The poll with the most live bytes (estimated, as inuse_space scales them), ms after the start. */
  peakMs: number;
  /** Live bytes estimated at the peak and at the end. */
  peakBytes: number;
  endBytes: number;
  /** The same moments' sampled sizes, not scaled (what the estimate stands on). */
  peakSampledBytes: number;
  endSampledBytes: number;
  polls: number;
  allocations: number;
  frees: number;
  /** Sampled objects born and dead between two polls: in no stack, so in no sample type (docs/memory-queries.md). */
  shortLived: number;
  /** Their bytes as the sampler's expectation: each sample stands for about one interval of allocation. */
  shortLivedBytesEstimate: number;
}

/** `--at MS|peak|end` as a HeapMoment. */
export function parseHeapMoment(text: string): HeapMoment {
  if (text === 'peak' || text === 'end') return text;
  const ms = Number(text);
  if (text.trim() === '' || !Number.isFinite(ms) || ms < 0)
    throw new ProfpackError(`--at must be peak, end or ms after the start, not "${text}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'peak | end | a number of ms ≥ 0',
    });
  return ms;
}

/** Per (thread, stack) sums, in typed columns that double as keys appear. */
class StackSums {
  private readonly index = new Map<number, number>();
  keys: number[] = [];
  /** alloc_objects, alloc_space, inuse_objects, inuse_space. */
  columns = [0, 1, 2, 3].map(() => new Float64Array(64));

  slot(thread: number, stack: number): number {
    const key = thread * 2 ** 32 + stack;
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.keys.length;
      this.index.set(key, i);
      this.keys.push(key);
      if (i === this.columns[0]!.length)
        this.columns = this.columns.map((c) => {
          const grown = new Float64Array(c.length * 2);
          grown.set(c);
          return grown;
        });
    }
    return i;
  }
}

/** The trace's tables as the Remapper reads a source. */
function tablesOf(trace: HeapTraceSource): ProfileSource {
  return {
    meta: undefined as never,
    frames: trace.frames,
    stacks: trace.stacks,
    threads: trace.threads,
    labelSets: [[]],
    batches: () => [],
  };
}

export function heapProfile(
  trace: HeapTraceSource,
  options: HeapProfileOptions = {},
): { profile: ProfileBuilder; info: HeapProfileInfo } {
  const at = options.at ?? 'end';
  const startUs = trace.meta.startTimeUs;
  const interval = trace.meta.intervalBytes;
  const fromUs = options.fromMs === undefined ? -Infinity : startUs + options.fromMs * 1000;
  const toUs = options.toMs === undefined ? Infinity : startUs + options.toMs * 1000;
  const atUs = typeof at === 'number' ? startUs + at * 1000 : Infinity;
  const sums = new StackSums();
  let peakUs = startUs;
  let peakBytes = -1;
  let peakSampledBytes = 0;
  let peakInuse: Float64Array[] | undefined;
  let shortLived = 0;
  const weigh = (live: LiveSet, slot: number) => unsampledWeight(live.sizes[slot]!, interval);
  const summary = replayHeapTrace(trace, {
    alloc(live, slot, timeUs) {
      if (timeUs < fromUs || timeUs > toUs) return;
      const w = weigh(live, slot);
      const [allocObjects, allocSpace, inuseObjects, inuseSpace] = sums.columns as [
        Float64Array,
        Float64Array,
        Float64Array,
        Float64Array,
      ];
      const i = sums.slot(live.threads[slot]!, live.stacks[slot]!);
      allocObjects[i]! += w.objects;
      allocSpace[i]! += w.bytes;
      if (timeUs > atUs) return;
      live.marks[slot] = 1;
      inuseObjects[i]! += w.objects;
      inuseSpace[i]! += w.bytes;
    },
    free(live, slot, timeUs) {
      if (live.marks[slot] !== 1 || timeUs > atUs) return;
      const w = weigh(live, slot);
      const i = sums.slot(live.threads[slot]!, live.stacks[slot]!);
      sums.columns[2]![i]! -= w.objects;
      sums.columns[3]![i]! -= w.bytes;
    },
    shortLived(count) {
      shortLived += count;
    },
    poll(live, timeUs) {
      if (live.estimatedBytes <= peakBytes) return;
      peakBytes = live.estimatedBytes;
      peakSampledBytes = live.sampledBytes;
      peakUs = timeUs;
      if (at === 'peak')
        peakInuse = [sums.columns[2]!.slice(0, sums.keys.length), sums.columns[3]!.slice(0, sums.keys.length)];
    },
  });
  const endMs = Number.isNaN(summary.lastUs) ? 0 : (summary.lastUs - startUs) / 1000;
  const peakMs = (peakUs - startUs) / 1000;
  const atMs = at === 'end' ? endMs : at === 'peak' ? peakMs : at;
  const profile = new ProfileBuilder({
    sampleTypes: HEAP_SAMPLE_TYPES.map((t) => ({ ...t })),
    defaultSampleType: INUSE_SPACE,
    periodType: { type: 'space', unit: 'bytes' },
    period: interval,
    startTimeUs: BigInt(Math.round(startUs)),
    sampleIntervalUs: 0n,
    durationUs: BigInt(Math.round(Math.max(trace.meta.durationUs, summary.lastUs - startUs || 0))),
    comments: [`profpack heap profile: allocations ${windowText(options)}, in use at ${momentText(at, atMs)}`],
    origin: { format: 'heap-trace' },
  });
  const remap = new Remapper(tablesOf(trace), profile, 4);
  const noStack = profile.stacks.push(0, profile.internFrame(makeFrame('(no stack)', '')));
  const values = new Float64Array(4);
  for (let i = 0; i < sums.keys.length; i++) {
    const key = sums.keys[i]!;
    const stack = key % 2 ** 32;
    values[0] = Math.round(sums.columns[0]![i]!);
    values[1] = Math.round(sums.columns[1]![i]!);
    values[2] = Math.max(0, Math.round((peakInuse?.[0] ?? sums.columns[2]!)[i] ?? 0));
    values[3] = Math.max(0, Math.round((peakInuse?.[1] ?? sums.columns[3]!)[i] ?? 0));
    if (values.every((v) => v === 0)) continue;
    profile.add(
      stack === NO_HEAP_STACK ? noStack : remap.stack(stack),
      remap.thread((key - stack) / 2 ** 32),
      Number.NaN,
      0,
      values,
    );
  }
  const info: HeapProfileInfo = {
    atMs,
    at,
    endMs,
    peakMs,
    peakBytes: Math.max(0, Math.round(peakBytes)),
    endBytes: Math.round(summary.live.estimatedBytes),
    peakSampledBytes,
    endSampledBytes: summary.live.sampledBytes,
    polls: summary.polls,
    allocations: summary.allocations,
    frees: summary.frees,
    shortLived,
    shortLivedBytesEstimate: shortLived * interval,
  };
  return { profile, info };
}

function windowText(o: HeapProfileOptions): string {
  if (o.fromMs === undefined && o.toMs === undefined) return 'of the whole recording';
  return `made from ${o.fromMs ?? 0} ms to ${o.toMs === undefined ? 'the end' : `${o.toMs} ms`}`;
}

function momentText(at: HeapMoment, atMs: number): string {
  return at === 'peak' ? `the peak (${atMs} ms)` : at === 'end' ? `the end (${atMs} ms)` : `${atMs} ms`;
}
