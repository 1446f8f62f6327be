import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitLine, formatLeakTable, leakSuspects, unsampledWeight } from '../../lib/memory/index';
import { handTrace, type HandPoll } from './hand-trace';

describe('leakSuspects', () => {
  it('ranks the steady grower first, with its slope and fit; a filled cache and churn hold with no trend', () => {
    const polls: HandPoll[] = [];
    let ordinal = 0;
    let churn = 0;
    for (let k = 0; k < 20; k++) {
      const alloc: [number, number, string][] = [
        [++ordinal, 1000, 'leak'],
        [++ordinal, 5000, 'churn'],
      ];
      if (k === 0) alloc.push([++ordinal, 200_000, 'cache']);
      polls.push({ timeUs: 1_000_000 * (k + 1), alloc, free: churn > 0 ? [churn] : [] });
      churn = ordinal - (k === 0 ? 1 : 0);
    }
    const { trace } = handTrace(4096, polls, 0);
    const report = leakSuspects(trace);
    expect(report.polls).toBe(20);
    const [first, ...rest] = report.suspects;
    const w = unsampledWeight(1000, 4096).bytes;
    expect(first).toMatchObject({
      funcname: 'leak',
      liveBytes: Math.round(20 * w),
      sampledLive: 20,
      freedBytes: 0,
      stack: ['main', 'leak'],
      filename: '/app.js', // V8's file:///app.js, as a path
    });
    // 1000 sampled bytes a second, scaled: 60 of them a minute.
    expect(first!.growthBytesPerMin).toBe(Math.round(60 * w));
    expect(first!.fit).toBe(1);
    const cache = rest.find((s) => s.funcname === 'cache')!;
    expect(cache.liveBytes).toBeGreaterThan(first!.liveBytes);
    expect(cache).toMatchObject({ fit: 0, score: 0, growthBytesPerMin: 0 });
    const churned = rest.find((s) => s.funcname === 'churn')!;
    expect(churned).toMatchObject({ fit: 0, score: 0, sampledLive: 1 });
  });

  /** 20 polls a second apart: `leak` keeps 1,000 bytes each, `churn` allocates 5,000 freed at the next poll. */
  function leakBeside(keep: (k: number) => boolean, leakFn = 'leak'): { polls: HandPoll[]; leaked: number[] } {
    const polls: HandPoll[] = [];
    const leaked: number[] = [];
    let ordinal = 0;
    let churn: number[] = [];
    for (let k = 0; k < 20; k++) {
      const alloc: [number, number, string][] = [];
      if (keep(k)) {
        alloc.push([++ordinal, 1000, leakFn]);
        leaked.push(ordinal);
      }
      alloc.push([++ordinal, 5000, 'churn']);
      polls.push({ timeUs: 1_000_000 * (k + 1), alloc, free: churn });
      churn = [ordinal];
    }
    return { polls, leaked };
  }

  it('a leak freed by the teardown: judged over its run, "grew …, freed at exit"; the churn is no suspect', () => {
    const { polls, leaked } = leakBeside(() => true);
    polls.push({ timeUs: 21_000_000, free: leaked }); // the last poll's GC, after the module scope died
    const { trace } = handTrace(4096, polls, 0);
    const report = leakSuspects(trace);
    const w = unsampledWeight(1000, 4096).bytes;
    const [first] = report.suspects;
    expect(first).toMatchObject({ funcname: 'leak', liveBytes: 0, freedBytes: Math.round(20 * w) });
    expect(first!.run).toMatchObject({
      peakBytes: Math.round(20 * w),
      peakMs: 20_000, // the last poll before the teardown (polls from 1 s, the recording from 0)
      growthBytesPerMin: Math.round(60 * w),
      fit: 1,
      keptShare: 1,
      gcSeen: true,
      counted: true,
      freedAtMs: 21_000,
      freedAtExit: true,
    });
    expect(first!.score).toBeGreaterThan(0);
    expect(report.freedBeforeEnd).toBe(1);
    expect(report.suspects.find((s) => s.funcname === 'churn')?.score ?? 0).toBe(0);
    const text = formatLeakTable(report, (v) => `${Math.round(v)}B`);
    expect(text).toContain(`leak  /app.js:11  — grew +${Math.round(60 * w)}B/min for 19.0 s, freed at exit`);
    expect(text).toContain('the end differs from the run: 1 site(s)');
    // Without the teardown, the same leak is judged at the end, as before.
    const held = leakSuspects(handTrace(4096, leakBeside(() => true).polls, 0).trace).suspects[0]!;
    expect(held).toMatchObject({ funcname: 'leak', liveBytes: Math.round(20 * w), fit: 1 });
    expect(held.run).toMatchObject({ counted: true, freedAtMs: null, freedAtExit: false });
  });

  it('a leak that runs to the exit, allocating in the last poll too, is still a run freed at exit', () => {
    // A 1-s harvest: between the last timed poll and the exit's poll the leak kept 3 more objects (15 % of what it
    // had at its peak), and the exit's collection freed them with the rest. Whatever the order of the poll's records.
    for (const freesFirst of [false, true]) {
      const { polls, leaked } = leakBeside(() => true);
      const last = [21, 22, 23];
      const exit = freesFirst
        ? [
            { timeUs: 21_000_000, free: leaked },
            { timeUs: 21_000_000, alloc: last.map((o): [number, number, string] => [1000 + o, 1000, 'leak']) },
            { timeUs: 21_000_000, free: last.map((o) => 1000 + o) },
          ]
        : [
            {
              timeUs: 21_000_000,
              alloc: last.map((o): [number, number, string] => [1000 + o, 1000, 'leak']),
              free: [...leaked, ...last.map((o) => 1000 + o)],
            },
          ];
      const report = leakSuspects(handTrace(4096, [...polls, ...exit], 0).trace);
      const w = unsampledWeight(1000, 4096).bytes;
      const [first] = report.suspects;
      expect(first).toMatchObject({ funcname: 'leak', liveBytes: 0, allocatedBytes: Math.round(23 * w) });
      expect(first!.run).toMatchObject({
        peakBytes: Math.round(20 * w),
        growthBytesPerMin: Math.round(60 * w),
        counted: true,
        allocatedAfterPeakBytes: 0,
        freedAtMs: 21_000,
        freedAtExit: true,
      });
    }
  });

  it('external garbage no full GC freed before the exit is no run, though young V8 objects were freed meanwhile', () => {
    // 'chunk' makes a Buffer a second and drops it; only a full GC clears its WeakRef, and the first is the exit's.
    // 'churn' is freed at every poll (scavenges). The same series of V8 objects would count; of externals it cannot.
    const run = (external: boolean) => {
      const { polls } = leakBeside(() => false);
      for (let k = 0; k < 20; k++)
        polls.push({ timeUs: 1_000_000 * (k + 1), alloc: [[5001 + k, 20_000, 'chunk']], external });
      polls.push({ timeUs: 21_000_000, alloc: [[5021, 20_000, 'chunk']], external });
      polls.push({ timeUs: 21_000_000, free: Array.from({ length: 21 }, (_, k) => 5001 + k), external });
      polls.sort((a, b) => a.timeUs - b.timeUs);
      return leakSuspects(handTrace(4096, polls, 0).trace).suspects.find((s) => s.funcname === 'chunk');
    };
    expect(run(false)!.run).toMatchObject({ gcSeen: true, counted: true, freedAtExit: true });
    expect(run(true)).toBeUndefined(); // nothing live at the end, and no run
    // With an external object freed by a full GC during the run, the same external series is a run again.
    const { polls } = leakBeside(() => false);
    polls.push({ timeUs: 500_000, alloc: [[9000, 20_000, 'early']], external: true });
    polls.push({ timeUs: 2_500_000, free: [9000], external: true });
    for (let k = 0; k < 20; k++)
      polls.push({ timeUs: 1_000_000 * (k + 2), alloc: [[5001 + k, 20_000, 'chunk']], external: true });
    polls.push({ timeUs: 22_000_000, free: Array.from({ length: 20 }, (_, k) => 5001 + k), external: true });
    polls.sort((a, b) => a.timeUs - b.timeUs);
    const chunk = leakSuspects(handTrace(4096, polls, 0).trace).suspects.find((s) => s.funcname === 'chunk');
    expect(chunk!.run).toMatchObject({ gcSeen: true, counted: true, freedAtExit: true });
  });

  it('a cache that filled in the first quarter and then held is labelled as stopped growing; the leak is not', () => {
    const { polls } = leakBeside(() => true);
    // 'cache' keeps 40 objects of 5,000 bytes over the first 4 polls (its fit keeps the rise), then allocates nothing.
    for (let k = 0; k < 4; k++) for (let i = 0; i < 10; i++) polls[k]!.alloc!.push([2000 + 10 * k + i, 5000, 'cache']);
    const report = leakSuspects(handTrace(4096, polls, 0).trace, { limit: 0 });
    const cache = report.suspects.find((s) => s.funcname === 'cache')!;
    const leak = report.suspects.find((s) => s.funcname === 'leak')!;
    expect(cache).toMatchObject({ stoppedGrowing: true, lastAllocMs: 4000 });
    expect(cache.fit).toBeGreaterThan(0.2); // a rise then flat: ranked by its bytes all the same
    expect(leak).toMatchObject({ stoppedGrowing: false, lastAllocMs: 20_000 });
    expect(formatLeakTable(report, String)).toContain('cache  /app.js:');
    expect(formatLeakTable(report, String)).toMatch(
      /cache {2}\/app\.js:\d+ {2}— no allocation since 4\.0 s of 20\.0 s/,
    );
    // Sparse samples are no plateau: a site sampled every 4 polls, last at poll 16 of 20, is still growing.
    const sparse = leakBeside((k) => k % 4 === 0).polls;
    const sparseLeak = leakSuspects(handTrace(4096, sparse, 0).trace).suspects.find((s) => s.funcname === 'leak')!;
    expect(sparseLeak).toMatchObject({ stoppedGrowing: false, lastAllocMs: 17_000 });
  });

  it('garbage that piles up with no GC before the last poll is never a suspect, and the report says why', () => {
    const polls: HandPoll[] = [];
    const all: number[] = [];
    for (let k = 0; k < 20; k++) {
      polls.push({ timeUs: 1_000_000 * (k + 1), alloc: [[k + 1, 5000, 'garbage']] });
      all.push(k + 1);
    }
    polls.push({ timeUs: 21_000_000, free: all });
    const report = leakSuspects(handTrace(4096, polls, 0).trace);
    expect(report).toMatchObject({ noGcSeen: true, freedBeforeEnd: 0, suspects: [] });
    expect(formatLeakTable(report, String)).toContain('no object was freed before the last poll');
  });

  it('garbage that piles up until a GC and goes on being allocated is no run, though it grew and a GC ran', () => {
    // 'garbage' keeps its objects until a GC at poll 12 frees them all, then is freed at every poll.
    const { polls } = leakBeside(() => true);
    let ordinal = 1000;
    const piled: number[] = [];
    for (let k = 0; k < 20; k++) {
      polls[k]!.alloc!.push([++ordinal, 8000, 'garbage']);
      if (k < 12) piled.push(ordinal);
      else polls[k + 1]?.free!.push(ordinal);
    }
    polls[12]!.free!.push(...piled);
    const report = leakSuspects(handTrace(4096, polls, 0).trace);
    const garbage = report.suspects.find((s) => s.funcname === 'garbage');
    expect(garbage?.run ?? { counted: false }).toMatchObject({ counted: false });
    expect(report.suspects[0]!.funcname).toBe('leak');
  });

  it("the site is the innermost frame in the program's files; a builtin below it is shown as the leaf", () => {
    const { polls } = leakBeside(() => true, 'render>~repeat');
    const report = leakSuspects(handTrace(4096, polls, 0).trace);
    expect(report.suspects[0]).toMatchObject({
      funcname: 'render',
      filename: '/app.js',
      leaf: 'repeat',
      stack: ['main', 'render', 'repeat'],
    });
    expect(formatLeakTable(report, String)).toMatch(/render {2}\/app\.js:\d+ {2}\(allocated in repeat\)/);
  });

  it('fitLine from running sums agrees with the direct least-squares formulas', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 1e4, noNaN: true }), fc.double({ min: 0, max: 1e9, noNaN: true })), {
          minLength: 3,
          maxLength: 50,
        }),
        (points) => {
          const n = points.length;
          const mt = points.reduce((s, p) => s + p[0], 0) / n;
          const my = points.reduce((s, p) => s + p[1], 0) / n;
          const vt = points.reduce((s, p) => s + (p[0] - mt) ** 2, 0);
          const vy = points.reduce((s, p) => s + (p[1] - my) ** 2, 0);
          const cov = points.reduce((s, p) => s + (p[0] - mt) * (p[1] - my), 0);
          fc.pre(vt > 1e-3 * n && vy > 1e-3 * n * my * my + 1);
          const sums = points.reduce(
            (s, [t, y]) => [s[0]! + t, s[1]! + t * t, s[2]! + y, s[3]! + y * y, s[4]! + t * y],
            [0, 0, 0, 0, 0],
          );
          const { slope, r2 } = fitLine(n, sums[0]!, sums[1]!, sums[2]!, sums[3]!, sums[4]!);
          expect(slope).toBeCloseTo(cov / vt, -Math.log10(Math.abs(cov / vt) + 1) + 3);
          expect(r2).toBeCloseTo((cov * cov) / (vt * vy), 3);
        },
      ),
    );
  });
});
