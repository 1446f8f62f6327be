import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import * as v from '../../lib/varint/index';
import * as js from '../../lib/varint/js';
import { VarintKind } from '../../lib/varint/kinds';
import { requireAddon } from '../support/addon';

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

// Values skewed to short encodings, as real profiles are, with the extremes mixed in.
const u32s = fc.array(
  fc.oneof(
    fc.integer({ min: 0, max: 127 }),
    fc.integer({ min: 0, max: 0x3fff }),
    fc.integer({ min: 0, max: 0xffff_ffff }),
  ),
  { maxLength: 300 },
);
const u64s = fc.array(fc.oneof(fc.bigInt({ min: 0n, max: 127n }), fc.bigInt({ min: 0n, max: U64_MAX })), {
  maxLength: 200,
});
const i32s = fc.array(fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }), { maxLength: 300 });
const i64s = fc.array(fc.bigInt({ min: I64_MIN, max: I64_MAX }), { maxLength: 200 });

describe('batch LEB128 on the ' + backend.name + ' backend', () => {
  it('u32 batch encode equals the single encoder and decodes back', () => {
    fc.assert(
      fc.property(u32s, (values) => {
        const arr = Uint32Array.from(values);
        const bytes = v.encodeU32Many(arr);
        expect([...bytes]).toEqual(values.flatMap((x) => [...v.encodeU32ToBytes(x)]));
        const decoded = v.decodeU32Many(bytes, 0, arr.length);
        expect(decoded.values).toEqual(arr);
        expect(decoded.end).toBe(bytes.length);
      }),
    );
  });

  it('u64, i32, i64 and zigzag batches round-trip', () => {
    fc.assert(
      fc.property(u64s, i32s, i64s, (a, b, c) => {
        const big = BigUint64Array.from(a);
        expect(v.decodeU64Many(v.encodeU64Many(big), 0, big.length).values).toEqual(big);
        const small = Int32Array.from(b);
        expect(v.decodeI32Many(v.encodeI32Many(small), 0, small.length).values).toEqual(small);
        expect(v.decodeZigzag32Many(v.encodeZigzag32Many(small), 0, small.length).values).toEqual(small);
        const signed = BigInt64Array.from(c);
        expect(v.decodeI64Many(v.encodeI64Many(signed), 0, signed.length).values).toEqual(signed);
        expect(v.decodeZigzag64Many(v.encodeZigzag64Many(signed), 0, signed.length).values).toEqual(signed);
        expect([...v.encodeI64Many(signed)]).toEqual(c.flatMap((x) => [...v.encodeI64ToBytes(x)]));
      }),
    );
  });

  it('runs of one-byte values (the 64-at-a-time path) among longer ones, cut at any count', () => {
    // Written here 7 bits at a time, not by profpack: the values are the truth.
    const leb = (x: number): number[] => {
      const out: number[] = [];
      for (; x >= 0x80; x = Math.floor(x / 0x80)) out.push((x % 0x80) | 0x80);
      out.push(x);
      return out;
    };
    const runs = fc.array(
      fc.oneof(
        fc.array(fc.integer({ min: 0, max: 127 }), { minLength: 60, maxLength: 200 }),
        fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { maxLength: 4 }),
      ),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(runs, fc.nat(), fc.nat(3), (parts, cut, offset) => {
        const values = parts.flat();
        const bytes = Uint8Array.from([...Array<number>(offset).fill(0x80 | 5), ...values.flatMap(leb)]);
        const count = values.length === 0 ? 0 : cut % (values.length + 1);
        const got = v.decodeU32Many(bytes, offset, count);
        expect([...got.values]).toEqual(values.slice(0, count));
        expect(got.end).toBe(offset + values.slice(0, count).flatMap(leb).length);
        const zig = v.decodeZigzag32Many(bytes, offset, count).values;
        expect([...zig]).toEqual(values.slice(0, count).map((u) => (u >>> 1) ^ -(u & 1)));
      }),
    );
  });

  it('decodes into a caller array and from an offset', () => {
    const bytes = v.encodeU32Many(Uint32Array.from([7, 300, 70000]));
    const framed = new Uint8Array(bytes.length + 4);
    framed.set(bytes, 4);
    const out = new Uint32Array(5);
    const got = v.decodeU32Many(framed, 4, 3, out);
    expect(got.values).toBe(out);
    expect([...out]).toEqual([7, 300, 70000, 0, 0]);
    expect(got.end).toBe(framed.length);
  });
});

describe('native and JS twins agree byte for byte', () => {
  const addon = requireAddon();
  const cases: Array<[VarintKind, fc.Arbitrary<Uint32Array | Int32Array | BigUint64Array | BigInt64Array>]> = [
    [VarintKind.U32, u32s.map((x) => Uint32Array.from(x))],
    [VarintKind.U64, u64s.map((x) => BigUint64Array.from(x))],
    [VarintKind.I32, i32s.map((x) => Int32Array.from(x))],
    [VarintKind.Zigzag32, i32s.map((x) => Int32Array.from(x))],
    [VarintKind.I64, i64s.map((x) => BigInt64Array.from(x))],
    [VarintKind.Zigzag64, i64s.map((x) => BigInt64Array.from(x))],
  ];
  for (const [kind, arb] of cases) {
    it(`kind ${VarintKind[kind]}: encode and decode`, () => {
      fc.assert(
        fc.property(arb, (values) => {
          const a = new Uint8Array(values.length * 10);
          const b = new Uint8Array(values.length * 10);
          const endNative = addon.varint.encodeMany(kind, values, a, 0);
          const endJs = js.encodeMany(kind, values, b, 0);
          expect(endNative).toBe(endJs);
          expect(a).toEqual(b);
          const outN = new (values.constructor as new (n: number) => typeof values)(values.length);
          const outJ = new (values.constructor as new (n: number) => typeof values)(values.length);
          expect(addon.varint.decodeMany(kind, a, 0, values.length, outN)).toBe(
            js.decodeMany(kind, a, 0, values.length, outJ),
          );
          expect(outN).toEqual(values);
          expect(outJ).toEqual(values);
        }),
      );
    });
  }

  it('random bytes: same values or the same error code and offset', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 16 }),
        (bytes, kind, count) => {
          const mk = (): Uint32Array | Int32Array | BigUint64Array | BigInt64Array =>
            kind === VarintKind.U32
              ? new Uint32Array(count)
              : kind === VarintKind.U64
                ? new BigUint64Array(count)
                : kind === VarintKind.I64 || kind === VarintKind.Zigzag64
                  ? new BigInt64Array(count)
                  : new Int32Array(count);
          const run = (f: () => number): { end?: number; code?: string; offset?: number } => {
            try {
              return { end: f() };
            } catch (err) {
              return { code: (err as { code: string }).code, offset: (err as { offset: number }).offset };
            }
          };
          const outN = mk();
          const outJ = mk();
          const n = run(() => addon.varint.decodeMany(kind, bytes, 0, count, outN));
          const j = run(() => js.decodeMany(kind, bytes, 0, count, outJ));
          expect(n).toEqual(j);
          if (n.end !== undefined) expect(outN).toEqual(outJ);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('batch LEB128 on mostly 5-byte data (whole windows of twelve 5-byte values)', () => {
  // Values >= 2^28 take 5 bytes; a few shorter ones break the runs at random places.
  const wide = fc.array(
    fc.oneof(
      { weight: 15, arbitrary: fc.integer({ min: 0x1000_0000, max: 0xffff_ffff }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xfff_ffff }) },
    ),
    { minLength: 20, maxLength: 400 },
  );

  it('u32 and zigzag32 decode back, from any offset', () => {
    fc.assert(
      fc.property(wide, fc.integer({ min: 0, max: 7 }), (values, pad) => {
        const arr = Uint32Array.from(values);
        const bytes = v.encodeU32Many(arr);
        const framed = new Uint8Array(pad + bytes.length);
        framed.set(bytes, pad);
        const got = v.decodeU32Many(framed, pad, arr.length);
        expect(got.values).toEqual(arr);
        expect(got.end).toBe(framed.length);
        const signed = new Int32Array(arr.buffer);
        expect(v.decodeZigzag32Many(v.encodeZigzag32Many(signed), 0, signed.length).values).toEqual(signed);
      }),
    );
  });

  it('a 5th byte with more than 4 bits inside a run is ERR_VARINT_OVERFLOW at its varint, on both twins', () => {
    const addon = requireAddon();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 29 }), fc.integer({ min: 0x10, max: 0x7f }), (bad, fifth) => {
        const values = Uint32Array.from({ length: 30 }, (_, i) => 0xf000_0000 + i * 0x0012_3456);
        const bytes = v.encodeU32Many(values);
        bytes[5 * bad + 4] = fifth;
        for (const decode of [
          (out: Uint32Array) => addon.varint.decodeMany(VarintKind.U32, bytes, 0, 30, out),
          (out: Uint32Array) => js.decodeMany(VarintKind.U32, bytes, 0, 30, out),
        ]) {
          let caught: { code?: string; offset?: number } | undefined;
          try {
            decode(new Uint32Array(30));
          } catch (err) {
            caught = err as { code?: string; offset?: number };
          }
          expect(caught?.code).toBe('ERR_VARINT_OVERFLOW');
          expect(caught?.offset).toBe(5 * bad);
        }
      }),
    );
  });
});

describe('batch LEB128 output-buffer forms', () => {
  it('every encode…ManyInto writes what encode…Many returns, at the offset, and returns the end', () => {
    fc.assert(
      fc.property(u32s, i32s, i64s, fc.integer({ min: 0, max: 9 }), (a, b, c, offset) => {
        const cases: Array<[Uint8Array, (out: Uint8Array, at: number) => number, number]> = [
          [
            v.encodeU32Many(Uint32Array.from(a)),
            (out, at) => v.encodeU32ManyInto(Uint32Array.from(a), out, at),
            a.length * 5,
          ],
          [
            v.encodeI32Many(Int32Array.from(b)),
            (out, at) => v.encodeI32ManyInto(Int32Array.from(b), out, at),
            b.length * 5,
          ],
          [
            v.encodeZigzag32Many(Int32Array.from(b)),
            (out, at) => v.encodeZigzag32ManyInto(Int32Array.from(b), out, at),
            b.length * 5,
          ],
          [
            v.encodeI64Many(BigInt64Array.from(c)),
            (out, at) => v.encodeI64ManyInto(BigInt64Array.from(c), out, at),
            c.length * 10,
          ],
          [
            v.encodeZigzag64Many(BigInt64Array.from(c)),
            (out, at) => v.encodeZigzag64ManyInto(BigInt64Array.from(c), out, at),
            c.length * 10,
          ],
          [
            v.encodeU64Many(BigUint64Array.from(c, (x) => BigInt.asUintN(64, x))),
            (out, at) =>
              v.encodeU64ManyInto(
                BigUint64Array.from(c, (x) => BigInt.asUintN(64, x)),
                out,
                at,
              ),
            c.length * 10,
          ],
        ];
        for (const [expected, into, worst] of cases) {
          expect(expected.buffer.byteLength).toBe(expected.length);
          const out = new Uint8Array(offset + worst).fill(0xee);
          const end = into(out, offset);
          expect(end).toBe(offset + expected.length);
          expect(out.subarray(offset, end)).toEqual(expected);
          expect(out.subarray(0, offset).every((x) => x === 0xee)).toBe(true);
          if (worst > 0)
            expect(() => into(new Uint8Array(offset + worst - 1), offset)).toThrow(
              expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
            );
        }
      }),
    );
  });

  it('allocating encodes are not changed by later calls', () => {
    const first = v.encodeU32Many(Uint32Array.from({ length: 1000 }, (_, i) => i * 99991));
    const copy = first.slice();
    v.encodeU32Many(Uint32Array.from({ length: 2000 }, (_, i) => 0xffff_ffff - i));
    expect(first).toEqual(copy);
    expect(() => v.encodeU32ManyInto(new Uint32Array(1), new Uint8Array(5), 6)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });
});
