import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heapProfile, leakSuspects, parseHeapMoment, unsampledWeight, type HeapMoment } from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import { handTrace, type HandObject, type HandPoll } from './hand-trace';

const START = 1_000_000;

/** Per function: the four heap types computed object by object (what heapProfile must equal). */
function expected(objects: HandObject[], interval: number, atUs: number, fromUs = -Infinity, toUs = Infinity) {
  const out = new Map<string, number[]>();
  for (const o of objects) {
    if (o.allocUs < fromUs || o.allocUs > toUs) continue;
    const w = unsampledWeight(o.size, interval);
    const v = out.get(o.fn) ?? [0, 0, 0, 0];
    v[0]! += w.objects;
    v[1]! += w.bytes;
    if (o.allocUs <= atUs && o.freeUs > atUs) {
      v[2]! += w.objects;
      v[3]! += w.bytes;
    }
    out.set(o.fn, v);
  }
  return out;
}

function byFunction(profile: ReturnType<typeof heapProfile>['profile'], type: string): Map<string, number> {
  const r = aggregate(profile, { sampleType: type, limit: 0 });
  return new Map(r.rows.filter((row) => row.funcname !== 'main').map((row) => [row.funcname!, row.self]));
}

const polls: HandPoll[] = [
  {
    timeUs: START + 1000,
    alloc: [
      [1, 1000, 'leak'],
      [2, 50_000, 'garbage'],
      [3, 50_000, 'garbage'],
    ],
  },
  {
    timeUs: START + 2000,
    alloc: [
      [4, 1000, 'leak'],
      [5, 50_000, 'garbage'],
    ],
    free: [2],
  },
  { timeUs: START + 3000, alloc: [[6, 1000, 'leak']], free: [3, 5], shortLived: 7 },
  { timeUs: START + 4000, alloc: [[7, 1000, 'leak']] },
];

describe('heapProfile', () => {
  it("has Go's four heap sample types, space/bytes per interval, inuse_space by default", () => {
    const { trace } = handTrace(4096, polls, START);
    const { profile, info } = heapProfile(trace);
    expect(profile.meta.sampleTypes.map((t) => `${t.type}/${t.unit}`)).toEqual([
      'alloc_objects/count',
      'alloc_space/bytes',
      'inuse_objects/count',
      'inuse_space/bytes',
    ]);
    expect(profile.meta.sampleTypes[profile.meta.defaultSampleType]!.type).toBe('inuse_space');
    expect(profile.meta.periodType).toEqual({ type: 'space', unit: 'bytes' });
    expect(profile.meta.period).toBe(4096);
    expect(info).toMatchObject({
      atMs: 4,
      polls: 4,
      allocations: 7,
      frees: 3,
      shortLived: 7,
      shortLivedBytesEstimate: 7 * 4096,
    });
    // Peak: after the second poll 102,000 sampled bytes were live.
    expect(info.peakMs).toBe(2);
    expect(info.peakSampledBytes).toBe(102_000);
    expect(info.endSampledBytes).toBe(4000);
  });

  it("the peak is the poll with the most live bytes as estimated, not the sampled sizes' sum", () => {
    // Poll 1: one 1 MB object (sampled with p ~ 1: ~1 MB). Poll 2: it is freed and 300 objects of 100 bytes are
    // live: 30,000 sampled bytes, but each stands for ~one interval, ~1.24 MB in all.
    const small: [number, number, string][] = Array.from({ length: 300 }, (_, i) => [10 + i, 100, 'many']);
    const shaped: HandPoll[] = [
      { timeUs: START + 1000, alloc: [[1, 1_000_000, 'big']] },
      { timeUs: START + 2000, alloc: small, free: [1] },
      { timeUs: START + 3000, free: small.slice(0, 200).map(([ordinal]) => ordinal) },
    ];
    const { trace } = handTrace(4096, shaped, START);
    const { info } = heapProfile(trace, { at: 'peak' });
    const estimate = 300 * unsampledWeight(100, 4096).bytes;
    expect(info.peakMs).toBe(2);
    expect(info.peakBytes).toBe(Math.round(estimate));
    expect(info.peakSampledBytes).toBe(30_000);
    expect(info.endBytes).toBe(Math.round(estimate / 3));
    expect(info.endSampledBytes).toBe(10_000);
  });

  it.each<[HeapMoment, number]>([
    ['end', Number.MAX_VALUE],
    [1.5, START + 1500],
    [2, START + 2000],
    ['peak', START + 2000],
  ])('at %s: every type per function equals the object-by-object sums', (at, atUs) => {
    const { trace, objects } = handTrace(4096, polls, START);
    const { profile } = heapProfile(trace, { at });
    const want = expected(objects, 4096, atUs);
    ['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space'].forEach((type, k) => {
      const got = byFunction(profile, type);
      for (const [fn, v] of want) expect(got.get(fn) ?? 0).toBe(Math.round(v[k]!));
    });
  });

  it('a window keeps the allocations made in it, and in use only what of them was live', () => {
    const { trace, objects } = handTrace(4096, polls, START);
    const { profile } = heapProfile(trace, { fromMs: 2, toMs: 3, at: 'end' });
    const want = expected(objects, 4096, Number.MAX_VALUE, START + 2000, START + 3000);
    expect(byFunction(profile, 'alloc_space').get('garbage')).toBe(Math.round(want.get('garbage')![1]!));
    expect(byFunction(profile, 'inuse_space').get('garbage') ?? 0).toBe(0);
    expect(byFunction(profile, 'inuse_space').get('leak')).toBe(Math.round(2 * unsampledWeight(1000, 4096).bytes));
  });

  it('equals the object-by-object sums on random traces, at random moments and windows', () => {
    const poll = fc.record({
      gapUs: fc.integer({ min: 1, max: 5000 }),
      allocs: fc.array(fc.tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('a', 'b', 'c')), {
        maxLength: 6,
      }),
      freeMask: fc.array(fc.boolean(), { maxLength: 30 }),
    });
    fc.assert(
      fc.property(
        fc.array(poll, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 70 }),
        fc.integer({ min: 0, max: 70 }),
        fc.integer({ min: 0, max: 70 }),
        (raw, atMs, fromMs, span) => {
          let t = START;
          let ordinal = 0;
          const alive: number[] = [];
          const script: HandPoll[] = raw.map((p) => {
            t += p.gapUs;
            const free = alive.filter((_, i) => p.freeMask[i] === true);
            for (const o of free) alive.splice(alive.indexOf(o), 1);
            const alloc = p.allocs.map(([size, fn]): [number, number, string] => [++ordinal, size, fn]);
            for (const a of alloc) alive.push(a[0]);
            return { timeUs: t, alloc, free };
          });
          const { trace, objects } = handTrace(16_384, script, START);
          const { profile } = heapProfile(trace, { at: atMs / 4, fromMs: fromMs / 4, toMs: (fromMs + span) / 4 });
          // The collector's clock starts at its first batch (a poll with no events sends none).
          const origin = trace.meta.startTimeUs;
          const want = expected(
            objects,
            16_384,
            origin + atMs * 250,
            origin + fromMs * 250,
            origin + (fromMs + span) * 250,
          );
          ['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space'].forEach((type, k) => {
            const got = byFunction(profile, type);
            for (const fn of ['a', 'b', 'c'])
              expect(got.get(fn) ?? 0).toBe(Math.max(0, Math.round(want.get(fn)?.[k] ?? 0)));
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('parses --at and refuses what is not a moment', () => {
    expect(parseHeapMoment('peak')).toBe('peak');
    expect(parseHeapMoment('1500')).toBe(1500);
    for (const bad of ['', 'soon', '-5', 'NaN'])
      expect(() => parseHeapMoment(bad)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });
});

describe('a damaged heap trace', () => {
  it.each([
    ['a stack it does not have', { stackIds: Uint32Array.of(999) }, /names stack 999/],
    ['a thread it does not have', { thread: 5 }, /names thread 5/],
    ['batches out of time order', { timeUs: 10 }, /follows one at/],
  ])('naming %s is refused with ERR_CONVERT_BAD_INPUT, by every question', (_what, damage, message) => {
    const { trace } = handTrace(4096, polls, START);
    const events = [...trace.events()];
    const damaged = {
      ...trace,
      meta: trace.meta,
      frames: trace.frames,
      stacks: trace.stacks,
      threads: trace.threads,
      events: () => [events[0]!, { ...events[1]!, ...damage }, ...events.slice(2)],
    };
    for (const ask of [() => heapProfile(damaged), () => leakSuspects(damaged)])
      expect(ask).toThrow(
        expect.objectContaining({ code: 'ERR_CONVERT_BAD_INPUT', message: expect.stringMatching(message) }),
      );
  });
});
