// The Tachyon adapter's write(): version 1 byte-identical to ProfileWriter's
// for the same ticks, weighted sources refused with a code naming version 2,
// and version 2 keeping the whole model (types, values, labels, times,
// thread names) exactly, for random profiles and a pprof-like heap profile.
import fc from 'fast-check';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { ErrorCode } from '../../../lib/errors';
import { MAX_VERSION1_TICKS, tachyonAdapter } from '../../../lib/formats/tachyon/index';
import {
  ProfileBuilder,
  makeFrame,
  type Frame,
  type Label,
  type ProfileMeta,
  type ProfileSource,
  type SampleType,
} from '../../../lib/profile/index';
import { ProfileWriter } from '../../../lib/tachyon/index';
import { thrown } from '../../support/refusals';
import { sharedPath } from '../../support/environment';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-tachyon-write-');
let fileNo = 0;
const target = () => {
  const p = path.join(dir, `out${fileNo++}.bin`);
  return { path: p, write: () => {} };
};

const tickMeta = (
  types: SampleType[] = [
    { type: 'samples', unit: 'count' },
    { type: 'wall', unit: 'nanoseconds' },
  ],
): ProfileMeta => ({
  sampleTypes: types,
  defaultSampleType: 0,
  startTimeUs: 5_000_000n,
  sampleIntervalUs: 1000n,
});

/**
 * A frame as a Tachyon frame table keeps it: no line means no position at
 * all, and an absent end is stored as a span of 0 (end = start), as CPython stores it.
 */
function asTachyonKeeps(f: Frame): Frame {
  if (f.lineno === null) return { ...f, endLineno: null, column: null, endColumn: null };
  return { ...f, endLineno: f.endLineno ?? f.lineno, endColumn: f.column === null ? null : (f.endColumn ?? f.column) };
}

/** What a reader gives back, record by record, in a comparable shape. */
function recordsOf(source: ProfileSource) {
  const out: unknown[] = [];
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const t = source.threads[b.thread[i]!]!;
      out.push({
        thread: [t.threadId, t.interpreterId, t.name ?? null],
        frames: source.stacks.toArray(b.stack[i]!).map((f) => asTachyonKeeps(source.frames[f]!)),
        status: b.status[i]!,
        time: b.time[i]!,
        values: b.values.map((v) => v[i]!),
        labels: source.labelSets[b.labels[i]!]!,
      });
    }
  }
  source.close?.();
  return out;
}

describe(`Tachyon adapter write (${backend.name} backend)`, () => {
  it('version 1: the bytes ProfileWriter writes for the same ticks (a count of k is k ticks an interval apart)', () => {
    const frames: Frame[] = [
      makeFrame('main', 'app.py', 1, 4),
      makeFrame('work', 'app.py', 10, 8),
      makeFrame('leaf', 'lib.py', 99, 2),
    ];
    const b = new ProfileBuilder(tickMeta());
    const ids = frames.map((f) => b.internFrame(f));
    const s1 = b.stacks.internOutermostFirst([ids[0]!, ids[1]!]);
    const s2 = b.stacks.internOutermostFirst([ids[0]!, ids[1]!, ids[2]!]);
    const t1 = b.internThread(7n);
    const t2 = b.internThread(9n, 1);
    const rows: [number, number, number, number, number][] = [
      [s1, t1, 5_001_000, 2, 1],
      [s2, t2, 5_001_000, 0, 3],
      [s2, t1, 5_002_000, 2, 2],
      [s1, t2, 5_004_000, 32, 1],
    ];
    for (const [stack, thread, time, status, count] of rows) b.add(stack, thread, time, status, [count, count * 1e6]);
    const out = target();
    tachyonAdapter.write!(b, out, { compression: 'none' });

    const ref = path.join(dir, 'reference.bin');
    const w = new ProfileWriter(ref, {
      sampleIntervalUs: 1000n,
      startTimeUs: 5_000_000n,
      compression: 'none',
      mode: 'wall',
    });
    const writerIds = new Map<number, number>();
    for (const [stack, thread, time, status, count] of rows) {
      const stackFrames = b.stacks.toArray(stack).map((f) => {
        if (!writerIds.has(f)) writerIds.set(f, w.internFrame({ ...frames[f]! }));
        return writerIds.get(f)!;
      });
      const t = b.threads[thread]!;
      for (let k = 0; k < count; k++) w.writeStack(t.threadId, t.interpreterId, time + k * 1000, status, stackFrames);
    }
    w.finalize();
    expect(Buffer.compare(readFileSync(out.path), readFileSync(ref))).toBe(0);
  });

  it('version 1: a CPython-written file read and written again keeps every thread’s ticks', () => {
    const file = sharedPath('vectors', 'tachyon', 's06_repeat_runs_none.bin');
    const out = target();
    tachyonAdapter.write!(tachyonAdapter.read({ path: file }, {}), out, {});
    const ticks = (source: ProfileSource) => {
      const per = new Map<string, string[]>();
      for (const r of recordsOf(source) as { thread: unknown[]; frames: Frame[]; status: number; values: number[] }[]) {
        const key = String(r.thread[0]);
        if (!per.has(key)) per.set(key, []);
        for (let k = 0; k < r.values[0]!; k++) per.get(key)!.push(JSON.stringify([r.status, r.frames]));
      }
      return per;
    };
    expect(ticks(tachyonAdapter.read({ path: out.path }, {}))).toEqual(ticks(tachyonAdapter.read({ path: file }, {})));
  });

  it('version 1 refuses what it cannot hold as ticks, naming version 2, and leaves no file', () => {
    const heap = new ProfileBuilder({ ...tickMeta([{ type: 'inuse_space', unit: 'bytes' }]) });
    heap.add(heap.stacks.push(0, heap.internFrame(makeFrame('alloc', 'a.go'))), heap.internThread(1n), NaN, 0, [
      1 << 20,
    ]);
    const cases: [ProfileSource, RegExp][] = [[heap, /no samples\/count column/]];
    for (const [count, message] of [
      [2.5, /counts 2.5 samples, not a whole number of ticks/],
      [-1, /counts -1 samples/],
      [MAX_VERSION1_TICKS + 1, /more than 50000000 ticks/],
    ] as const) {
      const b = new ProfileBuilder(tickMeta());
      b.add(b.stacks.push(0, b.internFrame(makeFrame('f', 'x.py'))), b.internThread(1n), 0, 0, [count, 0]);
      cases.push([b, message]);
    }
    for (const [source, message] of cases) {
      const out = target();
      const err = thrown(() => tachyonAdapter.write!(source, out, {}));
      expect(err.code).toBe(ErrorCode.TACHYON_V1_WEIGHTED);
      expect(err.message).toMatch(message);
      expect(err.message).toContain('version 2');
      expect(existsSync(out.path)).toBe(false);
    }
  });

  it('says what it could not keep: labels, thread names and frames beyond 256 in version 1; beyond 4,096 in 2', () => {
    for (const version of [1, 2] as const) {
      const b = new ProfileBuilder(tickMeta());
      // 300 frames: past version 1's cap and within version 2's; 4,100 frames: past both.
      const deep = Array.from({ length: 4100 }, (_, i) => b.internFrame(makeFrame(`f${i}`, 'deep.py', i + 1)));
      const labels = b.internLabels([{ key: 'k', str: 'v' }]);
      b.add(
        b.stacks.internOutermostFirst(deep.slice(0, 300)),
        b.internThread(1n, 0, 'main'),
        5_001_000,
        0,
        [2, 2e6],
        labels,
      );
      if (version === 2) b.add(b.stacks.internOutermostFirst(deep), 0, 5_002_000, 0, [1, 1e6], 0);
      const warnings: string[] = [];
      const out = target();
      tachyonAdapter.write!(b, out, { version, onWarning: (w) => warnings.push(w) });
      if (version === 1) {
        expect(warnings).toContain(
          `1 stacks are deeper than Tachyon's 256 frames: their outermost frames were dropped`,
        );
        expect(warnings).toContain('Tachyon version 1 has no thread names: 1 dropped (version 2 keeps them)');
        expect(warnings).toContain(
          'Tachyon version 1 has no labels: "k" of 1 records were dropped (version 2 keeps them)',
        );
        expect(warnings).toContain(
          'Tachyon version 1 keeps ticks only: wall/nanoseconds not written (version 2 keeps them)',
        );
      } else {
        expect(warnings).toEqual([
          `1 stacks are deeper than Tachyon version 2's 4096 frames: their outermost frames were dropped`,
        ]);
      }
      const back = recordsOf(tachyonAdapter.read({ path: out.path }, {})) as { frames: Frame[] }[];
      // Version 1 keeps the innermost 256 frames, as CPython's writer does; version 2 the whole 300.
      const kept = version === 1 ? 256 : 300;
      expect(back[0]!.frames.map((f) => f.funcname)).toEqual(Array.from({ length: kept }, (_, i) => `f${299 - i}`));
      if (version === 2)
        expect(back[1]!.frames.map((f) => f.funcname)).toEqual(Array.from({ length: 4096 }, (_, i) => `f${4099 - i}`));
    }
  });

  it('version 2 keeps a pprof-like heap profile: four types in bytes and counts, period, labels, no times, values of 10^12', () => {
    const meta: ProfileMeta = {
      sampleTypes: [
        { type: 'alloc_objects', unit: 'count' },
        { type: 'alloc_space', unit: 'bytes' },
        { type: 'inuse_objects', unit: 'count' },
        { type: 'inuse_space', unit: 'bytes' },
      ],
      defaultSampleType: 3,
      periodType: { type: 'space', unit: 'bytes' },
      period: 524288,
      startTimeUs: 1_700_000_000_000_000n,
      sampleIntervalUs: 0n,
      durationUs: 30_000_000n,
      comments: ['go1.19 heap'],
    };
    const b = new ProfileBuilder(meta);
    const main = b.internFrame(makeFrame('main.main', '/src/main.go', 12));
    const alloc = b.internFrame(makeFrame('main.alloc', '/src/main.go', 40));
    const stack = b.stacks.internOutermostFirst([main, alloc]);
    const t = b.internThread(0n);
    const labels: Label[] = [
      { key: 'span_id', str: '7f3a' },
      { key: 'bytes', num: 4096, unit: 'bytes' },
      { key: 'ratio', num: 0.25 },
    ];
    b.add(stack, t, NaN, 0, [3, 1e12, 1, 524288], b.internLabels(labels));
    b.add(b.stacks.internOutermostFirst([main]), t, NaN, 0, [1, 512, 0, 0]);
    const out = target();
    tachyonAdapter.write!(b, out, { version: 2 });
    const back = tachyonAdapter.read({ path: out.path }, {});
    expect(back.meta).toMatchObject({
      sampleTypes: meta.sampleTypes,
      defaultSampleType: 3,
      periodType: meta.periodType,
      period: 524288,
      durationUs: 30_000_000n,
      comments: ['go1.19 heap'],
      startTimeUs: meta.startTimeUs,
    });
    expect(recordsOf(back)).toEqual(recordsOf(b));
    expect(thrown(() => tachyonAdapter.write!(b, target(), {})).code).toBe(ErrorCode.TACHYON_V1_WEIGHTED);
  });

  it('version 2 round-trips random profiles exactly (types, values, labels, threads, times)', () => {
    const typeArb = fc.record({
      type: fc.constantFrom('samples', 'cpu', 'wall', 'alloc_space', 'contentions', 'delay'),
      unit: fc.constantFrom('count', 'nanoseconds', 'bytes', 'µs'),
    });
    const valueArb = fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.maxSafeInteger(),
      fc.maxSafeInteger().map((v) => (v === 0 ? 0 : -v)),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (Object.is(v, -0) ? 0 : v)),
    );
    const labelArb = fc
      .record(
        {
          key: fc.string({ maxLength: 6 }),
          str: fc.string({ maxLength: 8 }),
          num: fc.oneof(
            fc.integer(),
            fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (Object.is(v, -0) ? 0 : v)),
          ),
          unit: fc.constantFrom('bytes', 'ms'),
        },
        { requiredKeys: ['key'] },
      )
      .map((l): Label =>
        l.str !== undefined
          ? { key: l.key, str: l.str }
          : l.num !== undefined
            ? { key: l.key, num: l.num, ...(l.unit ? { unit: l.unit } : {}) }
            : { key: l.key },
      );
    const frameArb = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      file: fc.constantFrom('x.py', 'y.go'),
      line: fc.option(fc.nat(5000), { nil: null }),
      span: fc.nat(3),
      column: fc.option(fc.nat(80), { nil: null }),
      opcode: fc.option(fc.nat(254), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(typeArb, { minLength: 1, maxLength: 3 }),
        fc.array(
          fc.record({
            thread: fc.nat(3),
            frames: fc.array(frameArb, { maxLength: 8 }),
            status: fc.nat(255),
            time: fc.option(fc.nat(2 ** 40), { nil: NaN }),
            values: fc.array(valueArb, { minLength: 3, maxLength: 3 }),
            labels: fc.array(labelArb, { maxLength: 3 }),
          }),
          { maxLength: 40 },
        ),
        fc.boolean(),
        (types, rows, zstd) => {
          const b = new ProfileBuilder({
            sampleTypes: types,
            defaultSampleType: types.length - 1,
            startTimeUs: 1000n,
            sampleIntervalUs: 100n,
          });
          const threads = [
            b.internThread(1n, 0, 'main'),
            b.internThread(2n),
            b.internThread(2n, 3, 'worker'),
            b.internThread(2n ** 63n + 5n),
          ];
          for (const r of rows) {
            const ids = r.frames.map((f) =>
              b.internFrame({
                filename: f.file,
                funcname: f.name,
                lineno: f.line,
                endLineno: f.line === null ? null : f.line + f.span,
                column: f.column,
                endColumn: f.column === null ? null : f.column + f.span,
                opcode: f.opcode,
              }),
            );
            b.add(
              b.stacks.intern(ids),
              threads[r.thread]!,
              r.time,
              r.status,
              r.values.slice(0, types.length),
              b.internLabels(r.labels),
            );
          }
          const out = target();
          tachyonAdapter.write!(b, out, { version: 2, compression: zstd ? 'zstd' : 'none' });
          const back = tachyonAdapter.read({ path: out.path }, {});
          expect(back.meta.sampleTypes).toEqual(types);
          expect(back.meta.defaultSampleType).toBe(types.length - 1);
          expect(recordsOf(back)).toEqual(recordsOf(b));
        },
      ),
      { numRuns: 60 },
    );
  });
});
