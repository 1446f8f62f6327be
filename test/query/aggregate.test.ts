import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anonymousName, makeFrame, NodeStatus, ProfileBuilder, SampleTypes, type Frame } from '../../lib/profile/index';
import { aggregate, formatTable, STATUS_FILTERS, type AggregateBy } from '../../lib/query/aggregate';
import { acceptedVectors, readExpected } from '../support/vectors';
import { builderFromExpected } from '../support/model';
import { nearestExactSum, spannedValues } from '../support/exact-sum';

const FILES = ['a.js', 'b.js', ''];
const NAMES = ['main', 'parse', 'walk', '(program)', ''];
const BYTES = { type: 'alloc_space', unit: 'bytes' };

interface Row {
  thread: number;
  time: number;
  status: number;
  stack: number[];
  bytes: number;
}

const profileArb = fc
  .record({
    frames: fc.array(
      fc.record({
        f: fc.constantFrom(...FILES),
        n: fc.constantFrom(...NAMES),
        line: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
      }),
      { minLength: 1, maxLength: 12 },
    ),
    samples: fc.array(
      fc.record({
        thread: fc.integer({ min: 0, max: 2 }),
        time: fc.integer({ min: 0, max: 10_000 }),
        status: fc.integer({ min: 0, max: 127 }),
        stack: fc.array(fc.nat(), { maxLength: 12 }),
        // Weights as large as real heap profiles and values near 2^53 / 2^10 stay exact in sums.
        bytes: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 2 ** 43 })),
      }),
      { maxLength: 80 },
    ),
  })
  .map(({ frames, samples }) => {
    const model = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples, BYTES],
      defaultSampleType: 0,
      startTimeUs: 1_000_000n,
      sampleIntervalUs: 1000n,
    });
    const ids = frames.map((fr) => model.internFrame(makeFrame(fr.n, fr.f, fr.line)));
    const rows: Row[] = samples.map((s) => ({ ...s, stack: s.stack.map((i) => ids[i % ids.length]!) }));
    for (const s of rows)
      model.add(model.stacks.intern(s.stack), model.internThread(BigInt(s.thread)), 1_000_000 + s.time, s.status, [
        1,
        s.bytes,
      ]);
    return { model, rows };
  });

/** The obvious, materialising definition of self/total, weighted. */
function reference(model: ProfileBuilder, rows: Row[], by: AggregateBy, column: number, keep: (s: Row) => boolean) {
  const key = (f: Frame) =>
    by === 'file'
      ? f.filename
      : by === 'line'
        ? `${f.filename}|${anonymousName(f.funcname)}|${f.lineno}`
        : `${f.filename}|${anonymousName(f.funcname)}`;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let n = 0;
  let sum = 0;
  for (const s of rows.filter(keep)) {
    n++;
    const v = column === 0 ? 1 : s.bytes;
    sum += v;
    // An empty stack is kept and counted, as one row (go tool pprof -top counts them in its total).
    const keys = s.stack.length === 0 ? ['(no stack)'] : s.stack.map((i) => key(model.frames[i]!));
    if (keys.length > 0) self.set(keys[0]!, (self.get(keys[0]!) ?? 0) + v);
    for (const k of new Set(keys)) total.set(k, (total.get(k) ?? 0) + v);
  }
  return { n, sum, self, total };
}

describe('aggregate', () => {
  it('self and total agree with the materialising definition, for each sample type and under every filter', () => {
    fc.assert(
      fc.property(
        profileArb,
        fc.constantFrom<AggregateBy>('function', 'file', 'line'),
        fc.constantFrom<'self' | 'total'>('self', 'total'),
        fc.constantFrom(undefined, 'samples', 'alloc_space', 'alloc_space/bytes', 1),
        fc.option(fc.constantFrom('0', '1', '2'), { nil: undefined }),
        fc.option(fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })), { nil: undefined }),
        fc.option(fc.constantFrom(...Object.keys(STATUS_FILTERS)), { nil: undefined }),
        ({ model, rows }, by, sort, sampleType, thread, window, status) => {
          const fromMs = window?.[0];
          const toMs = window === undefined ? undefined : window[0] + window[1];
          const result = aggregate(model, { by, sort, thread, fromMs, toMs, status, sampleType, limit: 0 });
          const column = sampleType === undefined || sampleType === 'samples' ? 0 : 1;
          expect(result.sampleType).toEqual(column === 0 ? SampleTypes.samples : BYTES);
          const keep = (s: Row) =>
            (thread === undefined || String(s.thread) === thread) &&
            (fromMs === undefined || 1_000_000 + s.time >= 1_000_000 + fromMs * 1000) &&
            (toMs === undefined || 1_000_000 + s.time < 1_000_000 + toMs * 1000) &&
            (status === undefined || STATUS_FILTERS[status]!(s.status));
          const ref = reference(model, rows, by, column, keep);
          expect(result.samples).toBe(ref.n);
          expect(result.total).toBe(ref.sum);
          expect(result.scanned).toBe(model.sampleCount);
          for (const row of result.rows) {
            const k =
              row.key === '(no stack)'
                ? row.key
                : by === 'file'
                  ? row.filename
                  : by === 'line'
                    ? `${row.filename}|${row.funcname}|${row.lineno}`
                    : `${row.filename}|${row.funcname}`;
            expect(row.self).toBe(ref.self.get(k) ?? 0);
            expect(row.total).toBe(ref.total.get(k));
            expect(row.total).toBeGreaterThanOrEqual(row.self);
          }
          // Every key with a nonzero total is listed (zero-valued keys may be left out).
          const listed = new Set(
            result.rows.map((row) =>
              row.key === '(no stack)'
                ? row.key
                : by === 'file'
                  ? row.filename
                  : by === 'line'
                    ? `${row.filename}|${row.funcname}|${row.lineno}`
                    : `${row.filename}|${row.funcname}`,
            ),
          );
          for (const [k, v] of ref.total) if (v !== 0) expect(listed.has(k)).toBe(true);
          const primary = result.rows.map((r) => (sort === 'self' ? r.self : r.total));
          for (let i = 1; i < primary.length; i++) expect(primary[i]!).toBeLessThanOrEqual(primary[i - 1]!);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a value is a weight: one record of 3×10^10 and one of 10^15 sum exactly, without expanding', () => {
    const model = new ProfileBuilder({
      sampleTypes: [{ type: 'samples', unit: 'count' }, BYTES],
      defaultSampleType: 1,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    const f = (n: string) => model.internFrame(makeFrame(n, 'x.js', 1));
    const [a, b] = [f('a'), f('b')];
    model.add(model.stacks.intern([a, b]), model.internThread(0n), NaN, 0, [3e10, 1e15]);
    model.add(model.stacks.intern([b]), model.internThread(0n), NaN, 0, [1, 7]);
    const before = process.memoryUsage().heapUsed;
    const top = aggregate(model);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20 * 1024 * 1024);
    expect(top.total).toBe(1e15 + 7);
    expect(top.rows.map((r) => [r.funcname, r.self, r.total])).toEqual([
      ['a', 1e15, 1e15],
      ['b', 7, 1e15 + 7],
    ]);
    expect(aggregate(model, { sampleType: 'samples' }).total).toBe(3e10 + 1);
  });

  it('limits rows, and the table shows them in the unit', () => {
    const model = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples, SampleTypes.cpu],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1000n,
    });
    const f = (n: string) => model.internFrame(makeFrame(n, 'x.js', 1));
    const [a, b, c] = [f('a'), f('b'), f('c')];
    const t = model.internThread(1n);
    for (let i = 0; i < 5; i++) model.add(model.stacks.intern([a, b]), t, 0, NodeStatus.OnCpu, [1, 2_000_000]);
    for (let i = 0; i < 3; i++) model.add(model.stacks.intern([c, b]), t, 0, 0, [1, 1_000_000]);
    const top = aggregate(model, { limit: 2 });
    expect(top.rows.map((r) => [r.funcname, r.self, r.total])).toEqual([
      ['a', 5, 5],
      ['c', 3, 3],
    ]);
    expect(aggregate(model, { sort: 'total', limit: 1 }).rows[0]).toMatchObject({
      funcname: 'b',
      self: 0,
      total: 8,
      totalPct: 100,
    });
    expect(aggregate(model, { status: 'idle' }).samples).toBe(3);
    const table = formatTable(top).split('\n');
    expect(table[0]).toMatch(/self\s+self%\s+total\s+total%\s+function/);
    expect(table[1]).toMatch(/^\s*5\s+62\.5%\s+5\s+62\.5%\s+a\s+x\.js$/);
    expect(table.at(-1)).toBe('8 samples; samples/count total 8');
    const cpu = formatTable(aggregate(model, { sampleType: 'cpu', limit: 2 })).split('\n');
    expect(cpu[1]).toMatch(/^\s*10ms\s+76\.9%\s+10ms\s+76\.9%\s+a\s+x\.js$/);
    expect(cpu.at(-1)).toBe('8 samples; cpu/nanoseconds total 13ms');
  });

  it('refuses an unknown status filter, key or sample type with a coded error', () => {
    const model = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1000n,
    });
    expect(() => aggregate(model, { status: 'sleepy' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    expect(() => aggregate(model, { by: 'module' as AggregateBy })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    expect(() => aggregate(model, { sampleType: 'inuse_space' })).toThrow(
      expect.objectContaining({ code: 'ERR_CONVERT_SAMPLE_TYPE', expected: 'samples/count' }),
    );
  });

  it('on the real CPython profiles r01/r02: self counts add up to the samples with a stack, and wall time to the gaps', () => {
    for (const name of acceptedVectors().filter((n) => n.startsWith('r0'))) {
      const expected = readExpected(name);
      const model = builderFromExpected(expected);
      const result = aggregate(model, { sort: 'total', limit: 0 });
      const withStack = expected.samples.filter((s) => s.frames.length > 0).length;
      expect(result.rows[0]!.total).toBeLessThanOrEqual(withStack);
      expect(result.rows.reduce((sum, r) => sum + r.self, 0)).toBe(withStack);
      const wall = aggregate(model, { sampleType: 'wall', limit: 0 });
      expect(wall.total).toBeGreaterThan(0);
      expect(wall.rows.reduce((sum, r) => sum + r.self, 0)).toBeLessThanOrEqual(wall.total);
    }
  });
});

describe('aggregate: fractional values total their exact sums, rounded once to doubles', () => {
  const WALL_MS = { type: 'wall', unit: 'milliseconds' };
  const NAMES = ['a', 'b', 'c', 'd'];
  const push = (m: Map<string, number[]>, key: string, v: number) => m.set(key, [...(m.get(key) ?? []), v]);

  it('self and total per function, each thread and the total: the nearest double to the exact sum (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            stack: fc.array(fc.nat({ max: NAMES.length - 1 }), { maxLength: 5 }),
            thread: fc.nat({ max: 1 }),
            value: spannedValues(1e6),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        (rows) => {
          const model = new ProfileBuilder({
            sampleTypes: [WALL_MS],
            defaultSampleType: 0,
            startTimeUs: 0n,
            sampleIntervalUs: 1000n,
          });
          const ids = NAMES.map((n) => model.internFrame(makeFrame(n, 'x.js')));
          const self = new Map<string, number[]>();
          const total = new Map<string, number[]>();
          const perThread = new Map<string, number[]>();
          for (const r of rows) {
            // Innermost first: the first frame is the leaf.
            const stack = model.stacks.intern(r.stack.map((i) => ids[i]!));
            model.add(stack, model.internThread(BigInt(r.thread)), NaN, 0, [r.value]);
            const keys = r.stack.length === 0 ? ['(no stack)'] : r.stack.map((i) => NAMES[i]!);
            push(self, keys[0]!, r.value);
            for (const k of new Set(keys)) push(total, k, r.value);
            push(perThread, String(r.thread), r.value);
          }
          const result = aggregate(model, { limit: 0 });
          expect(result.total).toBe(nearestExactSum(rows.map((r) => r.value)));
          for (const row of result.rows) {
            const key = row.key === '(no stack)' ? row.key : row.funcname!;
            expect([key, row.self + 0, row.total]).toEqual([
              key,
              nearestExactSum(self.get(key) ?? []),
              nearestExactSum(total.get(key)!),
            ]);
          }
          for (const row of aggregate(model, { by: 'thread', limit: 0 }).rows)
            expect(row.self).toBe(nearestExactSum(perThread.get(row.thread!.key)!));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('0.1 + 0.2 + 0.3 ms is 0.6 ms in self, total and the total, not the float sum 0.6000000000000001', () => {
    const model = new ProfileBuilder({
      sampleTypes: [WALL_MS],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1n,
    });
    const stack = model.stacks.intern([model.internFrame(makeFrame('a', 'x.js'))]);
    for (const v of [0.1, 0.2, 0.3]) model.add(stack, model.internThread(0n), NaN, 0, [v]);
    const top = aggregate(model);
    expect([top.total, top.rows[0]!.self, top.rows[0]!.total]).toEqual([0.6, 0.6, 0.6]);
  });
});
