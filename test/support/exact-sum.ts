/**
 * The oracle for sums of fractional values: the exact sum of the doubles themselves, in integers (BigInt), rounded
 * as Math.round rounds (a half up). 34.8 + 22.7 totals 57 here (the doubles sum to 57.4999999999999964…), where a
 * float sum says 57.5 and Math.round 58. And values that make float sums land on or near a half.
 */
import fc from 'fast-check';

/** x, a finite double, as an exact multiple of 2^-1074 (the smallest subnormal). */
export function exactUnits(x: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const exponent = Number(bits >> 52n);
  const mantissa = bits & ((1n << 52n) - 1n);
  const units = exponent === 0 ? mantissa : (mantissa | (1n << 52n)) << BigInt(exponent - 1);
  return x < 0 ? -units : units;
}

/** The exact sum of `values` rounded as Math.round does (a half up), computed in integers: no float sum's error. */
export function roundedExactSum(values: readonly number[]): number {
  const sum = values.reduce((s, v) => s + exactUnits(v), 0n);
  const half = 1n << 1073n;
  const one = 1n << 1074n;
  // floor((sum + half) / one), with BigInt division truncating toward 0.
  const shifted = sum + half;
  const quotient = shifted / one;
  return Number(shifted < 0n && quotient * one !== shifted ? quotient - 1n : quotient);
}

/**
 * The exact sum of `values` rounded once to the nearest double, ties to even (for sums of normal size: one below
 * 2^-1022 would be rounded twice). Number(bigint) rounds that way; the 2^-1074 units are cut to 64 bits first, with a
 * sticky bit for any cut below, so the cut never moves the rounding.
 */
export function nearestExactSum(values: readonly number[]): number {
  const sum = values.reduce((s, v) => s + exactUnits(v), 0n);
  const magnitude = sum < 0n ? -sum : sum;
  const shift = Math.max(0, magnitude.toString(2).length - 64);
  let top = magnitude >> BigInt(shift);
  if (top << BigInt(shift) !== magnitude) top |= 1n;
  // A power of two times a double of 53 bits is exact when the product is normal.
  const nearest = Number(top) * 2 ** (shift - 1074);
  return sum < 0n ? -nearest : nearest;
}

/** A value in [0, max]: any double, or tenths and halves, whose float sums land near a half and round either way. */
export function nearHalves(max: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.double({ min: 0, max, noNaN: true }),
    fc.integer({ min: 0, max: 2 * max }).map((k) => k / 2),
    fc.integer({ min: 0, max: Math.min(10 * max, 1000) }).map((k) => k / 10),
  );
}

/**
 * A value in [0, max] that is a whole number of tenths (three times in four) or halves: a float sum of a few tenths
 * rounds to the other integer than their exact sum about once in 30 (34.8 + 22.7), a property meets it in a few runs.
 */
export function tenthsOrHalves(max: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 10 * max }).map((k) => k / 10) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 * max }).map((k) => k / 2) },
  );
}

/**
 * A value in [0, max] within the span ExactSums is exact for (lib/profile/exact-sum.ts: no subnormal beside a
 * million): any double from 1 to max, tenths and halves, or 0.
 */
export function spannedValues(max: number): fc.Arbitrary<number> {
  return fc.oneof(fc.double({ min: 1, max, noNaN: true }), tenthsOrHalves(Math.min(max, 1e6)), fc.constant(0));
}
