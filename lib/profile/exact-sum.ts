/**
 * Sums of fractional values (real times in ms or µs) kept as two doubles, hi + lo, and rounded to an integer
 * once. One double loses the low bits of each addition, and a sum near a half can then round the wrong way:
 * 34.8 + 22.7 is 57.5 in float64 but 57.4999999999999964… exactly, 57 and not 58. Each addition's error is
 * exact (TwoSum) and gathered in lo, so hi + lo is the sum as if added in twice the precision (Ogita, Rump and
 * Oishi's Sum2): off by at most about n² · 2^-106 of the values' magnitudes summed. The integer is then the exact
 * sum's whenever the values span less than about 2^100 / n² in magnitude (ns to hours span 2^42); a subnormal
 * beside a million, with signs mixed, can be lost ([1339284.5, -29.9, -5e-324, 62.9] rounds to 1339318).
 */
import { grown } from '../typed-arrays';

/** a + b - sum, exactly, where sum is a + b in float64 (Knuth's TwoSum): what the rounded sum left out. */
export function twoSumError(a: number, b: number, sum: number): number {
  const bPart = sum - a;
  return a - (sum - bPart) + (b - bPart);
}

/**
 * The integer Math.round gives for the exact value hi + lo (the nearest, a half up), where lo is what hi could
 * not hold. With `remainder`, the exact rest (hi + lo - the integer) goes into it as two doubles, [0] + [1].
 */
export function roundExact(hi: number, lo: number, remainder?: Float64Array): number {
  const exact = hi + lo;
  const exactLow = twoSumError(hi, lo, exact);
  let whole = Math.round(exact);
  let rest = exact - whole; // exact: within a half of an integer (Sterbenz)
  // Math.round takes a half up; one that is a half only for the lack of the low part's (negative) bits is not.
  if (rest === -0.5 && exactLow < 0) {
    whole--;
    rest = 0.5;
  }
  if (remainder !== undefined) {
    const r = rest + exactLow;
    remainder[0] = r;
    remainder[1] = twoSumError(rest, exactLow, r);
  }
  return whole;
}

/** Sums in numbered slots (0, 1, …, grown as used), each kept as hi[slot] + lo[slot]. */
export class ExactSums {
  private his: Float64Array;
  private los: Float64Array;

  constructor(capacity = 1024) {
    this.his = new Float64Array(capacity);
    this.los = new Float64Array(capacity);
  }

  /** Each slot's sum rounded to a double (the double-precision sum): read with `lo`, never alone, for totals. */
  get hi(): Float64Array {
    return this.his;
  }

  /** What each slot's hi could not hold. */
  get lo(): Float64Array {
    return this.los;
  }

  add(slot: number, v: number): void {
    this.addPair(slot, v, 0);
  }

  /** Adds another two-double sum, hi + lo, to the slot (a subtree's sum to its parent's). */
  addPair(slot: number, hi: number, lo: number): void {
    if (slot >= this.his.length) {
      this.his = grown(this.his, slot);
      this.los = grown(this.los, slot);
    }
    const was = this.his[slot]!;
    const sum = was + hi;
    this.his[slot] = sum;
    // Past ±Infinity there is no low part (the error term would be NaN).
    if (Number.isFinite(sum)) this.los[slot] = this.los[slot]! + twoSumError(was, hi, sum) + lo;
  }

  /** The slot's exact sum rounded once to a double (a float sum drifts: 0.1 + 0.2 + 0.3 is 0.6000000000000001). */
  nearest(slot: number): number {
    return (this.his[slot] ?? 0) + (this.los[slot] ?? 0);
  }

  /** The slot's exact sum rounded to an integer once, as Math.round would round it. */
  rounded(slot: number): number {
    return roundExact(this.his[slot] ?? 0, this.los[slot] ?? 0);
  }
}
