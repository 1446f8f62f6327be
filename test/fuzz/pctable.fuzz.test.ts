/**
 * Mutation fuzzing of PcTable on every table of data/pcdata (Go 1.21
 * varint-delta tables of four binaries) and every reference linear encoding:
 * the JS twin and the native core decode the same mutated bytes to the same
 * runs, build the same linear encoding, open the same linear tables and
 * answer the same lookups — or reject with the same ProfpackError code and
 * offset.
 */
import { describe, expect, it } from 'vitest';
import * as js from '../../lib/pctable/js';
import type { PcTableNative } from '../../lib/pctable/native';
import { differentialTimeout, runDifferential, type Verdict } from './differential';
import { mutate, outcome, saveFailure, type Rng } from './mutate';
import { pcdataSeeds } from './seeds';
import { nativeTwin } from './twins';

const native = nativeTwin<PcTableNative>('pctable');
const LINEAR_SIZE_LIMIT = 1 << 26;
const seeds = pcdataSeeds();

function same(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): string =>
    JSON.stringify(v, (_k, x: unknown) => (ArrayBuffer.isView(x) ? Array.from(x as unknown as ArrayLike<number>) : x));
  return norm(a) === norm(b);
}

describe('PcTable under mutation (JS twin vs native)', () => {
  it(
    'agrees on every mutated table',
    () => {
      runDifferential('pctable', 0.25, (rng, i, base, describe): Verdict => {
        const seed = rng.pick(seeds);
        const bytes = rng.chance(0.05) ? seed.bytes : mutate(rng, seed, seeds);
        const quantum = rng.chance(0.9) ? seed.quantum : 1 + rng.int(8);
        const context = (): string =>
          `iteration ${i}, ${seed.name} (${seed.kind}), quantum ${quantum}; ${saveFailure('pctable', base, bytes)}`;
        describe(context);
        const fail = (what: string, a: unknown, b: unknown): never =>
          expect.fail(
            `${what} differ: js ${JSON.stringify(a)?.slice(0, 300)} native ${JSON.stringify(b)?.slice(0, 300)}; ${context()}`,
          );
        const agree = <A, B>(what: string, fa: () => A, fb: () => B): { ok: boolean; a?: A; b?: B } => {
          const a = outcome(fa, context);
          const b = outcome(fb, context);
          if (a.ok !== b.ok) fail(`${what} outcomes`, a, b);
          if (!a.ok && !b.ok && (a.code !== b.code || a.offset !== b.offset)) fail(`${what} errors`, a, b);
          if (a.ok && b.ok) return { ok: true, a: a.value, b: b.value };
          return { ok: false };
        };
        if (seed.kind === 'varint') {
          const d = agree(
            'decodeVarint',
            () => js.decodeVarint(bytes, quantum),
            () => native.decodeVarint(bytes, quantum),
          );
          if (d.ok && !same(d.a, d.b)) fail('decoded runs', d.a, d.b);
          // A few bytes can declare a run of ~2^32 PCs, and the linear index of that
          // has ~2^24 chunks (~230 ms and ~60 MB on either backend): a known cost of
          // fromVarint (test/fuzz/RESULTS.md, "PcTable"), not repeated thousands of times.
          const ends = d.ok ? d.a!.ends : null;
          if (ends !== null && ends.length > 0 && ends[ends.length - 1]! > LINEAR_SIZE_LIMIT) {
            return 'accepted';
          }
          // The raw codecs take sizes the public API has checked: multiples of the quantum.
          const expected = rng.chance(0.5) ? 0 : fitSize(seed.size, quantum);
          const f = agree(
            'fromVarint',
            () => js.fromVarint(bytes, quantum, expected),
            () => native.fromVarint(bytes, quantum, expected),
          );
          if (!f.ok) {
            return 'rejected';
          }
          const ja = f.a!;
          const nb = f.b!;
          if (!same([ja.linear, ja.size, ja.end], [nb.linear, nb.size, nb.end])) fail('linear encodings', ja, nb);
          lookups(rng, ja.handle, nb.handle, ja.size, context);
        } else {
          const size = fitSize(
            rng.chance(0.8) ? seed.size : rng.chance(0.5) ? seed.size + quantum * (rng.int(5) - 2) : rng.u32(),
            quantum,
          );
          const o = agree(
            'fromLinear',
            () => js.fromLinear(bytes, size, quantum),
            () => native.fromLinear(bytes, size, quantum),
          );
          if (!o.ok) {
            return 'rejected';
          }
          lookups(rng, o.a!, o.b!, size, context);
        }
        return 'accepted';
      });
    },
    differentialTimeout(0.25),
  );
});

/** A positive multiple of the quantum below 2^32, near `size` (the public API refuses others before any decoding). */
function fitSize(size: number, quantum: number): number {
  const fitted = Math.min(size, 0xffff_ffff) - (Math.min(size, 0xffff_ffff) % quantum);
  return fitted > 0 ? fitted : quantum;
}

function lookups(
  rng: Rng,
  view: js.LinearView,
  handle: Parameters<PcTableNative['lookupMany']>[0],
  size: number,
  context: () => string,
): void {
  const n = 64;
  const pcs = new Uint32Array(n);
  for (let k = 0; k < n; k++) pcs[k] = k < 4 ? [0, size - 1, size, size + 1][k]! >>> 0 : rng.int(size + 8);
  const fill = rng.chance(0.5);
  const outA = new Int32Array(n);
  const outB = new Int32Array(n);
  const a = outcome(() => js.lookupMany(view, pcs, outA, fill, -7), context);
  const b = outcome(() => native.lookupMany(handle, pcs, outB, fill, -7), context);
  if (JSON.stringify(a) !== JSON.stringify(b))
    expect.fail(`lookupMany outcomes differ: js ${JSON.stringify(a)} native ${JSON.stringify(b)}; ${context()}`);
  // Without fill, both stop at the first PC outside; compare what both wrote.
  const upTo = a.ok && a.value >= 0 ? a.value : n;
  for (let k = 0; k < upTo; k++) {
    if (outA[k] !== outB[k])
      expect.fail(`lookup of pc ${pcs[k]} differs: js ${outA[k]} native ${outB[k]}; ${context()}`);
  }
}

describe('PcTable: inputs the native fuzzer once failed on', () => {
  it('value deltas wrap as Go int32 sums (UBSan: signed overflow in VarintCursor::Next)', () => {
    // regressions/pctable/varint-value-int32-overflow.bin without its 10 parameter bytes:
    // value -1 + (2^31 - 1) = 2^31 - 2 for one PC, then + 2 wraps to -2^31.
    const table = Uint8Array.from([0xfe, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x04, 0x01, 0x00]);
    for (const decode of [js.decodeVarint, native.decodeVarint]) {
      const runs = decode(table, 1);
      expect(Array.from(runs.values)).toEqual([2147483646, -2147483648]);
      expect(Array.from(runs.ends)).toEqual([1, 2]);
      expect(runs.end).toBe(9);
    }
  });
});
