import { describe, expect, it } from 'vitest';
import { ConcatenatedHeapTrace, heapProfile, leakSuspects, replayHeapTrace, type HeapEventBatch, type HeapTraceSource } from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import { handTrace, type HandPoll } from './hand-trace';

/** One trace cut at `cutUs` into two, as rotation cuts a recording: the second starts with what was live then. */
function rotate(trace: HeapTraceSource, cutUs: number): [HeapTraceSource, HeapTraceSource] {
  const all = [...trace.events()].map((b) => ({ ...b }));
  const before = all.filter((b) => b.kind !== 'live' && b.timeUs <= cutUs);
  const after = all.filter((b) => b.kind !== 'live' && b.timeUs > cutUs);
  const { live } = replayHeapTrace({ ...trace, events: () => before }, {});
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
    for (let i = 0; i < b.ordinals.length; i++) if (live.has(b.thread, b.ordinals[i]!) && b.sizes[i] === live.sizes[slot] && b.stackIds[i] === live.stacks[slot]) return b.ordinals[i]!;
  }
  throw new Error('slot not found');
}

describe('ConcatenatedHeapTrace (rotated files of one process)', () => {
  const polls: HandPoll[] = [];
  let ordinal = 0;
  for (let s = 1; s <= 12; s++) polls.push({ timeUs: s * 1_000_000, alloc: [[++ordinal, 2000, 'leak'], [++ordinal, 9000, 'churn']], free: s > 1 ? [ordinal - 2] : [] });

  it('answers as the uncut trace does: inherited objects are neither lost nor counted twice', () => {
    const whole = handTrace(4096, polls, 0).trace;
    const [a, b] = rotate(handTrace(4096, polls, 0).trace, 6_500_000);
    const joined = new ConcatenatedHeapTrace([a, b]);
    for (const type of ['alloc_space', 'inuse_space', 'inuse_objects']) {
      const want = aggregate(heapProfile(whole).profile, { sampleType: type, limit: 0 }).rows.map((r) => [r.funcname, r.self]);
      expect(aggregate(heapProfile(joined).profile, { sampleType: type, limit: 0 }).rows.map((r) => [r.funcname, r.self])).toEqual(want);
    }
    expect(leakSuspects(joined).suspects[0]).toMatchObject({ funcname: 'leak', liveBytes: leakSuspects(whole).suspects[0]!.liveBytes });
    // The second file alone: its inherited objects count as live, allocated before it began.
    const alone = aggregate(heapProfile(rotate(handTrace(4096, polls, 0).trace, 6_500_000)[1]).profile, { sampleType: 'inuse_space', limit: 0 });
    expect(alone.rows.find((r) => r.funcname === 'leak')!.self).toBe(aggregate(heapProfile(whole).profile, { sampleType: 'inuse_space', limit: 0 }).rows.find((r) => r.funcname === 'leak')!.self);
  });
});
