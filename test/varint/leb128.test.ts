import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProfpackError } from '../../lib/errors';
import * as v from '../../lib/varint/index';
import { sharedPath } from '../support/environment';
import { sleb128, uleb128 } from '../support/reference-leb128';

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

function expectError(fn: () => unknown, code: string, offset?: number): ProfpackError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ProfpackError);
  const err = caught as ProfpackError;
  expect(err.code).toBe(code);
  if (offset !== undefined) expect(err.offset).toBe(offset);
  return err;
}

const u32 = fc.oneof(
  fc.integer({ min: 0, max: 0xffff_ffff }),
  fc.constantFrom(0, 127, 128, 16383, 16384, 0x0fff_ffff, 0x1000_0000, 0xffff_ffff),
);
const u64 = fc.oneof(
  fc.bigInt({ min: 0n, max: U64_MAX }),
  fc.constantFrom(0n, 127n, 128n, (1n << 63n) - 1n, 1n << 63n, U64_MAX),
);
const i64 = fc.oneof(
  fc.bigInt({ min: I64_MIN, max: I64_MAX }),
  fc.constantFrom(I64_MIN, I64_MAX, -1n, 0n, -64n, -65n, 63n, 64n),
);
const i32 = fc.oneof(
  fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }),
  fc.constantFrom(-0x8000_0000, 0x7fff_ffff, -1, 0, -64, -65, 63, 64),
);

describe('unsigned LEB128', () => {
  it('u32 round-trips over the full range with the reference bytes', () => {
    fc.assert(
      fc.property(u32, fc.nat({ max: 8 }), (value, pad) => {
        const bytes = v.encodeU32ToBytes(value);
        expect([...bytes]).toEqual(uleb128(BigInt(value)));
        expect(v.encodingLengthU32(value)).toBe(bytes.length);
        const framed = new Uint8Array(pad + bytes.length + 3);
        framed.set(bytes, pad);
        expect(v.decodeU32(framed, pad)).toEqual({ value, length: bytes.length });
      }),
      { numRuns: 2000 },
    );
  });

  it('u64 round-trips over the full range, 2^64-1 included', () => {
    fc.assert(
      fc.property(u64, (value) => {
        const bytes = v.encodeU64ToBytes(value);
        expect([...bytes]).toEqual(uleb128(value));
        expect(v.encodingLengthU64(value)).toBe(bytes.length);
        expect(v.decodeU64(bytes)).toEqual({ value, length: bytes.length });
      }),
      { numRuns: 2000 },
    );
    expect([...v.encodeU64ToBytes(U64_MAX)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });

  it('refuses values outside the width instead of wrapping them', () => {
    expectError(() => v.encodeU32ToBytes(2 ** 32), 'ERR_INVALID_ARGUMENT');
    expectError(() => v.encodeU32ToBytes(-1), 'ERR_INVALID_ARGUMENT');
    expectError(() => v.encodeU64ToBytes(U64_MAX + 1n), 'ERR_INVALID_ARGUMENT');
  });
});

describe('signed LEB128 (seed 001) and zigzag', () => {
  it('i64 round-trips, extremes included, with the reference bytes', () => {
    fc.assert(
      fc.property(i64, (value) => {
        const bytes = v.encodeI64ToBytes(value);
        expect([...bytes]).toEqual(sleb128(value));
        expect(v.encodingLengthI64(value)).toBe(bytes.length);
        expect(v.decodeI64(bytes)).toEqual({ value, length: bytes.length });
      }),
      { numRuns: 2000 },
    );
  });

  it('i32 round-trips with the reference bytes', () => {
    fc.assert(
      fc.property(i32, (value) => {
        const bytes = v.encodeI32ToBytes(value);
        expect([...bytes]).toEqual(sleb128(BigInt(value)));
        expect(v.decodeI32(bytes)).toEqual({ value, length: bytes.length });
      }),
      { numRuns: 2000 },
    );
  });

  it('zigzag maps small magnitudes to small codes and back', () => {
    fc.assert(
      fc.property(i32, (value) => {
        const code = v.zigzagEncode32(value);
        expect(code).toBe(value >= 0 ? value * 2 : -value * 2 - 1);
        expect(v.zigzagDecode32(code)).toBe(value);
        const bytes = v.encodeZigzag32ToBytes(value);
        expect(v.decodeZigzag32(bytes)).toEqual({ value, length: bytes.length });
      }),
    );
    fc.assert(
      fc.property(i64, (value) => {
        const code = v.zigzagEncode64(value);
        expect(code).toBe(value >= 0n ? value * 2n : -value * 2n - 1n);
        expect(v.zigzagDecode64(code)).toBe(value);
      }),
    );
  });
});

describe('bad input', () => {
  it('a varint cut off by the end of the buffer is ERR_VARINT_TRUNCATED at its start', () => {
    fc.assert(
      fc.property(
        u64.filter((x) => x >= 128n),
        fc.nat({ max: 5 }),
        (value, pad) => {
          const bytes = v.encodeU64ToBytes(value);
          const cut = new Uint8Array(pad + bytes.length - 1);
          cut.set(bytes.subarray(0, bytes.length - 1), pad);
          expectError(() => v.decodeU64(cut, pad), 'ERR_VARINT_TRUNCATED', pad);
          expectError(() => v.decodeU64Many(cut, pad, 1), 'ERR_VARINT_TRUNCATED', pad);
        },
      ),
    );
    expectError(() => v.decodeU32(new Uint8Array([0x80, 0x80])), 'ERR_VARINT_TRUNCATED', 0);
    expectError(() => v.decodeU32(new Uint8Array(0)), 'ERR_VARINT_TRUNCATED', 0);
  });

  it('too many bytes or bits beyond the width is ERR_VARINT_OVERFLOW', () => {
    expectError(() => v.decodeU32(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x10])), 'ERR_VARINT_OVERFLOW', 0);
    expectError(() => v.decodeU32(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x00])), 'ERR_VARINT_OVERFLOW', 0);
    expectError(() => v.decodeU64(new Uint8Array([...Array(9).fill(0xff), 0x02])), 'ERR_VARINT_OVERFLOW', 0);
    expectError(() => v.decodeU64(new Uint8Array([...Array(10).fill(0x80), 0x00])), 'ERR_VARINT_OVERFLOW', 0);
    expectError(() => v.decodeI64(new Uint8Array([...Array(9).fill(0xff), 0x01])), 'ERR_VARINT_OVERFLOW', 0);
    expectError(() => v.decodeI32(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x17])), 'ERR_VARINT_OVERFLOW', 0);
    // The widest legal values still decode.
    expect(v.decodeU32(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])).value).toBe(0xffff_ffff);
    expect(v.decodeI32(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x78])).value).toBe(-0x8000_0000);
    expect(v.decodeI64(new Uint8Array([...Array(9).fill(0x80), 0x7f])).value).toBe(I64_MIN);
  });

  it('every batch kind reports the same code and offset as the single decoder', () => {
    const kinds = [
      [v.decodeU32Many, v.decodeU32],
      [v.decodeU64Many, v.decodeU64],
      [v.decodeI32Many, v.decodeI32],
      [v.decodeI64Many, v.decodeI64],
      [v.decodeZigzag32Many, v.decodeZigzag32],
    ] as const;
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 12 }), (bytes, count) => {
        for (const [many, single] of kinds) {
          let singleError: ProfpackError | undefined;
          let pos = 0;
          const values: unknown[] = [];
          try {
            for (let i = 0; i < count; i++) {
              const d = single(bytes, pos);
              values.push(d.value);
              pos += d.length;
            }
          } catch (err) {
            singleError = err as ProfpackError;
          }
          if (singleError === undefined) {
            const got = many(bytes, 0, count);
            expect([...got.values]).toEqual(values);
            expect(got.end).toBe(pos);
          } else if (count <= bytes.length) {
            const err = expectError(() => many(bytes, 0, count), singleError.code);
            expect(err.offset).toBe(singleError.offset);
          } else {
            expectError(() => many(bytes, 0, count), 'ERR_VARINT_TRUNCATED');
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('known bytes from a CPython-written Tachyon file', () => {
  it('decodes the first frame-table entry of s01 (00 01 14 00 08 08 ff)', () => {
    const file = readFileSync(sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin'));
    const frameTableOffset = Number(file.readBigUInt64LE(48));
    expect(frameTableOffset).toBe(0xfc);
    const entry = file.subarray(frameTableOffset, frameTableOffset + 7);
    expect([...entry]).toEqual([0x00, 0x01, 0x14, 0x00, 0x08, 0x08, 0xff]);
    const { values, end } = v.decodeU32Many(entry, 0, 2);
    expect([...values]).toEqual([0, 1]); // filename "app.py", funcname "main"
    const signed = v.decodeZigzag32Many(entry, end, 4);
    expect([...signed.values]).toEqual([10, 0, 4, 4]); // line 10, end delta 0, column 4, end-column delta 4
    expect(entry[signed.end]).toBe(0xff); // no opcode
    // And our encoder writes those exact bytes.
    const out = new Uint8Array(16);
    let pos = v.encodeU32(0, out, 0);
    pos = v.encodeU32(1, out, pos);
    for (const x of [10, 0, 4, 4]) pos = v.encodeZigzag32(x, out, pos);
    expect([...out.subarray(0, pos), 0xff]).toEqual([...entry]);
  });
});
