/**
 * LabelSets: one id per distinct label set, field by field. The profile model and version 2's model section
 * (ModelSectionEncoder) intern labels through this one table, so its key must tell apart every field either side
 * keeps: a string label's unit as well as a number's, and a label with neither value from any value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LabelSets, type Label } from '../../lib/profile/index';

const labelArb: fc.Arbitrary<Label> = fc
  .record(
    {
      key: fc.constantFrom('span', 'route', ''),
      str: fc.constantFrom('a', 'b', 'n1', ''),
      num: fc.constantFrom(0, 1, -1, 2.5),
      // No empty unit: the key (as the file's coding) holds an empty unit as none.
      unit: fc.constantFrom('bytes', 'ms'),
    },
    { requiredKeys: ['key'] },
  )
  // A label holds a string or a number, not both (pprof's Label).
  .map((l) => (l.str !== undefined ? { ...l, num: undefined } : l))
  .map((l) => Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) as unknown as Label);

const setArb = fc.array(labelArb, { maxLength: 3 });

describe('LabelSets', () => {
  it('the empty set is 0; equal sets share an id, sets that differ in any field do not', () => {
    fc.assert(
      fc.property(fc.array(setArb, { minLength: 1, maxLength: 12 }), (sets) => {
        const table = new LabelSets();
        const ids = sets.map((s) => table.intern(s));
        for (let i = 0; i < sets.length; i++) {
          if (sets[i]!.length === 0) expect(ids[i]).toBe(0);
          for (let j = 0; j < i; j++)
            expect(ids[i] === ids[j]).toBe(JSON.stringify(sets[i]) === JSON.stringify(sets[j]));
          expect(table.list[ids[i]!]).toEqual(sets[i]);
        }
      }),
    );
  });

  it('keeps a string label unit and tells a label with no value from any value', () => {
    const table = new LabelSets();
    const plain = table.intern([{ key: 'k', str: 'v' }]);
    const withUnit = table.intern([{ key: 'k', str: 'v', unit: 'ms' }]);
    const none = table.intern([{ key: 'k' }]);
    const literal = table.intern([{ key: 'k', str: '-' }]);
    expect(new Set([plain, withUnit, none, literal]).size).toBe(4);
    expect(table.list[withUnit]).toEqual([{ key: 'k', str: 'v', unit: 'ms' }]);
  });
});
