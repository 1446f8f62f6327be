/**
 * The oracle suite's parser of printed numbers (printed.ts) against the formatter the CLI and the pages share
 * (lib/profile/units.ts formatValue): any value, in any unit and magnitude, prints with its significant digits,
 * so it parses back within half a unit of its third digit (230.15 ms is never `23ms`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatValue } from '../../lib/profile/units';
import { printedValue } from './printed';

/** Nanoseconds per unit of the time units profiles use; bytes stay bytes. */
const UNITS: Record<string, number> = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9, bytes: 1 };

describe('printed values parse back', () => {
  it('a known case: 230.15 ms, 529.6, 310.2 KB', () => {
    expect(printedValue(formatValue(230.15e6, 'nanoseconds'))).toBeCloseTo(230.15e6, -6);
    expect(printedValue(formatValue(529.6, 'count'))).toBeCloseTo(529.6, 0);
    expect(printedValue(formatValue(310.2 * 1024, 'bytes'))).toBeCloseTo(310.2 * 1024, -3);
  });

  it('any value, unit and magnitude: within 0.5 % (three significant digits)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(UNITS), 'count'),
        fc.double({ min: 1e-3, max: 1e15, noNaN: true }),
        fc.boolean(),
        fc.boolean(),
        (unit, magnitude, whole, negative) => {
          const value = (negative ? -1 : 1) * (whole ? Math.round(magnitude) : magnitude);
          const inBase = value * (UNITS[unit] ?? 1);
          const back = printedValue(formatValue(value, unit));
          // Below a nanosecond (or a byte) a printed value may round to the smallest unit's two decimals.
          expect(Math.abs(back - inBase)).toBeLessThanOrEqual(Math.max(Math.abs(inBase) * 0.005, 0.005));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
