import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryProfile, NodeStatus, type Frame } from '../../lib/convert/model';
import { aggregate, formatTable, STATUS_FILTERS, type AggregateBy } from '../../lib/query/aggregate';
import { acceptedVectors, modelFromExpected, readExpected } from '../convert/helpers';

const FILES = ['a.js', 'b.js', ''];
const NAMES = ['main', 'parse', 'walk', '(program)', ''];

const profileArb = fc
  .record({
    frames: fc.array(fc.record({ f: fc.constantFrom(...FILES), n: fc.constantFrom(...NAMES), line: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }) }), { minLength: 1, maxLength: 12 }),
    samples: fc.array(
      fc.record({ thread: fc.integer({ min: 0, max: 2 }), time: fc.integer({ min: 0, max: 10_000 }), status: fc.integer({ min: 0, max: 127 }), stack: fc.array(fc.nat(), { maxLength: 12 }) }),
      { maxLength: 80 },
    ),
  })
  .map(({ frames, samples }) => {
    const model = new MemoryProfile({ startTimeUs: 1_000_000n, sampleIntervalUs: 1000n });
    const ids = frames.map((fr) => model.internFrame({ filename: fr.f, funcname: fr.n, lineno: fr.line, endLineno: null, column: null, endColumn: null, opcode: null }));
    for (const s of samples) model.writeStack(BigInt(s.thread), 0, 1_000_000n + BigInt(s.time), s.status, s.stack.map((i) => ids[i % ids.length]!));
    return model;
  });

/** The obvious, materialising definition of self/total. */
function reference(model: MemoryProfile, by: AggregateBy, keep: (s: MemoryProfile['sampleList'][number]) => boolean) {
  const key = (f: Frame) => (by === 'file' ? f.filename : by === 'line' ? `${f.filename}|${f.funcname}|${f.lineno}` : `${f.filename}|${f.funcname}`);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let n = 0;
  for (const s of model.sampleList.filter(keep)) {
    n++;
    const keys = Array.from(s.stack, (i) => key(model.frames[i]!));
    if (keys.length > 0) self.set(keys[0]!, (self.get(keys[0]!) ?? 0) + 1);
    for (const k of new Set(keys)) total.set(k, (total.get(k) ?? 0) + 1);
  }
  return { n, self, total, key };
}

describe('aggregate', () => {
  it('self and total agree with the materialising definition, under every filter', () => {
    fc.assert(
      fc.property(
        profileArb,
        fc.constantFrom<AggregateBy>('function', 'file', 'line'),
        fc.constantFrom<'self' | 'total'>('self', 'total'),
        fc.option(fc.constantFrom('0', '1', '2'), { nil: undefined }),
        fc.option(fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })), { nil: undefined }),
        fc.option(fc.constantFrom(...Object.keys(STATUS_FILTERS)), { nil: undefined }),
        (model, by, sort, thread, window, status) => {
          const fromMs = window?.[0];
          const toMs = window === undefined ? undefined : window[0] + window[1];
          const result = aggregate(model, { by, sort, thread, fromMs, toMs, status, limit: 0 });
          const keep = (s: MemoryProfile['sampleList'][number]) =>
            (thread === undefined || s.threadId.toString() === thread) &&
            (fromMs === undefined || s.timestampUs >= 1_000_000n + BigInt(fromMs * 1000)) &&
            (toMs === undefined || s.timestampUs < 1_000_000n + BigInt(toMs * 1000)) &&
            (status === undefined || STATUS_FILTERS[status]!(s.status));
          const ref = reference(model, by, keep);
          expect(result.samples).toBe(ref.n);
          expect(result.scanned).toBe(model.sampleCount);
          expect(result.rows.length).toBe(ref.total.size);
          for (const row of result.rows) {
            const k = by === 'file' ? row.filename : by === 'line' ? `${row.filename}|${row.funcname}|${row.lineno}` : `${row.filename}|${row.funcname}`;
            expect(row.self).toBe(ref.self.get(k) ?? 0);
            expect(row.total).toBe(ref.total.get(k));
            expect(row.total).toBeGreaterThanOrEqual(row.self);
          }
          const primary = result.rows.map((r) => (sort === 'self' ? r.self : r.total));
          for (let i = 1; i < primary.length; i++) expect(primary[i]!).toBeLessThanOrEqual(primary[i - 1]!);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('limits rows, and the table shows them', () => {
    const model = new MemoryProfile();
    const f = (n: string) => model.internFrame({ filename: 'x.js', funcname: n, lineno: 1, endLineno: null, column: null, endColumn: null, opcode: null });
    const [a, b, c] = [f('a'), f('b'), f('c')];
    for (let i = 0; i < 5; i++) model.writeStack(1n, 0, 0n, NodeStatus.OnCpu, [a, b]);
    for (let i = 0; i < 3; i++) model.writeStack(1n, 0, 0n, 0, [c, b]);
    const top = aggregate(model, { limit: 2 });
    expect(top.rows.map((r) => [r.funcname, r.self, r.total])).toEqual([
      ['a', 5, 5],
      ['c', 3, 3],
    ]);
    expect(aggregate(model, { sort: 'total', limit: 1 }).rows[0]).toMatchObject({ funcname: 'b', self: 0, total: 8, totalPct: 100 });
    expect(aggregate(model, { status: 'idle' }).samples).toBe(3);
    const table = formatTable(top).split('\n');
    expect(table[0]).toMatch(/self\s+self%\s+total\s+total%\s+function/);
    expect(table[1]).toMatch(/^\s*5\s+62\.5%\s+5\s+62\.5%\s+a\s+x\.js$/);
    expect(table.at(-1)).toBe('8 samples');
  });

  it('refuses an unknown status filter or key with ERR_INVALID_ARGUMENT', () => {
    const model = new MemoryProfile();
    expect(() => aggregate(model, { status: 'sleepy' })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    expect(() => aggregate(model, { by: 'module' as AggregateBy })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });

  it('on the real CPython profiles r01/r02: self counts add up to the samples with a stack', () => {
    for (const name of acceptedVectors().filter((n) => n.startsWith('r0'))) {
      const model = modelFromExpected(readExpected(name));
      const result = aggregate(model, { sort: 'total', limit: 0 });
      const withStack = model.sampleList.filter((s) => s.stack.length > 0).length;
      expect(result.rows[0]!.total).toBeLessThanOrEqual(withStack);
      expect(result.rows.reduce((sum, r) => sum + r.self, 0)).toBe(withStack);
    }
  });
});
