/**
 * The heap flame page (memray's temporal view): a flame graph of bytes over
 * a timeline of the live bytes (estimated). The page's data is the flame page's
 * (lib/view/tree.ts: a stack tree and per-bucket entries) with one more
 * column: each entry sums the objects allocated in its bucket, at its node,
 * and freed in the same later bucket (`heap.entryFree`; bucketCount = never
 * freed). A window [b0, b1) then shows the allocations made in it that were
 * still live at its end (free bucket ≥ b1) by adding up entries, as the CPU
 * page adds up samples: the whole range is "live at the end", [0, peak + 1)
 * "live at the peak". Entries are per (alloc bucket, node, free bucket),
 * never per object.
 */
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { listProfileFiles } from '../fleet/index';
import {
  openHeapFiles,
  requireHeapFiles,
  replayHeapTrace,
  unsampledWeight,
  NO_HEAP_STACK,
  type HeapMoment,
  type HeapTraceSource,
} from '../memory/index';
import { refuseInputAsOutput, writeFileAtomic } from '../output-file';
import { formatValue, makeFrame, threadKey, type Frame } from '../profile/index';
import { renderPage } from './html';
import { MAX_BUCKETS, StackTree, StatusClass, STATUS_CLASSES, type ViewData } from './tree';
import type { FlameSummary } from './flame';

export interface HeapViewData extends ViewData {
  heap: {
    /** Per entry: the bucket its objects were freed in (bucketCount: still live at the end). */
    entryFree: number[];
    /** Per bucket: all live bytes (estimated: sampled sizes scaled) at its last poll. */
    liveBytes: number[];
    peakBucket: number;
    /**
     * Per bucket: external memory (process.memoryUsage().external, all threads) at its last sample, null before the
     * first; absent when the recording has none (made before it). V8's sampler never sees these bytes.
     */
    externalBytes?: (number | null)[];
    /** The window the page opens on (live at the end, at the peak, or at --at). */
    initial: { b0: number; b1: number };
  };
}

export interface HeapViewOptions {
  /** The moment the page opens on (default 'end'). */
  at?: HeapMoment;
  /** The span the timeline covers, µs after the start (default the trace's meta.durationUs). */
  spanUs?: number;
  maxBuckets?: number;
  mapFrame?: (frame: Frame) => Frame;
}

export function buildHeapViewData(trace: HeapTraceSource, options: HeapViewOptions = {}): HeapViewData {
  const startUs = trace.meta.startTimeUs;
  const interval = trace.meta.intervalBytes;
  const maxBuckets = options.maxBuckets ?? MAX_BUCKETS;
  // Whole ms per bucket, enough of them to cover the span.
  const spanUs = options.spanUs ?? trace.meta.durationUs;
  const bucketUs = Math.max(1000, Math.ceil(spanUs / maxBuckets / 1000) * 1000);
  const bucketCount = Math.max(1, Math.min(maxBuckets, Math.ceil((spanUs + 1) / bucketUs)));
  const bucketOf = (us: number) => Math.max(0, Math.min(bucketCount - 1, Math.floor((us - startUs) / bucketUs)));
  const tree = new StackTree();
  const mapFrame = options.mapFrame ?? ((f: Frame) => f);
  const funcOfFrame: number[] = [];
  const nodeOf = new Map<number, Int32Array>();
  const threadRoot: number[] = [];
  const noStack = tree.funcOf(makeFrame('(no stack)', ''));
  const leaf = (thread: number, stack: number): number => {
    let root = threadRoot[thread];
    if (root === undefined) {
      const t = trace.threads[thread]!;
      root = threadRoot[thread] = tree.threadNode(threadKey(t.threadId, t.interpreterId), t.name);
    }
    if (stack === NO_HEAP_STACK) return tree.child(root, noStack);
    let nodes = nodeOf.get(thread);
    if (nodes === undefined || nodes.length <= stack) {
      const grown = new Int32Array(Math.max(stack + 1, trace.stacks.size, (nodes?.length ?? 0) * 2)).fill(-1);
      if (nodes !== undefined) grown.set(nodes);
      nodeOf.set(thread, (nodes = grown));
    }
    if (stack === 0) return root;
    if (nodes[stack]! >= 0) return nodes[stack]!;
    const chain: number[] = [];
    let s = stack;
    for (; s !== 0 && nodes[s]! < 0; s = trace.stacks.parent(s)) chain.push(s);
    let node = s === 0 ? root : nodes[s]!;
    for (let k = chain.length - 1; k >= 0; k--) {
      const fi = trace.stacks.frame(chain[k]!);
      const fid = (funcOfFrame[fi] ??= tree.funcOf(mapFrame(trace.frames[fi]!)));
      node = nodes[chain[k]!] = tree.child(node, fid);
    }
    return node;
  };
  // alloc bucket → (node × (bucketCount + 1) + free bucket → bytes)
  const buckets: Map<number, number>[] = Array.from({ length: bucketCount }, () => new Map());
  const add = (allocUs: number, thread: number, stack: number, freeBucket: number, bytes: number): void => {
    const key = leaf(thread, stack) * (bucketCount + 1) + freeBucket;
    const m = buckets[bucketOf(allocUs)]!;
    m.set(key, (m.get(key) ?? 0) + bytes);
  };
  const liveBytes = new Array<number>(bucketCount).fill(Number.NaN);
  let peakBytes = -1;
  let peakBucket = bucketCount - 1;
  const summary = replayHeapTrace(trace, {
    free(live, slot, timeUs) {
      const bytes = unsampledWeight(live.sizes[slot]!, interval).bytes;
      add(live.allocTimesUs[slot]!, live.threads[slot]!, live.stacks[slot]!, bucketOf(timeUs), bytes);
    },
    poll(live, timeUs) {
      liveBytes[bucketOf(timeUs)] = Math.max(0, Math.round(live.estimatedBytes));
      if (live.estimatedBytes > peakBytes) {
        peakBytes = live.estimatedBytes;
        peakBucket = bucketOf(timeUs);
      }
    },
  });
  const live = summary.live;
  for (const slot of live.slots())
    add(
      live.allocTimesUs[slot]!,
      live.threads[slot]!,
      live.stacks[slot]!,
      bucketCount,
      unsampledWeight(live.sizes[slot]!, interval).bytes,
    );
  // A bucket without a poll holds what the previous poll left.
  for (let b = 0, last = 0; b < bucketCount; b++)
    liveBytes[b] = last = Number.isNaN(liveBytes[b]!) ? last : liveBytes[b]!;
  const entryOffsets = [0];
  const entryKey: number[] = [];
  const entryCount: number[] = [];
  const entryFree: number[] = [];
  let total = 0;
  for (const m of buckets) {
    for (const key of [...m.keys()].sort((a, b) => a - b)) {
      const node = Math.floor(key / (bucketCount + 1));
      const bytes = Math.round(m.get(key)!);
      entryKey.push(node * STATUS_CLASSES + StatusClass.OnCpu);
      entryCount.push(bytes);
      entryFree.push(key - node * (bucketCount + 1));
      if (key - node * (bucketCount + 1) === bucketCount) total += bytes;
    }
    entryOffsets.push(entryKey.length);
  }
  const externalBytes = externalPerBucket(trace, bucketCount, bucketOf);
  const at = options.at ?? 'end';
  const initial =
    at === 'end'
      ? { b0: 0, b1: bucketCount }
      : { b0: 0, b1: (at === 'peak' ? peakBucket : bucketOf(startUs + at * 1000)) + 1 };
  const perThread = new Map<string, number>();
  for (const t of trace.threads) perThread.set(threadKey(t.threadId, t.interpreterId), 0);
  return {
    startTimeUs: String(Math.round(startUs)),
    sampleIntervalUs: 0,
    sampleType: { type: 'inuse_space', unit: 'bytes' },
    samples: summary.allocations,
    records: entryKey.length,
    total,
    threads: trace.threads.map((t) => ({
      key: threadKey(t.threadId, t.interpreterId),
      ...(t.name === undefined ? {} : { name: t.name }),
      samples: 0,
    })),
    funcs: tree.funcs,
    parent: tree.parent,
    func: tree.func,
    recursive: tree.recursive,
    bucketUs,
    originUs: 0,
    bucketCount,
    entryOffsets,
    entryKey,
    entryCount,
    heap: { entryFree, liveBytes, peakBucket, ...(externalBytes === null ? {} : { externalBytes }), initial },
  };
}

/** The external memory line: each bucket the sum of every thread's latest sample (carried on), null before any. */
function externalPerBucket(
  trace: HeapTraceSource,
  bucketCount: number,
  bucketOf: (us: number) => number,
): (number | null)[] | null {
  const series = trace.externalMemory?.() ?? [];
  if (series.length === 0) return null;
  const out = new Array<number | null>(bucketCount).fill(null);
  const latest = new Map<number, number>();
  let sum = 0;
  for (const m of series) {
    sum += m.externalBytes - (latest.get(m.thread) ?? 0);
    latest.set(m.thread, m.externalBytes);
    out[bucketOf(m.timeUs)] = sum;
  }
  for (let b = 1; b < bucketCount; b++) if (out[b] === null) out[b] = out[b - 1]!;
  return out;
}

/** Writes the heap flame page of `input` (a heap recording, or the rotated files of one) to `output`. */
export function heapFlame(
  input: string | readonly string[],
  output: string,
  options: HeapViewOptions & { title?: string } = {},
): FlameSummary {
  const files = listProfileFiles(typeof input === 'string' ? [input] : input);
  refuseInputAsOutput(output, files);
  const trace = requireHeapFiles(files);
  // A file's stated duration may end before its last poll: the timeline spans the polls (one cheap pass first).
  let lastUs = Number.NaN;
  try {
    for (const batch of trace.events()) if (batch.kind !== 'live') lastUs = batch.timeUs;
    for (const m of trace.externalMemory?.() ?? [])
      lastUs = Number.isNaN(lastUs) ? m.timeUs : Math.max(lastUs, m.timeUs);
  } finally {
    trace.close?.();
  }
  const again = openHeapFiles(files)!;
  const spanUs = Math.max(again.meta.durationUs, Number.isNaN(lastUs) ? 0 : lastUs - again.meta.startTimeUs);
  let page: { html: string; data: HeapViewData };
  try {
    const name = files.length === 1 ? path.basename(files[0]!) : `${files.length} files`;
    const title = options.title ?? `${name} — profpack heap flame graph`;
    page = renderHeapFlameHtml(again, { spanUs, ...options, title });
  } finally {
    again.close?.();
  }
  writeFileAtomic(output, page.html);
  const data = page.data;
  return {
    output,
    samples: data.samples,
    threads: data.threads.length,
    nodes: data.parent.length,
    buckets: data.bucketCount,
    bytes: statSync(output).size,
  };
}

/** The heap flame page of a heap trace, and the data it carries. */
export function renderHeapFlameHtml(
  trace: HeapTraceSource,
  options: HeapViewOptions & { title?: string } = {},
): { html: string; data: HeapViewData } {
  const data = buildHeapViewData(trace, options);
  const b = (v: number) => formatValue(v, 'bytes');
  const peak = data.heap.liveBytes[data.heap.peakBucket] ?? 0;
  const peakMs = ((data.heap.peakBucket + 1) * data.bucketUs) / 1000;
  const external = data.heap.externalBytes?.[data.bucketCount - 1];
  const summary =
    `live bytes (estimated): ${b(data.total)} at the end, ${b(peak)} at the peak (${peakMs} ms); ` +
    (external === undefined || external === null
      ? ''
      : `external (Buffers, ArrayBuffers): ${b(external)} at the end; `) +
    `${data.samples.toLocaleString('en')} sampled allocations; ` +
    `${data.bucketCount} buckets of ${data.bucketUs / 1000} ms; ` +
    'drag a window: the allocations made in it still live at its end';
  const html = renderPage({
    kind: 'flame',
    title: options.title ?? 'profpack heap flame graph',
    summary,
    columns: ['self', 'self%', 'total', 'total%', 'function', 'file:line'],
    data: { kind: 'flame', ...data },
  });
  return { html, data };
}
