// Damaged outside profiles: every reader either reads them or throws a
// ProfpackError, never a raw TypeError/RangeError (bytes flipped in real pprof
// files; JSON values of real .cpuprofile and speedscope files swapped for
// values of the wrong type).
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readProfile } from '../../lib/formats/index';
import { isProfpackError } from '../../lib/errors';
import * as path from 'node:path';
import { repoRoot, sharedPath } from '../support/environment';

const outside = (name: string) => readFileSync(name.includes('/') ? name : sharedPath('data', 'outside', name));

/** Reads every sample; returns the error when one is thrown. */
function readAll(bytes: Uint8Array, format: 'pprof' | 'cpuprofile' | 'speedscope'): unknown {
  try {
    const src = readProfile(bytes, { format });
    let n = 0;
    for (const b of src.batches()) {
      // Every stack a record names resolves to frames the source has.
      for (let i = 0; i < b.length; i++)
        for (const f of src.stacks.toArray(b.stack[i]!)) expect(src.frames[f]).toBeDefined();
      n += b.length;
      if (n > 200_000) break;
    }
    return undefined;
  } catch (err) {
    return err;
  }
}

function expectCoded(err: unknown): void {
  if (err !== undefined) expect(isProfpackError(err), inspect(err)).toBe(true);
}

describe('damaged pprof', () => {
  for (const name of [
    'go-runtime-pprof-labels.cpu.pb.gz',
    'datadog-pprof-5.20.0-wall-labels.pb.gz',
    'google-pprof-cppbench.cpu_no_samples_type.pb.gz',
  ]) {
    it(`${name}: flipped and cut bytes`, () => {
      const raw = gunzipSync(outside(name));
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
          fc.option(fc.nat()),
          (flips, cut) => {
            const b = Uint8Array.from(raw);
            for (const [at, v] of flips) b[at % b.length] = v;
            expectCoded(readAll(cut === null ? b : b.subarray(0, cut % b.length), 'pprof'));
          },
        ),
        { numRuns: 150 },
      );
    });
  }
});

/** Every path to a value in a JSON document (bounded). */
function paths(
  value: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (out.length > 4000) return out;
  out.push(prefix);
  if (Array.isArray(value)) value.slice(0, 6).forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function setAt(doc: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let cur = copy;
  for (let i = 0; i < path.length - 1; i++) cur = cur[path[i]!] as Record<string | number, unknown>;
  cur[path[path.length - 1]!] = value;
  return copy;
}

const wrongValue = fc.constantFrom<unknown>(
  null,
  -1,
  0,
  1e300,
  'x',
  '',
  [],
  [null],
  {},
  { id: 1 },
  true,
  [[null]],
  [-1],
);

describe('type-confused JSON', () => {
  for (const [name, format] of [
    ['speedscope_0.6.0_two-sampled.speedscope.json', 'speedscope'],
    [path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile'), 'cpuprofile'],
  ] as const) {
    it(`${path.basename(name)}: any value replaced by one of the wrong type`, () => {
      const doc = JSON.parse(outside(name).toString('utf8')) as unknown;
      const all = paths(doc);
      fc.assert(
        fc.property(fc.nat({ max: all.length - 1 }), wrongValue, (i, v) => {
          expectCoded(readAll(Buffer.from(JSON.stringify(setAt(doc, all[i]!, v))), format));
        }),
        { numRuns: 300 },
      );
    });
  }
});
