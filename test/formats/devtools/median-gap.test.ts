/** medianGap: the interval a .cpuprofile without one is read with, against a whole sort of the same deltas. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GapCounts, medianGap, radixSelect } from '../../../lib/formats/devtools/median-gap';

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

/** GapCounts of the deltas as a streamed read adds them (every one after the first), and its median. */
function countedMedian(deltas: number[]): number {
  const counts = new GapCounts();
  for (let i = 1; i < deltas.length; i++) counts.add(deltas[i]!);
  return counts.median((visit) => deltas.forEach(visit));
}

describe('GapCounts', () => {
  it('gives medianGap without the list: whole gaps, fractions, large and negative ones (property)', () => {
    const delta = fc.oneof(
      fc.integer({ min: -5, max: 70_000 }),
      fc.double({ min: -10, max: 1e9, noNaN: true }),
      fc.constantFrom(0, 1000, 1001, 999, 65535, 65536, 0.5),
    );
    fc.assert(
      fc.property(fc.array(delta, { maxLength: 3000 }), (deltas) => {
        expect(countedMedian(deltas)).toBe(sortedMedian(deltas));
      }),
      { numRuns: 400 },
    );
  });

  it('past the distinct values it counts, selects by passes over the deltas (radixSelect)', () => {
    // More distinct non-whole gaps than MAX_COUNTED_GAPS, each shape in a shuffled order.
    const n = 80_001;
    const shapes: Record<string, (i: number) => number> = {
      fractions: (i) => 1000 + ((i * 7919) % n) / 64,
      'tiny and huge': (i) => (i % 2 === 0 ? 1e-300 * (1 + (i % 977)) : 1e300 / (1 + ((i * 31) % n))),
      'one repeated beside many': (i) => (i % 3 === 0 ? 1234.5 : 0.001 * ((i * 7919) % n) + 1e-9),
    };
    for (const [name, shape] of Object.entries(shapes)) {
      const deltas = Array.from({ length: n }, (_, i) => shape(i));
      expect(countedMedian(deltas), name).toBe(sortedMedian(deltas));
    }
  });

  it('radixSelect is the k-th smallest of the positive numbers (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1, max: Number.MAX_VALUE, noNaN: true }), { minLength: 1, maxLength: 500 }),
        fc.nat(),
        (values, pick) => {
          const positive = values.filter((v) => v > 0).sort((a, b) => a - b);
          fc.pre(positive.length > 0);
          const k = pick % positive.length;
          expect(radixSelect((visit) => values.forEach(visit), k)).toBe(positive[k]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
