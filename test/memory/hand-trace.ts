/** Heap traces written by hand for tests: polls of allocations (by function) and frees, via HeapTraceCollector. */
import { HeapTraceCollector, replayHeapTrace, type HeapEventBatch, type HeapTraceSource } from '../../lib/memory/index';
import { HeapStacks } from '../../lib/record/wire/index';
import { ProfileWriter } from '../../lib/tachyon/index';

export interface HandPoll {
  timeUs: number;
  /** [ordinal, size, function] — each function is called from `main` ('a>b': b called from a; '~b': a builtin). */
  alloc?: [number, number, string][];
  free?: number[];
  shortLived?: number;
  thread?: number;
  /** Its objects are external (Buffer/ArrayBuffer stores: an ordinal space of their own). */
  external?: boolean;
}

export interface HandObject {
  thread: number;
  ordinal: number;
  size: number;
  fn: string;
  allocUs: number;
  freeUs: number;
}

export function handTrace(
  intervalBytes: number,
  polls: HandPoll[],
  startUs = 1_000_000,
): { trace: HeapTraceCollector; objects: HandObject[] } {
  const stacks = new HeapStacks();
  stacks.callFrames.push({
    functionName: 'main',
    url: 'file:///app.js',
    lineNumber: 0,
    columnNumber: 0,
    scriptId: '1',
  });
  const main = stacks.add(-1, 0);
  const stackOf = new Map<string, number>();
  const trace = new HeapTraceCollector();
  trace.begin({ intervalBytes });
  const objects = new Map<string, HandObject>();
  let since = startUs;
  for (const p of polls) {
    const thread = p.thread ?? 1;
    const alloc = (p.alloc ?? []).slice().sort((a, b) => a[0] - b[0]);
    // 'a>b': b called from a (from main); '~b': a builtin (no file).
    const stackIds = alloc.map(([, , fn]) => {
      let id = main;
      let path = '';
      for (const name of fn.split('>')) {
        path += `>${name}`;
        let next = stackOf.get(path);
        if (next === undefined) {
          const builtin = name.startsWith('~');
          stacks.callFrames.push({
            functionName: builtin ? name.slice(1) : name,
            url: builtin ? '' : 'file:///app.js',
            lineNumber: builtin ? -1 : 10 + stackOf.size,
            columnNumber: builtin ? -1 : 0,
            scriptId: builtin ? '0' : '1',
          });
          stackOf.set(path, (next = stacks.add(id, stacks.callFrames.length - 1)));
        }
        id = next;
      }
      return id;
    });
    if (alloc.length > 0 || (p.shortLived ?? 0) > 0)
      trace.allocations({
        threadId: thread,
        timeUs: p.timeUs,
        sinceUs: since,
        ordinals: Uint32Array.from(alloc.map((a) => a[0])),
        sizes: Uint32Array.from(alloc.map((a) => a[1])),
        stackIds: Uint32Array.from(stackIds),
        shortLived: p.shortLived ?? 0,
        stacks,
        ...(p.external === true ? { external: true } : {}),
      });
    for (const [ordinal, size, fn] of alloc)
      objects.set(`${thread}:${ordinal}`, { thread, ordinal, size, fn, allocUs: p.timeUs, freeUs: Infinity });
    const free = (p.free ?? []).slice().sort((a, b) => a - b);
    if (free.length > 0)
      trace.frees({
        threadId: thread,
        timeUs: p.timeUs,
        sinceUs: since,
        ordinals: Uint32Array.from(free),
        ...(p.external === true ? { external: true } : {}),
      });
    for (const ordinal of free) objects.get(`${thread}:${ordinal}`)!.freeUs = p.timeUs;
    since = p.timeUs;
  }
  return { trace, objects: [...objects.values()] };
}

/** leak keeps 3,000 bytes a second; garbage allocates 30,000 a second and frees the previous second's. */
export function leakAndGarbage(seconds: number): HandPoll[] {
  const polls: HandPoll[] = [];
  let ordinal = 0;
  let previous: number[] = [];
  for (let s = 1; s <= seconds; s++) {
    const alloc: [number, number, string][] = [[++ordinal, 3000, 'leak']];
    const garbage: number[] = [];
    for (let i = 0; i < 10; i++) {
      alloc.push([++ordinal, 3000, 'garbage']);
      garbage.push(ordinal);
    }
    polls.push({ timeUs: s * 1_000_000, alloc, free: previous });
    previous = garbage;
  }
  polls.push({ timeUs: (seconds + 1) * 1_000_000, free: previous });
  return polls;
}

/** One trace cut at `cutUs` into two, as rotation cuts a recording: the second starts with what was live then. */
export function rotate(trace: HeapTraceSource, cutUs: number): [HeapTraceSource, HeapTraceSource] {
  const all = [...trace.events()].map((b) => ({ ...b }));
  const before = all.filter((b) => b.kind !== 'live' && b.timeUs <= cutUs);
  const after = all.filter((b) => b.kind !== 'live' && b.timeUs > cutUs);
  const tables = { meta: trace.meta, frames: trace.frames, stacks: trace.stacks, threads: trace.threads };
  const { live } = replayHeapTrace({ ...tables, events: () => before }, {});
  const slots = [...live.slots()];
  const inherited: HeapEventBatch = {
    kind: 'live',
    thread: 0,
    ordinals: Uint32Array.from(slots.map((s) => ordinalOf(before, s, live))),
    sizes: Uint32Array.from(slots.map((s) => live.sizes[s]!)),
    stackIds: Uint32Array.from(slots.map((s) => live.stacks[s]!)),
    allocTimesUs: Float64Array.from(slots.map((s) => live.allocTimesUs[s]!)),
  };
  const part = (events: HeapEventBatch[], startUs: number, endUs: number): HeapTraceSource => ({
    meta: { intervalBytes: trace.meta.intervalBytes, startTimeUs: startUs, durationUs: endUs - startUs },
    frames: trace.frames,
    stacks: trace.stacks,
    threads: trace.threads,
    events: () => events,
  });
  const start = trace.meta.startTimeUs;
  const end = start + trace.meta.durationUs;
  return [part(before, start, cutUs), part([inherited, ...after], cutUs, end)];
}

/** The ordinal of a live slot: found again by matching size, stack and time among the allocations. */
function ordinalOf(batches: HeapEventBatch[], slot: number, live: ReturnType<typeof replayHeapTrace>['live']): number {
  for (const b of batches) {
    if (b.kind !== 'alloc' || b.timeUs !== live.allocTimesUs[slot]) continue;
    for (let i = 0; i < b.ordinals.length; i++)
      if (live.has(b.thread, b.ordinals[i]!) && b.sizes[i] === live.sizes[slot] && b.stackIds[i] === live.stacks[slot])
        return b.ordinals[i]!;
  }
  throw new Error('slot not found');
}

/**
 * A one-sample CPU profile (`cpu` on thread 7, 1 ms after `startTimeUs`) standing in for a recording: the tests
 * mock openHeapTrace to hand over a hand-made heap trace for it.
 */
export function writeCpuStandIn(file: string, startTimeUs: number): void {
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs });
  const cpu = { filename: 'app.js', funcname: 'cpu', location: { lineno: 3 } };
  w.writeSample([{ interpreterId: 0, threads: [{ threadId: 7, status: 0, frameInfo: [cpu] }] }], startTimeUs + 1000);
  w.finalize();
}
