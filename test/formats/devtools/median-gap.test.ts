/** medianGap: the interval a .cpuprofile without one is read with, against a whole sort of the same deltas. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { medianGap } from '../../../lib/formats/devtools/cpuprofile';

/** The oracle: the positive deltas after the first, sorted by a comparator, the upper middle one. */
function sortedMedian(deltas: number[]): number {
  const positive = deltas.slice(1).filter((d) => d > 0);
  positive.sort((a, b) => a - b);
  return positive.length > 0 ? positive[positive.length >> 1]! : 0;
}

describe('medianGap', () => {
  it('is the sorted middle of the positive deltas after the first (property)', () => {
    const delta = fc.oneof(
      fc.integer({ min: -5, max: 2000 }),
      fc.double({ min: -10, max: 1e6, noNaN: true }),
      fc.constantFrom(0, 1000, 1001, 999),
    );
    fc.assert(
      fc.property(fc.array(delta, { maxLength: 3000 }), (deltas) => {
        expect(medianGap(deltas)).toBe(sortedMedian(deltas));
      }),
      { numRuns: 400 },
    );
  });

  it('takes the shapes that make a naive quickselect quadratic or wrong', () => {
    const n = 200_001;
    const shapes: Record<string, (i: number) => number> = {
      ascending: (i) => i + 1,
      descending: (i) => n - i,
      equal: () => 1000,
      'two values': (i) => (i % 2 === 0 ? 1000 : 1001),
      'organ pipe': (i) => (i < n / 2 ? i + 1 : n - i),
      sawtooth: (i) => (i % 1000) + 1,
      'median of three killer': (i) => (i % 2 === 0 ? i + 1 : n + (i % 7)),
    };
    for (const [name, shape] of Object.entries(shapes)) {
      const deltas = Array.from({ length: n }, (_, i) => shape(i));
      expect(medianGap(deltas), name).toBe(sortedMedian(deltas));
    }
  });

  it('is 0 without a positive delta after the first', () => {
    expect(medianGap([])).toBe(0);
    expect(medianGap([1000])).toBe(0);
    expect(medianGap([1000, 0, -3])).toBe(0);
  });
});
