// ExactSums and roundExact (lib/profile/exact-sum.ts) against sums done in integers: the exact sum of the doubles
// rounded a half up, and the rest roundExact hands back exactly what the integer left out of hi + lo.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExactSums, roundExact } from '../../lib/profile/index';
import { exactUnits, nearestExactSum, roundedExactSum, spannedValues } from '../support/exact-sum';

const signed = (values: fc.Arbitrary<number>) => fc.tuple(values, fc.boolean()).map(([v, neg]) => (neg ? -v : v));
/** Values of either sign within the span ExactSums is exact for. */
const spanned = (max: number) => signed(spannedValues(max));

/** Mostly a few slots (sums of several values), now and then a far one (the columns grow). */
const slot = fc.oneof({ weight: 9, arbitrary: fc.nat({ max: 3 }) }, { weight: 1, arbitrary: fc.nat({ max: 3000 }) });

describe('exact sums rounded once', () => {
  it('each slot rounds as its exact sum does, to an integer and to a double, values of either sign, slots grown as used (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(slot, spanned(1e9)), {
          minLength: 1,
          maxLength: 80,
        }),
        (rows) => {
          const sums = new ExactSums(4);
          const bySlot = new Map<number, number[]>();
          for (const [slot, v] of rows) {
            sums.add(slot, v);
            bySlot.set(slot, [...(bySlot.get(slot) ?? []), v]);
          }
          // + 0: Math.round gives -0 for a sum in (-0.5, 0), the integers' oracle 0; both print 0.
          for (const [slot, values] of bySlot) {
            expect(sums.rounded(slot) + 0).toBe(roundedExactSum(values));
            expect(sums.nearest(slot) + 0).toBe(nearestExactSum(values));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("roundExact's rest is exactly hi + lo less the integer (property)", () => {
    fc.assert(
      fc.property(fc.array(spanned(1e7), { minLength: 1, maxLength: 20 }), (values) => {
        const sums = new ExactSums(1);
        for (const v of values) sums.add(0, v);
        const rest = new Float64Array(2);
        const whole = roundExact(sums.hi[0]!, sums.lo[0]!, rest);
        const exact = exactUnits(sums.hi[0]!) + exactUnits(sums.lo[0]!);
        expect(exactUnits(rest[0]!) + exactUnits(rest[1]!)).toBe(exact - BigInt(whole) * (1n << 1074n));
        expect(whole + 0).toBe(roundedExactSum(values));
      }),
      { numRuns: 300 },
    );
  });

  it('34.8 + 22.7 is 57 (57.4999999999999964… exactly); a true half goes up, as Math.round takes it', () => {
    const sums = new ExactSums();
    sums.add(0, 34.8);
    sums.add(0, 22.7);
    sums.add(1, 0.5);
    sums.add(1, 1);
    sums.add(2, -2.5);
    expect(34.8 + 22.7).toBe(57.5);
    expect([sums.rounded(0), sums.rounded(1), sums.rounded(2)]).toEqual([57, 2, -2]);
  });
});
