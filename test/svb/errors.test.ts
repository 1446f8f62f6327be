/**
 * Untrusted input: truncated or garbage streams must give ERR_SVB_TRUNCATED
 * (never a crash, never bytes from beyond the given view), with the same
 * offset on every codec, and no codec may write outside its output.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProfpackError } from '../../lib/errors';
import * as svb from '../../lib/svb/index';
import { Mode } from '../../lib/svb/modes';
import { rng } from '../support/rng.mjs';
import { allCodecs, encodeWith, maxEncodedLength, sameBytes } from './codecs';

/** Where a stream cut to `size` bytes first runs out, from the format rules alone. */
function truncationOffset(stream: Uint8Array, size: number, count: number, is0124: boolean): number | null {
  const control = Math.ceil(count / 4);
  if (size < control) return size;
  let pos = control;
  for (let i = 0; i < count; i++) {
    const code = (stream[i >> 2]! >> (2 * (i % 4))) & 3;
    const length = is0124 ? [0, 1, 2, 4][code]! : code + 1;
    if (pos + length > size) return pos;
    pos += length;
  }
  return null;
}

function errorOf(body: () => unknown): ProfpackError | null {
  try {
    body();
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ProfpackError);
    return err as ProfpackError;
  }
}

function sample(n: number, seed: number): Uint32Array {
  const out = new Uint32Array(n);
  const random = rng(seed);
  for (let i = 0; i < n; i++) {
    // Values of 1 to 4 significant bytes: every Stream VByte length code.
    const s = Math.floor(random() * 2 ** 32);
    out[i] = s >>> (8 * ((s >>> 9) & 3));
  }
  return out;
}

describe('Stream VByte on untrusted input', () => {
  it('a stream cut at every length is ERR_SVB_TRUNCATED at the same offset on every codec', () => {
    for (const [n, mode] of [
      [0, Mode.Plain1234],
      [5, Mode.Plain1234],
      [45, Mode.Delta1234],
      [300, Mode.Plain1234],
      [301, Mode.Plain0124],
      [130, Mode.ZigzagDelta1234],
    ] as const) {
      const values = sample(n, n + 3);
      values[n >> 1] = 0; // give 0124 a zero-length value too
      const full = encodeWith(allCodecs[0]!.codec, values, mode, 9);
      for (let size = 0; size < full.length; size++) {
        // A view of the full stream: bytes past `size` exist in the buffer but must not be read.
        const cut = full.subarray(0, size);
        const offset = truncationOffset(full, size, n, mode === Mode.Plain0124);
        for (const { name, codec } of allCodecs) {
          const out = new Uint32Array(n);
          const err = errorOf(() => codec.decode(cut, n, out, mode, 9));
          if (offset === null) {
            expect(err, `${name} n=${n} size=${size}`).toBeNull();
          } else {
            expect(err?.code, `${name} n=${n} size=${size}`).toBe('ERR_SVB_TRUNCATED');
            expect(err?.offset, `${name} n=${n} size=${size}`).toBe(offset);
          }
        }
        expect(svb.validate(cut, n, mode === Mode.Plain0124 ? '0124' : '1234')).toBe(false);
      }
    }
  });

  it('fast-check: garbage bytes and counts decode identically on every codec or fail with ERR_SVB_TRUNCATED', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 700, size: 'max' }),
        fc.integer({ min: 0, max: 1500 }),
        fc.constantFrom(Mode.Plain1234, Mode.Delta1234, Mode.Plain0124),
        (bytes, count, mode) => {
          const results = allCodecs.map(({ codec }) => {
            const out = new Uint32Array(count);
            const err = errorOf(() => codec.decode(bytes, count, out, mode, 0));
            if (err !== null) return { code: err.code, offset: err.offset };
            const used = codec.decode(bytes, count, out, mode, 0);
            return { used, out };
          });
          const first = results[0]!;
          for (const r of results) {
            if ('code' in first) {
              expect(r).toEqual(first);
              expect(first.code).toBe('ERR_SVB_TRUNCATED');
            } else {
              expect('used' in r && r.used).toBe(first.used);
              expect(sameBytes((r as { out: Uint32Array }).out, first.out)).toBe(true);
              expect(first.used).toBeLessThanOrEqual(bytes.length);
            }
          }
          const valid = svb.validate(bytes, count, mode === Mode.Plain0124 ? '0124' : '1234');
          expect(valid).toBe(!('code' in first) && first.used === bytes.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('no codec writes outside its output views', () => {
    const sentinel = 0xa5;
    for (const n of [1, 7, 8, 31, 32, 33, 100, 1027]) {
      for (const mode of [Mode.Plain1234, Mode.Delta1234, Mode.Plain0124]) {
        const values = sample(n, 99 + n);
        for (const { name, codec } of allCodecs) {
          // Encode into a view of exactly maxEncodedLength(n) inside a larger buffer.
          const backing = new Uint8Array(maxEncodedLength(n) + 64).fill(sentinel);
          const out = backing.subarray(32, 32 + maxEncodedLength(n));
          const length = codec.encode(values, out, mode, 0);
          expect(
            backing.subarray(0, 32).every((b) => b === sentinel),
            `${name} before`,
          ).toBe(true);
          expect(
            backing.subarray(32 + maxEncodedLength(n)).every((b) => b === sentinel),
            `${name} after`,
          ).toBe(true);
          // Decode into a view of exactly n values inside a larger array.
          const words = new Uint32Array(n + 16).fill(0xdeadbeef);
          const into = words.subarray(8, 8 + n);
          expect(codec.decode(out.subarray(0, length), n, into, mode, 0)).toBe(length);
          expect(
            words.subarray(0, 8).every((w) => w === 0xdeadbeef),
            `${name} decode before`,
          ).toBe(true);
          expect(
            words.subarray(8 + n).every((w) => w === 0xdeadbeef),
            `${name} decode after`,
          ).toBe(true);
          expect(sameBytes(into, values)).toBe(true);
        }
      }
    }
  });

  it('the public API validates arguments before allocating', () => {
    // A count whose control bytes cannot fit is truncated input, found before a 16 GB allocation.
    const err = errorOf(() => svb.decode(new Uint8Array(10), 4_000_000_000));
    expect(err?.code).toBe('ERR_SVB_TRUNCATED');
    expect(err?.offset).toBe(10);
    expect(errorOf(() => svb.decode(new Uint8Array(1), -1))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.decode(new Uint8Array(1), 1.5))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.encode(new Uint32Array(1), '9999' as '1234'))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.encode([1, 2] as unknown as Uint32Array))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.zigzagDeltaEncode(new Uint32Array(1) as unknown as Int32Array))?.code).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(errorOf(() => svb.deltaEncode(new Uint32Array(1), 2 ** 32))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.decodeInto(new Uint8Array(5), 4, new Uint32Array(3)))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(svb.validate(new Uint8Array(0), 1)).toBe(false);
    expect(svb.validate(new Uint8Array([0, 1, 2]), 1)).toBe(false); // one byte too long
    expect(svb.validate(new Uint8Array([0, 1]), 1)).toBe(true);
  });
});
