/** Heap traces for the heap section's tests: random polls fed to a file's heap sink, and what must read back. */
import fc from 'fast-check';
import { HeapStacks, NO_STACK } from '../../lib/record/wire/heap-events';
import type { HeapEventBatch, HeapTraceSource } from '../../lib/memory/index';
import { type HeapFileSink, type ProfileWriterOptions } from '../../lib/tachyon/index';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../lib/index';

/** One event batch with stacks spelled as function names (innermost first), comparable across tables. */
export interface PlainBatch {
  /** 'memory': an external memory sample (after every batch: a source gives them as a series of their own). */
  kind: HeapEventBatch['kind'] | 'memory';
  threadId: string;
  timeUs?: number;
  sinceUs?: number;
  ordinals: number[];
  sizes?: number[];
  stacks?: (string[] | null)[];
  allocTimesUs?: number[];
  shortLived?: number;
  externalBytes?: number;
  arrayBuffersBytes?: number;
  /** External objects' batch (Buffer/ArrayBuffer stores, their own ordinal space); absent: V8's. */
  external?: true;
}

export interface PlannedPoll {
  thread: number;
  step: number;
  allocs: { gap: number; size: number; stack: number }[];
  shortLived: number;
  /** Per live object of the thread: freed now or not (cycled over the live list). */
  freeMask: boolean[];
  /** The thread's external memory at the poll (null: none sent, as from a recorder before it). */
  memory: { externalBytes: number; arrayBuffersBytes: number } | null;
  /** Events of the thread's external objects (HeapRecordFlag.External), numbered apart from V8's. */
  external: boolean;
}

export interface PlannedTrace {
  threads: number;
  /** Stack shapes: depth and which frame names they draw from. */
  stackDepths: number[];
  live: { thread: number; count: number; external: boolean }[];
  polls: PlannedPoll[];
}

/** Byte counts up to the Memory record's u49. */
const memoryBytes = fc.oneof(
  fc.nat(),
  fc.constant(2 ** 49 - 1),
  fc.maxSafeNat().map((v) => v % 2 ** 49),
);

export const plannedTrace: fc.Arbitrary<PlannedTrace> = fc.record({
  threads: fc.integer({ min: 1, max: 3 }),
  stackDepths: fc.array(fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 200, max: 256 })), {
    minLength: 1,
    maxLength: 8,
  }),
  live: fc.array(fc.record({ thread: fc.nat(2), count: fc.integer({ min: 1, max: 20 }), external: fc.boolean() }), {
    maxLength: 4,
  }),
  polls: fc.array(
    fc.record({
      thread: fc.nat(2),
      step: fc.integer({ min: 0, max: 5_000_000 }),
      allocs: fc.array(
        fc.record({
          gap: fc.integer({ min: 1, max: 300 }),
          size: fc.oneof(fc.integer({ min: 1, max: 4096 }), fc.constant(0xffff_ffff), fc.nat({ max: 0xffff_ffff })),
          stack: fc.nat(9),
        }),
        { maxLength: 30 },
      ),
      shortLived: fc.nat(5),
      freeMask: fc.array(fc.boolean(), { maxLength: 40 }),
      memory: fc.option(fc.record({ externalBytes: memoryBytes, arrayBuffersBytes: memoryBytes }), { nil: null }),
      external: fc.boolean(),
    }),
    { maxLength: 25 },
  ),
});

/** Plans with no external objects: what a recording made before them (or without) writes. */
export const plannedTraceWithoutExternal: fc.Arbitrary<PlannedTrace> = plannedTrace.map((p) => ({
  ...p,
  live: p.live.map((l) => ({ ...l, external: false })),
  polls: p.polls.map((q) => ({ ...q, external: false })),
}));

/** Feeds `plan` to `sink` (begin, live batches, then polls as the recorder sends them); returns what must read back. */
export function feedPlan(
  plan: PlannedTrace,
  sink: HeapFileSink,
  startTimeUs: number,
  intervalBytes = 4096,
): PlainBatch[] {
  const stacks = new HeapStacks();
  for (let f = 0; f < 64; f++)
    stacks.callFrames.push({
      functionName: `f${f}`,
      url: `file${f % 3}.js`,
      lineNumber: f,
      columnNumber: 2,
      scriptId: '0',
    });
  const stackIds: number[] = [];
  const names = (id: number): string[] | null =>
    id === NO_STACK ? null : stacks.callFramesOf(id).map((cf) => cf.functionName);
  plan.stackDepths.forEach((depth, s) => {
    let id = -1;
    for (let d = 0; d < depth; d++) id = stacks.add(id, (s * 7 + d * 3) % 64);
    stackIds.push(id);
  });
  const stackOf = (pick: number): number => (pick >= stackIds.length ? NO_STACK : stackIds[pick]!);
  const expected: PlainBatch[] = [];
  const memory: PlainBatch[] = [];
  const live = new Map<number, { ordinal: number; size: number; stack: number }[]>();
  const nextOrdinal = new Map<number, number>();
  const threadId = (t: number): number => 1000 + t;
  // A thread's external objects are a second ordinal space: keyed apart (ordinals may repeat across the two).
  const spaceOf = (t: number, external: boolean): number => t * 2 + (external ? 1 : 0);
  const marked = (external: boolean): { external?: true } => (external ? { external: true } : {});
  sink.begin({ intervalBytes });
  for (const l of plan.live) {
    const t = l.thread % plan.threads;
    const space = spaceOf(t, l.external);
    if (live.has(space)) continue;
    const objects = Array.from({ length: l.count }, (_, i) => ({
      ordinal: 10 + 3 * i,
      size: 16 * (i + 1),
      stack: stackOf(i % 10),
    }));
    live.set(space, [...objects]);
    nextOrdinal.set(space, 10 + 3 * l.count);
    const allocTimesUs = objects.map((_, i) => startTimeUs - 1000 * (l.count - i));
    const batch = {
      threadId: threadId(t),
      ordinals: Uint32Array.from(objects, (o) => o.ordinal),
      sizes: Uint32Array.from(objects, (o) => o.size),
      stackIds: Uint32Array.from(objects, (o) => o.stack),
      allocTimesUs: Float64Array.from(allocTimesUs),
      stacks,
      ...marked(l.external),
    };
    sink.live(batch);
    expected.push({
      kind: 'live',
      threadId: String(threadId(t)),
      ordinals: objects.map((o) => o.ordinal),
      sizes: objects.map((o) => o.size),
      stacks: objects.map((o) => names(o.stack)),
      allocTimesUs,
      ...marked(l.external),
    });
  }
  let time = startTimeUs;
  for (const p of plan.polls) {
    const t = p.thread % plan.threads;
    const space = spaceOf(t, p.external);
    const ext = marked(p.external);
    const since = time;
    time += p.step;
    const held = live.get(space) ?? [];
    const freed = held.filter(
      (_, i) => p.freeMask[i % Math.max(1, p.freeMask.length)] === true && p.freeMask.length > 0,
    );
    let ordinal = nextOrdinal.get(space) ?? 1;
    const made = p.allocs.map((a) => ({ ordinal: (ordinal += a.gap), size: a.size, stack: stackOf(a.stack) }));
    nextOrdinal.set(space, ordinal);
    live.set(space, [...held.filter((o) => !freed.includes(o)), ...made]);
    if (made.length > 0 || p.shortLived > 0) {
      sink.allocations({
        threadId: threadId(t),
        timeUs: time,
        sinceUs: since,
        ordinals: Uint32Array.from(made, (o) => o.ordinal),
        sizes: Uint32Array.from(made, (o) => o.size),
        stackIds: Uint32Array.from(made, (o) => o.stack),
        shortLived: p.shortLived,
        stacks,
        ...ext,
      });
      expected.push({
        kind: 'alloc',
        threadId: String(threadId(t)),
        timeUs: time,
        sinceUs: since,
        ordinals: made.map((o) => o.ordinal),
        sizes: made.map((o) => o.size),
        stacks: made.map((o) => names(o.stack)),
        shortLived: p.shortLived,
        ...ext,
      });
    }
    if (freed.length > 0) {
      sink.frees({
        threadId: threadId(t),
        timeUs: time,
        sinceUs: since,
        ordinals: Uint32Array.from(freed, (o) => o.ordinal),
        ...ext,
      });
      expected.push({
        kind: 'free',
        threadId: String(threadId(t)),
        timeUs: time,
        sinceUs: since,
        ordinals: freed.map((o) => o.ordinal),
        ...ext,
      });
    }
    if (p.memory !== null) {
      sink.memory({ threadId: threadId(t), timeUs: time, ...p.memory });
      memory.push({ kind: 'memory', threadId: String(threadId(t)), timeUs: time, ordinals: [], ...p.memory });
    }
  }
  return [...expected, ...memory];
}

/** Every batch of a source, spelled out (stacks as function names, innermost first). */
export function readBack(source: HeapTraceSource): PlainBatch[] {
  const out: PlainBatch[] = [];
  const names = (id: number): string[] | null => {
    if (id === 0xffffffff) return null;
    const list: string[] = [];
    for (let s = id; s !== 0; s = source.stacks.parent(s)) list.push(source.frames[source.stacks.frame(s)]!.funcname);
    return list;
  };
  for (const b of source.events()) {
    const threadId = String(source.threads[b.thread]!.threadId);
    const ext: { external?: true } = b.external === true ? { external: true } : {};
    if (b.kind === 'live')
      out.push({
        kind: 'live',
        threadId,
        ordinals: [...b.ordinals],
        sizes: [...b.sizes],
        stacks: [...b.stackIds].map(names),
        allocTimesUs: [...b.allocTimesUs],
        ...ext,
      });
    else if (b.kind === 'alloc')
      out.push({
        kind: 'alloc',
        threadId,
        timeUs: b.timeUs,
        sinceUs: b.sinceUs,
        ordinals: [...b.ordinals],
        sizes: [...b.sizes],
        stacks: [...b.stackIds].map(names),
        shortLived: b.shortLived,
        ...ext,
      });
    else out.push({ kind: 'free', threadId, timeUs: b.timeUs, sinceUs: b.sinceUs, ordinals: [...b.ordinals], ...ext });
  }
  for (const m of source.externalMemory?.() ?? []) {
    const { timeUs, externalBytes, arrayBuffersBytes } = m;
    const threadId = String(source.threads[m.thread]!.threadId);
    out.push({ kind: 'memory', threadId, timeUs, ordinals: [], externalBytes, arrayBuffersBytes });
  }
  return out;
}

/** A version-2 writer at 1 ms starting at `startUs`, for heap events; `more` adds or overrides options. */
export function heapFileWriter(out: string, startUs: number, more: Partial<ProfileWriterOptions> = {}): ProfileWriter {
  return new ProfileWriter(out, { sampleIntervalUs: 1000n, startTimeUs: BigInt(startUs), formatVersion: 2, ...more });
}
