// test/support/outside-tools.ts reads go tool pprof's text right: profiles
// made here with known sums, hottest functions and label keys (written with
// the pprof-format encoder, not profpack) must come back as such from
// -raw, -top and -tags. Values reach 2^45 so that a 32-bit slip in the
// sums would show.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  Function as PprofFunction,
  Label,
  Line,
  Location,
  Profile,
  Sample,
  StringTable,
  ValueType,
} from 'pprof-format';
import { describe, expect, it } from 'vitest';
import { SLOWDOWN } from '../support/environment';
import { goBinary, goPprofRawTotals, goPprofTags, goPprofTopFirst } from '../support/outside-tools';
import { scratchDir } from '../support/scratch-dir';

const TYPES = [
  { type: 'samples', unit: 'count' },
  { type: 'cpu', unit: 'nanoseconds' },
  { type: 'alloc_space', unit: 'bytes' },
  { type: 'delay', unit: 'nanoseconds' },
];
const FUNCTIONS = ['main.alpha', 'main.beta', 'pkg.(*T).gamma', 'delta'];
const LABEL_KEYS = ['phase', 'span id', 'thread name'];

interface Case {
  types: number;
  samples: { leaf: number; caller: number; values: number[]; labels: [number, string][] }[];
}

const caseArb: fc.Arbitrary<Case> = fc.integer({ min: 1, max: TYPES.length }).chain((types) =>
  fc.record({
    types: fc.constant(types),
    samples: fc.array(
      fc.record({
        leaf: fc.integer({ min: 0, max: FUNCTIONS.length - 1 }),
        caller: fc.integer({ min: 0, max: FUNCTIONS.length - 1 }),
        values: fc.array(fc.integer({ min: 0, max: 2 ** 45 }), { minLength: types, maxLength: types }),
        labels: fc.uniqueArray(
          fc.tuple(fc.integer({ min: 0, max: LABEL_KEYS.length - 1 }), fc.constantFrom('a', 'b c', 'GET /x')),
          { selector: ([k]) => k, maxLength: 2 },
        ),
      }),
      { minLength: 1, maxLength: 12 },
    ),
  }),
);

const dir = scratchDir('profpack-outside-tools-');
let written = 0;

/** The case as a gzipped profile.proto: function i at location i + 1, stacks leaf then caller. */
function writeCase(c: Case): string {
  const strings = new StringTable();
  const functionIds = FUNCTIONS.map((name, i) => {
    const id = strings.dedup(name);
    return new PprofFunction({ id: i + 1, name: id, systemName: id, filename: strings.dedup('x.go') });
  });
  const valueType = (t: { type: string; unit: string }) =>
    new ValueType({ type: strings.dedup(t.type), unit: strings.dedup(t.unit) });
  const profile = new Profile({
    sampleType: TYPES.slice(0, c.types).map(valueType),
    function: functionIds,
    location: FUNCTIONS.map(
      (_, i) => new Location({ id: i + 1, line: [new Line({ functionId: i + 1, line: 10 + i })] }),
    ),
    sample: c.samples.map(
      (s) =>
        new Sample({
          locationId: [s.leaf + 1, s.caller + 1],
          value: s.values,
          label: s.labels.map(([k, v]) => new Label({ key: strings.dedup(LABEL_KEYS[k]!), str: strings.dedup(v) })),
        }),
    ),
    periodType: valueType(TYPES[0]!),
    period: 1,
    stringTable: strings,
  });
  const file = path.join(dir, `case-${written++}.pb.gz`);
  writeFileSync(file, gzipSync(profile.encode()));
  return file;
}

describe('outside-tools reads go tool pprof', () => {
  it('finds go on PATH', () => {
    expect(path.basename(goBinary())).toBe('go');
  });

  it(
    '-raw totals are the exact per-type sums; -top first row is the largest self; -tags lists the keys',
    () => {
      fc.assert(
        fc.property(caseArb, (c) => {
          const file = writeCase(c);
          const want = TYPES.slice(0, c.types).map((t, k) => ({
            ...t,
            total: c.samples.reduce((sum, s) => sum + s.values[k]!, 0),
          }));
          expect(goPprofRawTotals(file)).toEqual(want);
          for (const [k, t] of want.entries()) {
            const self = FUNCTIONS.map((_, f) =>
              c.samples.reduce((sum, s) => sum + (s.leaf === f ? s.values[k]! : 0), 0),
            );
            const max = Math.max(...self);
            // A tie has no one answer; pprof breaks it by its own order.
            if (max === 0 || self.filter((v) => v === max).length > 1) continue;
            expect(goPprofTopFirst(file, t.type), t.type).toBe(FUNCTIONS[self.indexOf(max)]);
          }
          // pprof drops a sample whose values are all 0 as it reads the file; -tags lists the keys of the rest,
          // weighed by the default sample type (pprof's: the last one), so a key may total 0 (printed without a
          // percentage).
          const kept = c.samples.filter((s) => s.values.some((v) => v !== 0));
          const keys = new Set(kept.flatMap((s) => s.labels.map(([key]) => LABEL_KEYS[key]!)));
          const tags = goPprofTags(file);
          expect(tags.map((t) => t.key)).toEqual([...keys].sort());
          for (const tag of tags) {
            const total = kept.reduce(
              (sum, s) => sum + (s.labels.some(([key]) => LABEL_KEYS[key] === tag.key) ? s.values[c.types - 1]! : 0),
              0,
            );
            expect(
              tag.values.every((v) => v.percent === null),
              tag.key,
            ).toBe(total === 0);
          }
        }),
        { numRuns: 25 },
      );
      // Up to 150 runs of go tool pprof, each a few ms of CPU but a process start: 44 s at load 13 on 2 cores.
    },
    300_000 * SLOWDOWN,
  );
});
