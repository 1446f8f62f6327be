import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitLine, leakSuspects, unsampledWeight } from '../../lib/memory/index';
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
