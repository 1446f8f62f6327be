import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grouped } from '../../lib/cli/grouped';

describe('grouped', () => {
  it('writes an integer as toLocaleString("en") does', () => {
    fc.assert(
      fc.property(fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(grouped(n)).toBe(n.toLocaleString('en'));
      }),
    );
    for (const n of [0, 999, 1000, 1739, 1_000_000, -1234567]) expect(grouped(n)).toBe(n.toLocaleString('en'));
  });
});
