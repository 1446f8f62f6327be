/**
 * The codecs' two backends on the same arbitrary arguments (fast-check),
 * issue 29: whatever a caller passes to the batch LEB128 and Stream VByte
 * entry points, the native addon and the JS twin give the same result, or
 * the same ProfpackError (code, message, offset); never a bare TypeError,
 * never bytes from a wrong-typed input. Arguments go through the checks the
 * public API runs (shared by both backends), then to each backend's codec.
 * The single-value LEB128 functions (JS only) refuse wrong arguments with a
 * code as well.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isProfpackError } from '../../lib/errors';
import * as svb from '../../lib/svb/index';
import * as svbJs from '../../lib/svb/js';
import { Mode, maxEncodedLength } from '../../lib/svb/modes';
import type { SvbNative } from '../../lib/svb/native';
import * as varint from '../../lib/varint/index';
import { checkDecodeMany, checkEncodeManyInto } from '../../lib/varint/index';
import * as varintJs from '../../lib/varint/js';
import { VarintKind, kindInfo, type BatchArray } from '../../lib/varint/kinds';
import type { VarintNative } from '../../lib/varint/native';
import { nativeTwin } from './twins';

const varintNative = nativeTwin<VarintNative>('varint');
const svbNative = nativeTwin<SvbNative>('svb');
const RUNS = 600;

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; message: string; offset?: number };

function outcome(fn: () => unknown): Outcome {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    if (!isProfpackError(err)) throw new Error(`not a ProfpackError: ${String(err)}`, { cause: err });
    return { ok: false, code: err.code, message: err.message, offset: err.offset };
  }
}

const KINDS = [
  VarintKind.U32,
  VarintKind.U64,
  VarintKind.I32,
  VarintKind.I64,
  VarintKind.Zigzag32,
  VarintKind.Zigzag64,
];
const bigU64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const bigI64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });

/** A typed array of the kind's own type, with arbitrary content. */
function valuesOf(kind: VarintKind): fc.Arbitrary<BatchArray> {
  switch (kindInfo[kind].array) {
    case 'Uint32Array':
      return fc.array(fc.nat({ max: 0xffff_ffff }), { maxLength: 40 }).map((a) => Uint32Array.from(a));
    case 'Int32Array':
      return fc
        .array(fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }), { maxLength: 40 })
        .map((a) => Int32Array.from(a));
    case 'BigUint64Array':
      return fc.array(bigU64, { maxLength: 40 }).map((a) => BigUint64Array.from(a));
    default:
      return fc.array(bigI64, { maxLength: 40 }).map((a) => BigInt64Array.from(a));
  }
}

/** Anything a caller might pass where an array belongs. */
const wrongArray: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, undefined, 0, 1.5, 'abc', {}, [1, 2, 3]),
  fc.array(fc.double(), { maxLength: 8 }).map((a) => Float64Array.from(a)),
  fc.array(fc.integer({ min: -128, max: 127 }), { maxLength: 8 }).map((a) => Int8Array.from(a)),
  fc.array(fc.nat({ max: 255 }), { maxLength: 8 }).map((a) => Uint8Array.from(a)),
  fc.array(fc.nat({ max: 0xffff }), { maxLength: 8 }).map((a) => Uint16Array.from(a)),
  fc.array(fc.integer(), { maxLength: 8 }).map((a) => Int32Array.from(a)),
  fc.array(fc.nat(), { maxLength: 8 }).map((a) => Uint32Array.from(a)),
  fc.array(bigI64, { maxLength: 8 }).map((a) => BigInt64Array.from(a)),
  fc.array(bigU64, { maxLength: 8 }).map((a) => BigUint64Array.from(a)),
);
const anyIndex: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 64 }),
  fc.constantFrom(NaN, 1.5, -0, Infinity, '2', null),
);

function same(a: Outcome, b: Outcome, what: string): void {
  expect(
    JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    what,
  ).toBe(JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)));
}

describe('varint batches: native and JS twin on arbitrary arguments', () => {
  it('decode…Many: same values and end, or the same error', () => {
    const bytes = fc.oneof(fc.uint8Array({ maxLength: 80 }), wrongArray);
    fc.assert(
      fc.property(
        fc.constantFrom(...KINDS),
        bytes,
        anyIndex,
        anyIndex,
        fc.option(fc.oneof(wrongArray, fc.nat({ max: 90 })), { nil: undefined }),
        (kind, b, offset, count, outSpec) => {
          const run = (codec: VarintNative) =>
            outcome(() => {
              const out =
                typeof outSpec === 'number'
                  ? checkDecodeMany<BatchArray>(kind, new Uint8Array(0), 0, 0).constructor
                  : undefined;
              const given =
                typeof outSpec === 'number'
                  ? new (out as new (n: number) => BatchArray)(outSpec)
                  : (outSpec as BatchArray | undefined);
              const values = checkDecodeMany(kind, b as Uint8Array, offset as number, count as number, given);
              const end = codec.decodeMany(kind, b as Uint8Array, offset as number, count as number, values);
              return { end, values: Array.from(values as ArrayLike<number | bigint>).slice(0, count as number) };
            });
          same(run(varintJs), run(varintNative), `kind ${kind}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('encode…ManyInto: same bytes and end, or the same error', () => {
    const input = fc
      .constantFrom(...KINDS)
      .chain((kind) => fc.tuple(fc.constant(kind), fc.oneof(valuesOf(kind), wrongArray)));
    fc.assert(
      fc.property(input, fc.oneof(fc.nat({ max: 500 }), wrongArray), anyIndex, ([kind, values], outSpec, offset) => {
        const run = (codec: VarintNative) =>
          outcome(() => {
            const out = typeof outSpec === 'number' ? new Uint8Array(outSpec) : (outSpec as Uint8Array);
            checkEncodeManyInto(kind, values as BatchArray, out, offset as number);
            const end = codec.encodeMany(kind, values as BatchArray, out, offset as number);
            return { end, bytes: Array.from(out.subarray(offset as number, end)) };
          });
        same(run(varintJs), run(varintNative), `kind ${kind}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('the public encoders refuse wrong-typed values and outputs with ERR_INVALID_ARGUMENT (was: corrupt bytes on JS, TypeError on native)', () => {
    const out = new Uint8Array(100);
    const wrong = Float64Array.of(1.5, -1, NaN) as unknown as Uint32Array;
    for (const fn of [
      () => varint.encodeU32ManyInto(wrong, out),
      () => varint.encodeU64ManyInto(null as unknown as BigUint64Array, out),
      () => varint.encodeI32ManyInto(Int32Array.of(1), null as unknown as Uint8Array),
    ]) {
      const r = outcome(fn);
      expect(r).toMatchObject({ ok: false, code: 'ERR_INVALID_ARGUMENT' });
    }
    expect(out.every((b) => b === 0)).toBe(true);
  });
});

describe('single-value LEB128: wrong arguments are coded errors', () => {
  it('decoders and encoders on null, wrong types and bad offsets', () => {
    const calls: (() => unknown)[] = [
      () => varint.decodeU32(null as unknown as Uint8Array),
      () => varint.decodeU64(undefined as unknown as Uint8Array),
      () => varint.decodeI32([1, 2] as unknown as Uint8Array),
      () => varint.decodeI64(Float64Array.of(1) as unknown as Uint8Array),
      () => varint.decodeZigzag32(null as unknown as Uint8Array, 0),
      () => varint.decodeU32(Uint8Array.of(1), -1),
      () => varint.encodeU32(5, null as unknown as Uint8Array),
      () => varint.encodeU64(5n, Float64Array.of(0) as unknown as Uint8Array),
      () => varint.encodeI32(5, new Uint8Array(4), 1.5),
      () => varint.encodeI64(5n, new Uint8Array(4), -1),
      () => varint.encodeU32('5' as unknown as number, new Uint8Array(4)),
      () => varint.encodeU64(5 as unknown as bigint, new Uint8Array(10)),
      () => varint.encodeZigzag32(1, undefined as unknown as Uint8Array),
    ];
    for (const call of calls) expect(outcome(call)).toMatchObject({ ok: false, code: 'ERR_INVALID_ARGUMENT' });
  });
});

describe('Stream VByte: native and JS twin on arbitrary input', () => {
  const modes = [Mode.Plain1234, Mode.Delta1234, Mode.Zigzag1234, Mode.ZigzagDelta1234, Mode.Plain0124];
  const prev = fc.integer({ min: 0, max: 0xffff_ffff });
  it('encode and encodedLength agree byte for byte', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 0xffff_ffff }), { maxLength: 300 }),
        fc.constantFrom(...modes),
        prev,
        (list, mode, p) => {
          const values = Uint32Array.from(list);
          const run = (codec: typeof svbJs.jsCodec) =>
            outcome(() => {
              const out = new Uint8Array(maxEncodedLength(values.length) + 16);
              const n = codec.encode(values, out, mode, p);
              return { n, bytes: Array.from(out.subarray(0, n)), length: codec.encodedLength(values, mode, p) };
            });
          same(run(svbJs.jsCodec), run(svbNative), `mode ${mode}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('decode and validate agree on arbitrary bytes and counts', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.nat({ max: 200 }),
        fc.constantFrom(...modes),
        prev,
        (bytes, count, mode, p) => {
          const run = (codec: typeof svbJs.jsCodec) =>
            outcome(() => {
              const out = new Uint32Array(count);
              const used = codec.decode(bytes, count, out, mode, p);
              return { used, values: Array.from(out), valid: codec.validate(bytes, count, mode) };
            });
          same(run(svbJs.jsCodec), run(svbNative), `mode ${mode} count ${count}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('the public API refuses wrong arguments with ERR_INVALID_ARGUMENT before either backend runs', () => {
    fc.assert(
      fc.property(wrongArray, fc.nat({ max: 300 }), (wrong, n) => {
        fc.pre(!(wrong instanceof Uint32Array) && !(wrong instanceof Uint8Array));
        expect(outcome(() => svb.encode(wrong as Uint32Array))).toMatchObject({
          ok: false,
          code: 'ERR_INVALID_ARGUMENT',
        });
        expect(outcome(() => svb.decode(wrong as Uint8Array, 1))).toMatchObject({
          ok: false,
          code: 'ERR_INVALID_ARGUMENT',
        });
        expect(outcome(() => svb.decodeInto(new Uint8Array(n + 8), 1, wrong as Uint32Array))).toMatchObject({
          ok: false,
          code: 'ERR_INVALID_ARGUMENT',
        });
        expect(outcome(() => svb.encodeInto(new Uint32Array(n), wrong as Uint8Array))).toMatchObject({
          ok: false,
          code: 'ERR_INVALID_ARGUMENT',
        });
      }),
      { numRuns: 200 },
    );
  });
});
