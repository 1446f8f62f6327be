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
import { differentialTimeout, expectSameOutcome, runDifferential } from './differential';
import { mutate, outcome, saveFailure } from './mutate';
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
      runDifferential('varint', 0.1, (rng, _i, seed, describe) => {
        const source = rng.pick(seeds);
        // A window of the file keeps inputs small and varint-dense.
        const from = rng.int(source.bytes.length);
        const window = { name: source.name, bytes: source.bytes.subarray(from, from + 1 + rng.int(512)) };
        const bytes = rng.chance(0.1) ? window.bytes.slice() : mutate(rng, window, seeds);
        const kind = rng.pick(KINDS);
        const offset = rng.int(Math.min(bytes.length, 16) + 1);
        const count = rng.chance(0.3) ? bytes.length - offset : rng.int(bytes.length - offset + 1);
        const context = (): string =>
          `kind ${kind} offset ${offset} count ${count}; ${saveFailure(`varint-k${kind}`, seed, bytes)}`;
        describe(context);
        const outJs = allocate(kind, count);
        const outNative = allocate(kind, count);
        const a = outcome(() => js.decodeMany(kind, bytes, offset, count, outJs), context);
        const b = outcome(() => native.decodeMany(kind, bytes, offset, count, outNative), context);
        expectSameOutcome('backends disagree', a, b, context);
        if (!a.ok) return 'rejected';
        if (!outJs.every((v, i) => v === outNative[i])) expect.fail(`values differ; ${context()}`);
        return 'accepted';
      });
    },
    differentialTimeout(0.1),
  );
});
