/** lib/typed-arrays.ts: the one copy step and growth policy of lib/'s typed columns. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grown, resized } from '../lib/typed-arrays';

const kinds = [Uint8Array, Uint16Array, Uint32Array, Int32Array, Float64Array] as const;

describe('typed columns', () => {
  it('resized keeps the kind and the values, and fills the new elements', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.array(fc.nat(255), { maxLength: 40 }),
        fc.nat(40),
        fc.constantFrom(0, 7, -1),
        (Kind, values, extra, fill) => {
          const a = Kind.from(values);
          const b = resized(a, a.length + extra, fill);
          expect(b).toBeInstanceOf(Kind);
          expect(b.length).toBe(a.length + extra);
          expect(Array.from(b.subarray(0, a.length))).toEqual(Array.from(a));
          const filled = Kind.of(fill)[0]!;
          for (let i = a.length; i < b.length; i++) expect(b[i]).toBe(filled);
        },
      ),
    );
  });

  it('grown has room for the index asked for, doubling from at least 64', () => {
    fc.assert(
      fc.property(fc.nat(300), fc.nat(5000), (length, need) => {
        const a = new Uint32Array(length).fill(3);
        const b = grown(a, need, 9);
        expect(b.length).toBeGreaterThan(need);
        expect(b.length).toBeGreaterThanOrEqual(Math.max(length, 64));
        // Doubling: never more than twice what was needed (or the old length, or 64).
        expect(b.length).toBeLessThanOrEqual(2 * Math.max(need + 1, length, 64));
        expect(b.subarray(0, length).every((v) => v === 3)).toBe(true);
        expect(b.subarray(length).every((v) => v === 9)).toBe(true);
      }),
    );
  });
});
