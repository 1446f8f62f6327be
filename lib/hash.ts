/**
 * The integer mixer of lib/'s open-addressing tables (stack interning, pprof sample keys, the Tachyon reader's
 * threads, the writer's frames): one set of constants. Tables take `hash & mask`, so every input bit must reach
 * the low bits: each input is multiplied by an odd constant, then the high half is folded down twice. Slot order
 * never shows in an output (every table numbers its entries in the order first met), so the mixer only has to
 * spread, not to agree with anything.
 */

/** A 32-bit hash of two integers. */
export function mix2(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 15;
  return Math.imul(h, 0x27d4eb2d) ^ (h >>> 13);
}

/** A 32-bit hash of three integers. */
export function mix3(a: number, b: number, c: number): number {
  return mix2(mix2(a, b), c);
}
