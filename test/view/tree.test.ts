/**
 * The flame page's data (lib/view/tree.ts) and the page's own re-aggregation
 * (lib/view/template/view-model.js, the file the page inlines) against
 * `aggregate()`: for the whole profile, for windows of whole buckets, per
 * thread and per status class — on the shared vectors, a real Node
 * recording and random profiles.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeFrame, NodeStatus, type ProfileSource } from '../../lib/profile/index';
import { openProfile } from '../../lib/formats/index';
import { TickProfile } from '../support/model';
import { openProfiles } from '../../lib/fleet/index';
import { aggregate } from '../../lib/query/aggregate';
import { flame } from '../../lib/view/flame';
import { buildViewData, statusClass, StatusClass, type ViewData, type ViewDataOptions } from '../../lib/view/tree';
import { acceptedVectors, vectorDir } from '../support/vectors';
import { sharedPath } from '../support/environment';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const view = require('../../lib/view/template/view-model.js') as {
  selectRange(
    data: ViewData,
    b0: number,
    b1: number,
    thread: string | null,
    mask?: number,
  ): { samples: number; self: Float64Array; total: Float64Array };
  functionRows(data: ViewData, sel: unknown): { name: string; file: string; self: number; total: number }[];
  flameTree(data: ViewData, sel: unknown): { name: string; value: number; self: number; children?: unknown[] };
  timeline(data: ViewData): Record<string, Float64Array>;
  bucketMs(data: ViewData, b: number): number;
};

type Row = { self: number; total: number };

/** `aggregate()`'s rows as "funcname\0filename" → counts (the page shows '(anonymous)' for ''). */
function expectedRows(
  source: ProfileSource,
  options: Parameters<typeof aggregate>[1],
): { samples: number; total: number; rows: Map<string, Row> } {
  const r = aggregate(source, { ...options, limit: 0 });
  return {
    samples: r.samples,
    total: r.total,
    rows: new Map(
      r.rows.map((x) => [
        `${x.funcname === '' ? '(anonymous)' : x.funcname}\u0000${x.filename}`,
        { self: x.self, total: x.total },
      ]),
    ),
  };
}

function pageRows(data: ViewData, sel: unknown): Map<string, Row> {
  return new Map(
    view.functionRows(data, sel).map((x) => [`${x.name}\u0000${x.file}`, { self: x.self, total: x.total }]),
  );
}

/** Every window check: whole range, each thread, a few bucket windows, each status class. */
function checkAgainstAggregate(source: ProfileSource, data: ViewData, windows: [number, number][]): void {
  const all = view.selectRange(data, 0, data.bucketCount, null);
  const whole = expectedRows(source, {});
  // The page sums values of the profile's default type; data.samples counts records.
  expect(all.samples).toBe(whole.total);
  expect(data.total).toBe(whole.total);
  expect(data.samples).toBe(whole.samples);
  expect(pageRows(data, all)).toEqual(whole.rows);
  for (const t of data.threads) {
    const sel = view.selectRange(data, 0, data.bucketCount, t.key);
    const want = expectedRows(source, { thread: t.key });
    expect(sel.samples).toBe(want.total);
    expect(t.samples).toBe(want.total);
    expect(pageRows(data, sel)).toEqual(want.rows);
  }
  for (const [b0, b1] of windows) {
    const sel = view.selectRange(data, b0, b1, null);
    const want = expectedRows(source, { fromMs: view.bucketMs(data, b0), toMs: view.bucketMs(data, b1) });
    expect(sel.samples).toBe(want.total);
    expect(pageRows(data, sel)).toEqual(want.rows);
  }
  for (const cls of [StatusClass.OnCpu, StatusClass.Gc, StatusClass.Idle]) {
    const sel = view.selectRange(data, 0, data.bucketCount, null, 1 << cls);
    const want = expectedRows(source, { status: (s) => statusClass(s) === cls });
    expect(pageRows(data, sel)).toEqual(want.rows);
  }
  // The flame tree's root holds every selected sample; a node's total is its self plus its children's.
  const tree = view.flameTree(data, all);
  expect(tree.value).toBe(whole.total);
  const check = (n: { value: number; self: number; children?: unknown[] }): void => {
    const kids = (n.children ?? []) as (typeof n)[];
    expect(n.value).toBe(n.self + kids.reduce((s, k) => s + k.value, 0));
    kids.forEach(check);
  };
  check(tree);
}

function windowsOf(data: ViewData): [number, number][] {
  const n = data.bucketCount;
  return [
    [0, Math.floor(n / 2)],
    [Math.floor(n / 3), Math.ceil((2 * n) / 3)],
    [n - 1, n],
    [1, 1],
  ];
}

describe('flame page data', () => {
  it('agrees with aggregate() on every accepted shared Tachyon vector (whole, per thread, windows, status)', () => {
    const names = acceptedVectors();
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) {
      const src = openProfile(`${vectorDir}/${name}.bin`, { format: 'tachyon' });
      try {
        const data = buildViewData(src);
        checkAgainstAggregate(src, data, windowsOf(data));
      } finally {
        src.close();
      }
    }
  });

  it('many files, or their directory, are one profile: the page holds aggregate() over openProfiles()', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'profpack-flame-many-'));
    try {
      const files = ['s02_threads_interleaved_none.bin', 's20_random_mix_zstd.bin'].map((name) => {
        copyFileSync(path.join(vectorDir, name), path.join(dir, name));
        return path.join(dir, name);
      });
      const pageData = (html: string): unknown =>
        JSON.parse(/<script id="profpack-data" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!);
      const fromFiles = flame(files, path.join(dir, 'files.html'));
      const fromDir = flame(dir, path.join(dir, 'dir.html'));
      const fleet = openProfiles(files);
      const data = buildViewData(fleet);
      const whole = aggregate(fleet, { limit: 0 });
      // 668 + 4,792 samples; the files' threads stay apart (4 + 6).
      expect(whole.samples).toBe(668 + 4792);
      for (const summary of [fromFiles, fromDir]) {
        expect(summary.samples).toBe(whole.samples);
        expect(summary.threads).toBe(4 + 6);
        expect(pageData(readFileSync(summary.output, 'utf8'))).toEqual({
          kind: 'flame',
          ...JSON.parse(JSON.stringify(data)),
        });
      }
      checkAgainstAggregate(fleet, data, windowsOf(data));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('agrees with aggregate() on a real Node recording (.cpuprofile) and on a Go pprof file', () => {
    for (const file of ['node-cpu-prof.heavy.cpuprofile', 'go-runtime-pprof.cpu.pb.gz']) {
      const src = openProfile(sharedPath('data', 'outside', file));
      const data = buildViewData(src, { minBucketUs: 100 });
      expect(data.bucketCount).toBeGreaterThan(0);
      checkAgainstAggregate(src, data, windowsOf(data));
    }
  });

  const profileArb = fc
    .record({
      frames: fc.array(
        fc.record({
          f: fc.constantFrom('a.js', 'b.js', ''),
          n: fc.constantFrom('main', 'parse', 'walk', ''),
          line: fc.option(fc.integer({ min: 1, max: 9 }), { nil: null }),
        }),
        { minLength: 1, maxLength: 10 },
      ),
      samples: fc.array(
        fc.record({
          thread: fc.integer({ min: 0, max: 2 }),
          time: fc.integer({ min: -3000, max: 200_000 }),
          status: fc.integer({ min: 0, max: 127 }),
          stack: fc.array(fc.nat(), { maxLength: 10 }),
        }),
        { maxLength: 120 },
      ),
    })
    .map(({ frames, samples }) => {
      const model = new TickProfile({ startTimeUs: 5_000_000n, sampleIntervalUs: 1000n });
      const ids = frames.map((fr) => model.internFrame(makeFrame(fr.n, fr.f, fr.line)));
      for (const s of samples)
        model.writeStack(
          BigInt(s.thread),
          0,
          5_000_000n + BigInt(s.time),
          s.status,
          s.stack.map((i) => ids[i % ids.length]!),
        );
      return model;
    });

  it('agrees with aggregate() on random profiles, for any window of whole buckets and any bucket budget', () => {
    fc.assert(
      fc.property(
        profileArb,
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 200 }),
        fc.nat(),
        fc.nat(),
        (model, maxBuckets, maxEntries, x, y) => {
          const options: ViewDataOptions = { maxBuckets, maxEntries };
          const data = buildViewData(model, options);
          expect(data.bucketCount).toBeLessThanOrEqual(maxBuckets);
          // The entry budget is kept unless one bucket alone exceeds it.
          if (data.bucketCount > 1) expect(data.entryKey.length).toBeLessThanOrEqual(maxEntries);
          const n = data.bucketCount;
          const b0 = n === 0 ? 0 : x % n;
          const b1 = n === 0 ? 0 : b0 + (y % (n - b0 + 1));
          checkAgainstAggregate(model, data, [[b0, b1]]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('classes V8 GC samples as GC, ON_CPU as on-CPU, the rest as idle; the timeline adds up per thread', () => {
    expect(statusClass(NodeStatus.OnCpu | NodeStatus.InGc)).toBe(StatusClass.Gc);
    expect(statusClass(NodeStatus.OnCpu | NodeStatus.HasGil)).toBe(StatusClass.OnCpu);
    expect(statusClass(NodeStatus.HasGil)).toBe(StatusClass.Idle);
    const model = new TickProfile({ startTimeUs: 0n, sampleIntervalUs: 1000n });
    const f = model.internFrame(makeFrame('f', 'x.js', 1));
    const statuses = [NodeStatus.OnCpu, NodeStatus.OnCpu | NodeStatus.InGc, 0, NodeStatus.OnCpu];
    statuses.forEach((st, i) => model.writeStack(7n, 0, BigInt(i * 1000), st, [f]));
    model.writeStack(8n, 0, 500n, 0, [f]);
    const data = buildViewData(model, { minBucketUs: 1000 });
    const lanes = view.timeline(data);
    const sum = (lane: Float64Array, cls: number) => lane.reduce((s, v, i) => (i % 3 === cls ? s + v : s), 0);
    expect([sum(lanes['7']!, 0), sum(lanes['7']!, 1), sum(lanes['7']!, 2)]).toEqual([2, 1, 1]);
    expect([sum(lanes['8']!, 0), sum(lanes['8']!, 1), sum(lanes['8']!, 2)]).toEqual([0, 0, 1]);
    expect(data.threads).toEqual([
      { key: '7', samples: 4 },
      { key: '8', samples: 1 },
    ]);
  });

  it('keeps one record per distinct path, not per sample: 200,000 samples of a few stacks stay small', () => {
    const model = new TickProfile({ startTimeUs: 0n, sampleIntervalUs: 100n });
    const frames = ['main', 'a', 'b', 'c'].map((n) => model.internFrame(makeFrame(n, 'w.js', 1)));
    for (let i = 0; i < 200_000; i++)
      model.writeStack(
        1n,
        0,
        BigInt(i * 100),
        NodeStatus.OnCpu,
        i % 3 === 0 ? [frames[1]!, frames[0]!] : [frames[3]!, frames[2]!, frames[0]!],
      );
    const data = buildViewData(model);
    expect(data.parent.length).toBe(6); // root, thread, main, a, b, c
    expect(data.bucketCount).toBeLessThanOrEqual(400);
    expect(data.entryKey.length).toBeLessThanOrEqual(2 * data.bucketCount);
    expect(JSON.stringify(data).length).toBeLessThan(40_000);
  });

  it('names a sample frame the source does not have with a ProfpackError', () => {
    // A stack naming frame 3 of a source with no frames.
    const model = new TickProfile();
    model.writeStack(1n, 0, 0n, 0, [3]);
    const broken: ProfileSource = {
      meta: model.meta,
      frames: [],
      stacks: model.stacks,
      threads: model.threads,
      labelSets: model.labelSets,
      batches: () => model.batches(),
    };
    expect(() => buildViewData(broken)).toThrow(
      expect.objectContaining({ name: 'ProfpackError', code: 'ERR_CONVERT_BAD_INPUT' }),
    );
  });
});
