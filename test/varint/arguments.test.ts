// Batch functions of every codec refuse wrong arguments with
// ERR_INVALID_ARGUMENT and the same message on both backends (issue 15):
// before, the native twin threw a raw TypeError and the JS twin wrote an
// unterminated varint for a Float64Array or truncated 300 to 44 in a Uint8Array.
import { describe, expect, it } from 'vitest';
import { decodeVarintTable, lookupVarint, svb, varint } from '../../lib/index';
import { itRefusesArguments } from '../support/refusals';

const encoded300 = varint.encodeU32Many(Uint32Array.of(300));

const cases: [string, () => unknown, string][] = [
  [
    'encodeU32Many(Float64Array [1.5, -1, NaN])',
    () => varint.encodeU32Many(Float64Array.of(1.5, -1, NaN) as unknown as Uint32Array),
    'values must be a Uint32Array, not Float64Array',
  ],
  [
    'encodeU64Many(number[])',
    () => varint.encodeU64Many([1, 2] as unknown as BigUint64Array),
    'values must be a BigUint64Array, not object',
  ],
  [
    'encodeI32Many(Uint32Array)',
    () => varint.encodeI32Many(Uint32Array.of(1) as unknown as Int32Array),
    'values must be a Int32Array, not Uint32Array',
  ],
  [
    'encodeZigzag64Many(null)',
    () => varint.encodeZigzag64Many(null as unknown as BigInt64Array),
    'values must be a BigInt64Array, not null',
  ],
  [
    'decodeU32Many(…, Uint8Array out) with 300',
    () => varint.decodeU32Many(encoded300, 0, 1, new Uint8Array(1) as unknown as Uint32Array),
    'out must be a Uint32Array, not Uint8Array',
  ],
  [
    'decodeU64Many(…, BigInt64Array out)',
    () => varint.decodeU64Many(encoded300, 0, 1, new BigInt64Array(1) as unknown as BigUint64Array),
    'out must be a BigUint64Array, not BigInt64Array',
  ],
  [
    'decodeI32Many(…, out too short)',
    () => varint.decodeI32Many(encoded300, 0, 1, new Int32Array(0)),
    'out holds 0 values, fewer than 1',
  ],
  [
    'decodeZigzag32Many(…, Float32Array out)',
    () => varint.decodeZigzag32Many(encoded300, 0, 1, new Float32Array(1) as unknown as Int32Array),
    'out must be a Int32Array, not Float32Array',
  ],
  [
    'svb.encode(Float64Array)',
    () => svb.encode(Float64Array.of(1.5) as unknown as Uint32Array),
    'values must be a Uint32Array',
  ],
  [
    'svb.decodeInto(…, Uint8Array out)',
    () => svb.decodeInto(svb.encode(Uint32Array.of(300)), 1, new Uint8Array(1) as unknown as Uint32Array),
    'out must be a Uint32Array',
  ],
  ['decodeVarintTable(null)', () => decodeVarintTable(null as unknown as Uint8Array), 'bytes must be a Uint8Array'],
  ['lookupVarint(…, pc 1.5)', () => lookupVarint(new Uint8Array(2), 1.5), 'pc must be an integer, got 1.5'],
];

describe('batch arguments', () => {
  itRefusesArguments(cases);

  it('a right out array still decodes in place', () => {
    const out = new Uint32Array(2);
    const { values, end } = varint.decodeU32Many(encoded300, 0, 1, out);
    expect(values).toBe(out);
    expect([out[0], end]).toEqual([300, 2]);
  });
});
