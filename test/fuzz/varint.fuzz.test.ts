/**
 * Mutation fuzzing of batch LEB128 decoding: the JS twin and the native addon
 * on the same mutated inputs (Tachyon vectors, whose sample regions and tables
 * are varint streams) must return the same values and end offset, or reject
 * with the same ProfpackError code at the same offset.
 */
import { describe, expect, it } from 'vitest';
import * as js from '../../lib/varint/js';
import { VarintKind, kindInfo, type BatchArray } from '../../lib/varint/kinds';
import type { VarintNative } from '../../lib/varint/native';
import { fuzzSeconds, fuzzSeed, mutate, outcome, Rng, runFor, saveFailure } from './mutate';
import { tachyonSeeds } from './seeds';
import { nativeTwin } from './twins';

const native = nativeTwin<VarintNative>('varint');
const seeds = tachyonSeeds();
const KINDS = [
  VarintKind.U32,
  VarintKind.U64,
  VarintKind.Zigzag32,
  VarintKind.I64,
  VarintKind.I32,
  VarintKind.Zigzag64,
];

function allocate(kind: VarintKind, count: number): BatchArray {
  switch (kindInfo[kind].array) {
    case 'Uint32Array':
      return new Uint32Array(count);
    case 'Int32Array':
      return new Int32Array(count);
    case 'BigUint64Array':
      return new BigUint64Array(count);
    default:
      return new BigInt64Array(count);
  }
}

describe('varint batch decode under mutation (JS twin vs native)', () => {
  it(
    'agrees on every mutated input',
    () => {
      const base = fuzzSeed();
      const rng = new Rng(base);
      let accepted = 0;
      let rejected = 0;
      let describeCurrent = (): string => '';
      const iterations = runFor(
        fuzzSeconds() * 0.1 * 1000,
        2000,
        () => {
          const seed = rng.pick(seeds);
          // A window of the file keeps inputs small and varint-dense.
          const from = rng.int(seed.bytes.length);
          const window = { name: seed.name, bytes: seed.bytes.subarray(from, from + 1 + rng.int(512)) };
          const bytes = rng.chance(0.1) ? window.bytes.slice() : mutate(rng, window, seeds);
          const kind = rng.pick(KINDS);
          const offset = rng.int(Math.min(bytes.length, 16) + 1);
          const count = rng.chance(0.3) ? bytes.length - offset : rng.int(bytes.length - offset + 1);
          const context = (): string =>
            `kind ${kind} offset ${offset} count ${count}; ${saveFailure(`varint-k${kind}`, base, bytes)}`;
          describeCurrent = context;
          const outJs = allocate(kind, count);
          const outNative = allocate(kind, count);
          const a = outcome(() => js.decodeMany(kind, bytes, offset, count, outJs), context);
          const b = outcome(() => native.decodeMany(kind, bytes, offset, count, outNative), context);
          if (
            a.ok !== b.ok ||
            (a.ok && b.ok && a.value !== b.value) ||
            (!a.ok && !b.ok && (a.code !== b.code || a.offset !== b.offset))
          ) {
            expect.fail(`backends disagree: js ${JSON.stringify(a)} native ${JSON.stringify(b)}; ${context()}`);
          }
          if (a.ok) {
            if (!outJs.every((v, i) => v === outNative[i])) expect.fail(`values differ; ${context()}`);
            accepted++;
          } else {
            rejected++;
          }
        },
        2000,
        () => describeCurrent(),
      );
      console.info(
        `varint fuzz (${process.env.PROFPACK_BACKEND ?? 'auto'} run, seed ${base}): ${iterations} inputs, ${accepted} decoded, ${rejected} rejected`,
      );
      // Both outcomes must have been exercised, or the fuzzer is not reaching the decoder's edges.
      expect(accepted).toBeGreaterThan(0);
      expect(rejected).toBeGreaterThan(0);
      expect(iterations).toBeGreaterThanOrEqual(2000);
    },
    fuzzSeconds() * 0.1 * 1000 + 60_000,
  );
});
