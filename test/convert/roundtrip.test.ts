import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromCollapsed, toCollapsed } from '../../lib/convert/collapsed';
import { fromCpuProfile, toCpuProfile } from '../../lib/convert/cpuprofile';
import { MemoryProfile, copyProfile, frameLabel, type Frame, type ProfileSource } from '../../lib/convert/model';
import { toPprof } from '../../lib/convert/pprof';
import { fromPprof } from '../../lib/convert/pprof-read';
import { fromSpeedscope, toSpeedscope } from '../../lib/convert/speedscope';
import {
  acceptedVectors,
  keepCpuProfile,
  keepPprof,
  keepPprofAggregated,
  keepSpeedscope,
  modelFromExpected,
  project,
  readExpected,
  type Keep,
} from './helpers';

const viaJson = (value: unknown) => JSON.parse(JSON.stringify(value));

const frameArb: fc.Arbitrary<Frame> = fc.record({
  filename: fc.oneof(fc.constant(''), fc.string({ maxLength: 12 })),
  funcname: fc.string({ maxLength: 12 }),
  lineno: fc.option(fc.integer({ min: -3, max: 100_000 }), { nil: null }),
  endLineno: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: null }),
  column: fc.option(fc.integer({ min: -3, max: 500 }), { nil: null }),
  endColumn: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
  opcode: fc.option(fc.integer({ min: 0, max: 254 }), { nil: null }),
});

/** A random profile: threads with huge ids, interpreters, times that go backwards, every status byte, empty and deep stacks. */
function profileArb(timeMax: bigint): fc.Arbitrary<MemoryProfile> {
  return fc
    .record({
      frames: fc.array(frameArb, { minLength: 1, maxLength: 15 }),
      threads: fc.array(fc.tuple(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 4 }),
      start: fc.bigInt({ min: 0n, max: timeMax }),
      interval: fc.bigInt({ min: 1n, max: 100_000n }),
      samples: fc.array(
        fc.record({
          thread: fc.nat(),
          time: fc.bigInt({ min: 0n, max: timeMax }),
          status: fc.integer({ min: 0, max: 255 }),
          stack: fc.array(fc.nat(), { maxLength: 40 }),
        }),
        { maxLength: 60 },
      ),
    })
    .map(({ frames, threads, start, interval, samples }) => {
      const model = new MemoryProfile({ startTimeUs: start, sampleIntervalUs: interval });
      const ids = frames.map((f) => model.internFrame(f));
      for (const s of samples) {
        const [threadId, interpreterId] = threads[s.thread % threads.length]!;
        model.writeStack(threadId, interpreterId, s.time, s.status, s.stack.map((i) => ids[i % ids.length]!));
      }
      return model;
    });
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function roundTrips(source: ProfileSource, keep: Keep, back: ProfileSource): void {
  expect(project(back, keep)).toEqual(project(source, keep));
}

describe('model', () => {
  it('copyProfile keeps every sample and interns each frame once', () => {
    fc.assert(
      fc.property(profileArb(SAFE), (model) => {
        const copy = MemoryProfile.from(model);
        const all: Keep = { time: true, status: true, frame: (f) => JSON.stringify(f) };
        roundTrips(model, all, copy);
        expect(new Set(copy.frames.map((f) => JSON.stringify(f))).size).toBe(copy.frames.length);
        expect(copyProfile(model, new MemoryProfile())).toBe(model.sampleCount);
      }),
      { numRuns: 100 },
    );
  });
});

describe('.cpuprofile', () => {
  it('round trip keeps stack, thread, time (µs) and status', () => {
    fc.assert(
      fc.property(profileArb(SAFE), (model) => {
        const json = viaJson(toCpuProfile(model));
        roundTrips(model, keepCpuProfile, fromCpuProfile(json));
      }),
      { numRuns: 150 },
    );
  });

  it('writes what DevTools expects: a (root) tree, non-negative deltas, ids that exist', () => {
    fc.assert(
      fc.property(profileArb(SAFE), (model) => {
        const p = toCpuProfile(model);
        expect(p.nodes[0]!.callFrame.functionName).toBe('(root)');
        const ids = new Set(p.nodes.map((n) => n.id));
        expect(ids.size).toBe(p.nodes.length);
        for (const n of p.nodes) for (const c of n.children ?? []) expect(ids.has(c)).toBe(true);
        for (const s of p.samples) expect(ids.has(s)).toBe(true);
        p.timeDeltas.slice(1).forEach((d) => expect(d).toBeGreaterThanOrEqual(0));
        expect(p.samples.length).toBe(model.sampleCount);
        const hits = p.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
        expect(hits).toBe(model.sampleCount);
      }),
      { numRuns: 100 },
    );
  });

  it('one thread of several with { thread }', () => {
    fc.assert(
      fc.property(profileArb(SAFE), (model) => {
        const first = model.sampleList[0];
        fc.pre(first !== undefined);
        const key = first!.interpreterId === 0 ? `${first!.threadId}` : `${first!.threadId}@${first!.interpreterId}`;
        const only = fromCpuProfile(viaJson(toCpuProfile(model, { thread: key })));
        const expected = new MemoryProfile(model.meta);
        for (const s of model.sampleList) if (s.threadId === first!.threadId && s.interpreterId === first!.interpreterId) {
          expected.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, Array.from(s.stack, (i) => expected.internFrame(model.frames[i]!)));
        }
        roundTrips(expected, keepCpuProfile, only);
      }),
      { numRuns: 50 },
    );
  });
});

describe('pprof', () => {
  it('per-sample round trip keeps stack, thread, time (µs) and status, u64 values included', () => {
    fc.assert(
      fc.property(profileArb((1n << 64n) - 1n), (model) => {
        roundTrips(model, keepPprof, fromPprof(toPprof(model)));
      }),
      { numRuns: 150 },
    );
  });

  it('aggregated keeps every (stack, thread) with its count', () => {
    fc.assert(
      fc.property(profileArb(SAFE), (model) => {
        const bytes = toPprof(model, { aggregate: true });
        roundTrips(model, keepPprofAggregated, fromPprof(bytes));
      }),
      { numRuns: 100 },
    );
  });

  it('reads raw (not gzipped) profile.proto too, and refuses garbage with a ProfpackError', async () => {
    const { toPprofProfile } = await import('../../lib/convert/pprof');
    const model = new MemoryProfile({ startTimeUs: 5n, sampleIntervalUs: 10n });
    const f = model.internFrame({ filename: 'a.js', funcname: 'f', lineno: 3, endLineno: null, column: 7, endColumn: null, opcode: null });
    model.writeStack(1n, 0, 20n, 2, [f]);
    const back = fromPprof(toPprofProfile(model).encode());
    roundTrips(model, keepPprof, back);
    expect(() => fromPprof(new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).toThrow(expect.objectContaining({ code: 'ERR_CONVERT_BAD_INPUT' }));
  });
});

describe('speedscope', () => {
  it('round trip keeps stack, thread and time through the weights', () => {
    fc.assert(
      fc.property(profileArb(1n << 40n), (model) => {
        roundTrips(model, keepSpeedscope, fromSpeedscope(viaJson(toSpeedscope(model))));
      }),
      { numRuns: 150 },
    );
  });

  it('stacks are outermost first and weights non-negative', () => {
    const model = new MemoryProfile({ startTimeUs: 0n, sampleIntervalUs: 1000n });
    const outer = model.internFrame({ filename: 'x.js', funcname: 'outer', lineno: 1, endLineno: null, column: 1, endColumn: null, opcode: null });
    const inner = model.internFrame({ filename: 'x.js', funcname: 'inner', lineno: 9, endLineno: null, column: 2, endColumn: null, opcode: null });
    model.writeStack(7n, 0, 2000n, 2, [inner, outer]);
    model.writeStack(7n, 0, 1000n, 2, [outer]);
    const file = toSpeedscope(model);
    expect(file.profiles[0]!.samples).toEqual([[outer], [outer, inner]]);
    expect(file.profiles[0]!.weights).toEqual([1000, 1000]);
    expect(file.profiles[0]!.startValue).toBe(1000);
  });
});

describe('collapsed stacks', () => {
  const clean = (s: string) => s.replace(/;/g, ':').replace(/[\r\n]/g, ' ');
  it('keeps every stack with its count (and the thread when there are several)', () => {
    fc.assert(
      fc.property(profileArb(SAFE), (model) => {
        // The format has no escaping: a label whose filename holds '(' or whose name holds ' (' reads back split elsewhere (documented in collapsed.ts).
        fc.pre(model.frames.every((f) => !f.filename.includes('(') && !f.funcname.includes(' (')));
        const text = toCollapsed(model);
        const back = fromCollapsed(text);
        const threads = new Set(model.sampleList.map((s) => `${s.threadId}@${s.interpreterId}`));
        const line = (src: ProfileSource, label: (f: Frame) => string) =>
          [...src.samples()].map((s) => `${threads.size > 1 ? `${s.threadId}@${s.interpreterId}` : ''}:${Array.from(s.stack, (i) => label(src.frames[i]!)).join(';')}`).sort();
        expect(line(back, frameLabel)).toEqual(line(model, (f) => clean(frameLabel(f))));
        for (const l of text.trimEnd().split('\n').filter((x) => x !== '')) expect(l).toMatch(/ \d+$/);
      }),
      { numRuns: 100 },
    );
  });

  it('writes the familiar shape', () => {
    const model = new MemoryProfile();
    const a = model.internFrame({ filename: 'm.js', funcname: 'main', lineno: 1, endLineno: null, column: null, endColumn: null, opcode: null });
    const b = model.internFrame({ filename: '', funcname: '(program)', lineno: null, endLineno: null, column: null, endColumn: null, opcode: null });
    model.writeStack(1n, 0, 1n, 0, [b, a]);
    model.writeStack(1n, 0, 2n, 0, [b, a]);
    model.writeStack(1n, 0, 3n, 0, [a]);
    expect(toCollapsed(model)).toBe('main (m.js:1);(program) 2\nmain (m.js:1) 1\n');
  });
});

describe('every shared vector CPython accepts (samples from its expected.json)', () => {
  const names = acceptedVectors();
  it('found the vectors', () => expect(names.length).toBeGreaterThan(40));
  for (const name of names) {
    it(name, () => {
      const model = modelFromExpected(readExpected(name));
      const safe = model.sampleList.every((s) => s.timestampUs <= SAFE) && model.meta.startTimeUs <= SAFE;
      roundTrips(model, keepPprof, fromPprof(toPprof(model)));
      roundTrips(model, keepPprofAggregated, fromPprof(toPprof(model, { aggregate: true })));
      const cpu = fromCpuProfile(viaJson(toCpuProfile(model)));
      const ss = fromSpeedscope(viaJson(toSpeedscope(model)));
      if (safe) {
        roundTrips(model, keepCpuProfile, cpu);
        roundTrips(model, keepSpeedscope, ss);
      } else {
        // JSON numbers are float64: times beyond 2^53 µs keep ~16 significant digits.
        roundTrips(model, { ...keepCpuProfile, time: false }, cpu);
        roundTrips(model, { ...keepSpeedscope, time: false }, ss);
        const close = (a: ProfileSource, b: ProfileSource) => {
          const ta = [...a.samples()].map((s) => Number(s.timestampUs)).sort((x, y) => x - y);
          const tb = [...b.samples()].map((s) => Number(s.timestampUs)).sort((x, y) => x - y);
          ta.forEach((t, i) => expect(Math.abs(tb[i]! - t)).toBeLessThanOrEqual(Math.abs(t) * 1e-12));
        };
        close(model, cpu);
        close(model, ss);
      }
    });
  }
});
