/** SampleKeys: the aggregated pprof's (stack, thread, label set) slots, against a Map of text keys. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SampleKeys } from '../../../lib/formats/pprof/sample-keys';

describe('SampleKeys', () => {
  it('numbers distinct keys in first-seen order and finds them again, as a Map of text keys does (property)', () => {
    const id = fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 0xffff_ffff }));
    fc.assert(
      fc.property(fc.array(fc.tuple(id, id, id), { maxLength: 5000 }), (rows) => {
        const keys = new SampleKeys();
        const oracle = new Map<string, number>();
        for (const [stack, thread, labels] of rows) {
          const text = `${stack},${thread},${labels}`;
          if (!oracle.has(text)) oracle.set(text, oracle.size);
          expect(keys.slot(stack, thread, labels)).toBe(oracle.get(text));
        }
        expect(keys.size).toBe(oracle.size);
        [...oracle.keys()].forEach((text, slot) => {
          expect(`${keys.stack(slot)},${keys.thread(slot)},${keys.labels(slot)}`).toBe(text);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('keeps 300,000 keys that differ in one id apart (the table grows many times)', () => {
    const keys = new SampleKeys();
    for (let n = 0; n < 100_000; n++) {
      expect(keys.slot(n, 0, 0)).toBe(3 * n);
      expect(keys.slot(0, n + 1, 0)).toBe(3 * n + 1);
      expect(keys.slot(0, 0, n + 1)).toBe(3 * n + 2);
    }
    for (let n = 0; n < 100_000; n += 997) expect(keys.slot(0, n + 1, 0)).toBe(3 * n + 1);
    expect(keys.size).toBe(300_000);
  });
});
