/**
 * The interval a .cpuprofile without one is read with: the median of its
 * positive gaps after the first (the upper one of an even count), 0 when
 * there are none. `medianGap` selects it from the whole list; `GapCounts`
 * finds the same value from the gaps seen one at a time, in memory that does
 * not grow with them (a streamed read: formats/devtools/cpuprofile-stream.ts).
 */

/** The median of the positive deltas after the first (the upper one of an even count), 0 when there are none. */
export function medianGap(deltas: ArrayLike<unknown>): number {
  const positive = new Float64Array(Math.max(0, deltas.length - 1));
  let n = 0;
  for (let i = 1; i < deltas.length; i++) if ((deltas[i] as number) > 0) positive[n++] = deltas[i] as number;
  return n > 0 ? kthSmallest(positive.subarray(0, n), n >> 1) : 0;
}

/**
 * The k-th smallest of `a` (reordered in place): a quickselect, O(n) where a whole sort was O(n log n) (1 M
 * deltas: ~100 ms of a conversion in the typed sort). A range still wide after 2·log2(n) partitions is sorted,
 * so no input makes it quadratic.
 */
function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  let budget = 2 * Math.ceil(Math.log2(a.length + 1));
  while (hi - lo > 16 && budget-- > 0) {
    // Median of three as the pivot, then Hoare's partition: [lo, j] <= pivot <= [i, hi].
    const mid = lo + ((hi - lo) >> 1);
    const x = a[lo]!;
    const y = a[mid]!;
    const z = a[hi]!;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  a.subarray(lo, hi + 1).sort();
  return a[k]!;
}

/** Whole gaps below this are counted in an array; others by value in a Map. */
const SMALL = 1 << 16;
/** The most distinct other gaps counted; past it the median is selected by passes over the gaps (radixSelect). */
export const MAX_COUNTED_GAPS = 1 << 16;

/**
 * The gaps of a list seen one at a time (`add`, every delta after the first), counted by value: a whole µs gap
 * below 65,536 in an array, any other in a Map of at most MAX_COUNTED_GAPS values. `median` is medianGap of the
 * same list.
 */
export class GapCounts {
  private readonly small = new Float64Array(SMALL);
  private others: Map<number, number> | undefined = new Map();
  /** Positive gaps added. */
  count = 0;

  add(delta: number): void {
    if (!(delta > 0)) return;
    this.count++;
    if (delta < SMALL && Number.isInteger(delta)) {
      this.small[delta] = this.small[delta]! + 1;
      return;
    }
    const others = this.others;
    if (others === undefined) return;
    others.set(delta, (others.get(delta) ?? 0) + 1);
    if (others.size > MAX_COUNTED_GAPS) this.others = undefined;
  }

  /**
   * medianGap of the deltas added. `again` goes through the same deltas once more (the first included, as `add`
   * had them): called only when they had too many distinct values to count, up to four times.
   */
  median(again: (visit: (delta: number) => void) => void): number {
    if (this.count === 0) return 0;
    let k = this.count >> 1;
    if (this.others === undefined) {
      let first = true;
      return radixSelect((visit) => again((d) => (first ? (first = false) : visit(d))), k);
    }
    const others = Float64Array.from(this.others.keys()).sort();
    let o = 0;
    for (let v = 1; v < SMALL; v++) {
      for (; o < others.length && others[o]! < v; o++) {
        const c = this.others.get(others[o]!)!;
        if (k < c) return others[o]!;
        k -= c;
      }
      const c = this.small[v]!;
      if (k < c) return v;
      k -= c;
    }
    for (; o < others.length; o++) {
      const c = this.others.get(others[o]!)!;
      if (k < c) return others[o]!;
      k -= c;
    }
    throw new RangeError('GapCounts: the median is past the gaps counted');
  }
}

function bump(counts: Float64Array, at: number): void {
  counts[at] = counts[at]! + 1;
}

/**
 * The k-th smallest (from 0) of the positive numbers `each` visits, in four passes over them, 16 bits of their
 * IEEE 754 bits a pass (a positive double's bits order as its value): 65,536 counts, nothing kept per number.
 */
export function radixSelect(each: (visit: (value: number) => void) => void, k: number): number {
  const f = new Float64Array(1);
  const u = new Uint32Array(f.buffer);
  const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
  const LO = 1 - HI;
  const counts = new Float64Array(1 << 16);
  let hi = 0;
  let lo = 0;
  for (let pass = 0; pass < 4; pass++) {
    counts.fill(0);
    each((value) => {
      if (!(value > 0)) return;
      f[0] = value;
      const h = u[HI]!;
      const l = u[LO]!;
      if (pass === 0) bump(counts, h >>> 16);
      else if (pass === 1) {
        if (h >>> 16 === hi >>> 16) bump(counts, h & 0xffff);
      } else if (pass === 2) {
        if (h === hi) bump(counts, l >>> 16);
      } else if (h === hi && l >>> 16 === lo >>> 16) bump(counts, l & 0xffff);
    });
    let digit = 0;
    while (digit < counts.length && k >= counts[digit]!) k -= counts[digit++]!;
    if (digit === counts.length) throw new RangeError('radixSelect: k is past the numbers visited');
    if (pass === 0) hi = (digit << 16) >>> 0;
    else if (pass === 1) hi = (hi | digit) >>> 0;
    else if (pass === 2) lo = (digit << 16) >>> 0;
    else lo = (lo | digit) >>> 0;
  }
  u[HI] = hi;
  u[LO] = lo;
  return f[0]!;
}
