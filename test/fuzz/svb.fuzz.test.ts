/**
 * Mutation fuzzing of Stream VByte decoding on every shared svb vector (1234,
 * 0124, delta): the JS twin and the native codec, at every kernel level this
 * CPU runs (switched with the addon's setKernelLevel test hook), on the same
 * mutated streams, counts, modes and delta bases. Both must decode the same
 * values and stream length, or reject with the same ProfpackError code and
 * offset; validate() must agree; re-encoding what was decoded must give the
 * same bytes on both.
 */
import { afterAll, describe, expect, it } from 'vitest';
import * as js from '../../lib/svb/js';
import { Mode } from '../../lib/svb/modes';
import type { SvbNative } from '../../lib/svb/native';
import { differentialTimeout, expectSameOutcome, runDifferential } from './differential';
import { mutate, outcome, saveFailure } from './mutate';
import { svbSeeds } from './seeds';
import { nativeTwin } from './twins';

const native = nativeTwin<SvbNative>('svb');
const seeds = svbSeeds();
const levels = native.kernelLevels();
const initialLevel = native.kernelLevel();
afterAll(() => {
  native.setKernelLevel(initialLevel);
});

function modesFor(variant: 'svb1234' | 'svb0124' | 'delta'): Mode[] {
  if (variant === 'svb0124') return [Mode.Plain0124];
  if (variant === 'delta') return [Mode.Delta1234, Mode.ZigzagDelta1234];
  return [Mode.Plain1234, Mode.Delta1234, Mode.Zigzag1234, Mode.ZigzagDelta1234];
}

describe('Stream VByte decode under mutation (JS twin vs native, every kernel level)', () => {
  it(
    'agrees on every mutated stream',
    () => {
      runDifferential(`svb (levels ${levels.join('/')})`, 0.25, (rng, i, fuzzSeed, describe) => {
        const seed = rng.pick(seeds);
        const bytes = rng.chance(0.1) ? seed.bytes.slice() : mutate(rng, seed, seeds);
        // Mostly the mode the stream was written in; sometimes another (a wrong guess by the caller).
        const mode = rng.chance(0.8) ? rng.pick(modesFor(seed.variant)) : rng.pick(Object.values(Mode));
        const count = rng.chance(0.6)
          ? seed.count
          : rng.chance(0.5)
            ? Math.max(0, seed.count + rng.int(9) - 4)
            : rng.int(4 * bytes.length + 5);
        const prev = rng.chance(0.7) ? seed.previous : rng.u32();
        const level = rng.pick(levels);
        native.setKernelLevel(level);
        const context = (): string =>
          `iteration ${i}, ${seed.name}, mode ${mode}, count ${count}, prev ${prev}, level ${level}; ` +
          saveFailure('svb', fuzzSeed, bytes);
        describe(context);
        const outJs = new Uint32Array(count);
        const outNative = new Uint32Array(count);
        const a = outcome(() => js.decode(bytes, count, outJs, mode, prev), context);
        const b = outcome(() => native.decode(bytes, count, outNative, mode, prev), context);
        expectSameOutcome('backends disagree', a, b, context);
        const va = outcome(() => js.validate(bytes, count, mode), context);
        const vb = outcome(() => native.validate(bytes, count, mode), context);
        if (JSON.stringify(va) !== JSON.stringify(vb))
          expect.fail(`validate disagrees: js ${JSON.stringify(va)} native ${JSON.stringify(vb)}; ${context()}`);
        if (!a.ok) return 'rejected';
        if (!outJs.every((v, k) => v === outNative[k])) expect.fail(`decoded values differ; ${context()}`);
        const encJs = new Uint8Array(Math.ceil(count / 4) + 4 * count);
        const encNative = new Uint8Array(encJs.length);
        const la = js.encode(outJs, encJs, mode, prev);
        const lb = native.encode(outJs, encNative, mode, prev);
        if (la !== lb || !encJs.subarray(0, la).every((v, k) => v === encNative[k]))
          expect.fail(`re-encoded bytes differ; ${context()}`);
        const back = new Uint32Array(count);
        expect(native.decode(encNative.subarray(0, lb), count, back, mode, prev)).toBe(lb);
        if (!back.every((v, k) => v === outJs[k])) expect.fail(`re-encoded stream does not decode back; ${context()}`);
        return 'accepted';
      });
    },
    differentialTimeout(0.25),
  );
});
