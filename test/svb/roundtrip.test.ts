/**
 * Round trips for every stream kind on every codec (JS twin, addon at each
 * kernel level), and byte-for-byte agreement between them: fast-check inputs
 * up to 5000 values plus every length 0..70 and 4960..5000 (so every tail
 * mod 4 and mod 32 meets the SIMD block edges), with random `prev`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as svb from '../../lib/svb/index';
import { Mode } from '../../lib/svb/modes';
import { allCodecs, encodeWith, sameBytes } from './codecs';

const MODES: Mode[] = [Mode.Plain1234, Mode.Delta1234, Mode.Zigzag1234, Mode.ZigzagDelta1234, Mode.Plain0124];

/** Values of every byte length (and 0), so every code of both layouts occurs. */
const value = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 0xff }),
  fc.integer({ min: 0x100, max: 0xffff }),
  fc.integer({ min: 0x10000, max: 0xffffff }),
  fc.integer({ min: 0x1000000, max: 0xffffffff }),
  fc.constantFrom(0xff, 0x100, 0xffff, 0x10000, 0xffffff, 0x1000000, 0x7fffffff, 0x80000000, 0xffffffff),
);
const prev = fc.integer({ min: 0, max: 0xffffffff });

/** Deterministic values for the fixed lengths: a mix of lengths and small sorted steps. */
function mixed(n: number, seed: number): Uint32Array {
  const out = new Uint32Array(n);
  let state = seed >>> 0 || 1;
  let acc = 0;
  for (let i = 0; i < n; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const r = state >>> 0;
    acc = (acc + (r & 0x3f)) >>> 0;
    out[i] = r % 5 === 0 ? acc : r % 5 === 1 ? 0 : r >>> (8 * (r & 3));
  }
  return out;
}

/** Encodes on every codec, checks they agree and that each decodes back on every codec. */
function checkEverywhere(values: Uint32Array, mode: Mode, prevValue: number): void {
  const reference = encodeWith(allCodecs[0]!.codec, values, mode, prevValue);
  const n = values.length;
  expect(reference.length).toBe(allCodecs[0]!.codec.encodedLength(values, mode, prevValue));
  for (const { name, codec } of allCodecs) {
    const bytes = encodeWith(codec, values, mode, prevValue);
    expect(sameBytes(bytes, reference), `${name} encode, mode ${mode}, n ${n}`).toBe(true);
    const decoded = new Uint32Array(n);
    expect(codec.decode(reference, n, decoded, mode, prevValue)).toBe(reference.length);
    expect(sameBytes(decoded, values), `${name} decode, mode ${mode}, n ${n}`).toBe(true);
    expect(codec.validate(reference, n, mode === Mode.Plain0124 ? mode : Mode.Plain1234)).toBe(true);
  }
}

describe('Stream VByte round trips', () => {
  it('every length 0..70 and 4960..5000, every mode, every codec', () => {
    const lengths = [...Array.from({ length: 71 }, (_, i) => i), ...Array.from({ length: 41 }, (_, i) => 4960 + i)];
    for (const n of lengths) {
      const values = mixed(n, n + 1);
      for (const mode of MODES) checkEverywhere(values, mode, (n * 2654435761) >>> 0);
    }
  });

  it('fast-check: random values, lengths 0..5000, random prev, every mode and codec agree', () => {
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 5000, size: 'max' }),
        prev,
        fc.constantFrom(...MODES),
        (list, p, mode) => {
          checkEverywhere(Uint32Array.from(list), mode, p);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('fast-check: runs of one-byte values (the 32-value fast path of the SIMD decoders), every mode and codec', () => {
    // Mostly bytes, now and then a wider value; delta modes get the running sum, so their deltas are these.
    const mostlyBytes = fc.oneof(
      { weight: 30, arbitrary: fc.integer({ min: 0, max: 0x7f }) },
      { weight: 1, arbitrary: value },
    );
    fc.assert(
      fc.property(
        fc.array(mostlyBytes, { minLength: 100, maxLength: 5000, size: 'max' }),
        prev,
        fc.constantFrom(...MODES),
        (steps, p, mode) => {
          const values = Uint32Array.from(steps);
          if (mode === Mode.Delta1234 || mode === Mode.ZigzagDelta1234) {
            let acc = p;
            for (let i = 0; i < values.length; i++) values[i] = acc = (acc + values[i]!) >>> 0;
          }
          checkEverywhere(values, mode, p);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('fast-check: the public API round-trips every variant', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 600, size: 'max' }), prev, (list, p) => {
        const values = Uint32Array.from(list);
        const signed = new Int32Array(values.buffer.slice(0));
        const n = values.length;
        for (const variant of ['1234', '0124'] as const) {
          const bytes = svb.encode(values, variant);
          expect(bytes.length).toBe(svb.encodedLength(values, variant));
          expect(bytes.length).toBeLessThanOrEqual(svb.maxEncodedLength(n));
          expect(svb.validate(bytes, n, variant)).toBe(true);
          expect(sameBytes(svb.decode(bytes, n, variant), values)).toBe(true);
        }
        expect(sameBytes(svb.deltaDecode(svb.deltaEncode(values, p), n, p), values)).toBe(true);
        const signedPrev = p | 0;
        expect(sameBytes(svb.zigzagDecode(svb.zigzagEncode(signed), n), signed)).toBe(true);
        expect(sameBytes(svb.zigzagDeltaDecode(svb.zigzagDeltaEncode(signed, signedPrev), n, signedPrev), signed)).toBe(
          true,
        );
      }),
      { numRuns: 150 },
    );
  });

  it("a delta stream chains: the second half decodes from the first half's last value", () => {
    const values = mixed(1000, 7).sort();
    const first = svb.deltaEncode(values.subarray(0, 500), 0);
    const second = svb.deltaEncode(values.subarray(500), values[499]);
    expect(sameBytes(svb.deltaDecode(second, 500, values[499]), values.slice(500))).toBe(true);
    expect(sameBytes(svb.deltaDecode(first, 500, 0), values.slice(0, 500))).toBe(true);
  });

  it('decodeInto reports the stream length, so streams laid end to end decode in turn', () => {
    const a = mixed(37, 1);
    const b = mixed(70, 2);
    const ea = svb.encode(a);
    const eb = svb.encode(b, '0124');
    const joined = new Uint8Array(ea.length + eb.length);
    joined.set(ea);
    joined.set(eb, ea.length);
    const outA = new Uint32Array(37);
    const outB = new Uint32Array(70);
    const used = svb.decodeInto(joined, 37, outA);
    expect(used).toBe(ea.length);
    expect(svb.decodeInto(joined.subarray(used), 70, outB, '0124')).toBe(eb.length);
    expect(sameBytes(outA, a)).toBe(true);
    expect(sameBytes(outB, b)).toBe(true);
  });

  it('the documented worked example (upstream README) and the size facts', () => {
    const example = Uint32Array.from([0, 100, 200, 300, 400, 500, 600, 700]);
    expect(Array.from(svb.encode(example))).toEqual([
      0x40, 0x55, 0x00, 0x64, 0xc8, 0x2c, 0x01, 0x90, 0x01, 0xf4, 0x01, 0x58, 0x02, 0xbc, 0x02,
    ]);
    expect(svb.maxEncodedLength(0)).toBe(0);
    expect(svb.maxEncodedLength(5)).toBe(2 + 20);
    // 0, 256, 65536, 16777216 take 1, 2, 3, 4 bytes in 1234; 0124 has no 3-byte form.
    const edges = Uint32Array.from([0, 256, 65536, 16777216]);
    expect(svb.encodedLength(edges)).toBe(1 + 10);
    expect(svb.encodedLength(edges, '0124')).toBe(1 + 0 + 2 + 4 + 4);
    expect(svb.encode(new Uint32Array(0)).length).toBe(0);
  });
});
