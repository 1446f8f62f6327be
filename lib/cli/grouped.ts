/**
 * An integer with its thousands grouped by commas, as `n.toLocaleString('en')` writes it, without ICU: the first
 * toLocaleString of a process loads ICU's locale data, ~15 ms of CPU that `profpack record` would add to every
 * recording's cost for its one summary line (bench/RESULTS.md, "Where the heap recording's CPU goes").
 */
export function grouped(n: number): string {
  const digits = String(Math.abs(Math.trunc(n)));
  return `${n < 0 ? '-' : ''}${digits.replace(/\B(?=(\d{3})+$)/g, ',')}`;
}
