/**
 * The output-buffer (`…Into`) form of every Stream VByte call agrees with the
 * allocating form, which is built on pooled scratch memory: results must stay
 * independent of later calls and own exactly their bytes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as svb from '../../lib/svb/index';
import { sameBytes } from './codecs';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const i32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
// Past SMALL_BATCH, so both the JS twin and the addon (under the native backend) run.
const words = fc.array(u32, { maxLength: 600 }).map((a) => Uint32Array.from(a));
const ints = fc.array(i32, { maxLength: 600 }).map((a) => Int32Array.from(a));

function errorOf(fn: () => unknown): { code?: string } | undefined {
  try {
    fn();
  } catch (err) {
    return err as { code?: string };
  }
  return undefined;
}

describe('Stream VByte …Into forms', () => {
  it('encodeInto / decodeInto match encode / decode for both layouts', () => {
    fc.assert(
      fc.property(words, fc.constantFrom('1234' as const, '0124' as const), (values, variant) => {
        const bytes = svb.encode(values, variant);
        // Bytes past the stream are scratch for the encoder: start from noise.
        const out = new Uint8Array(svb.maxEncodedLength(values.length)).fill(0xa5);
        const length = svb.encodeInto(values, out, variant);
        expect(length).toBe(bytes.length);
        expect(sameBytes(out.subarray(0, length), bytes)).toBe(true);
        const decoded = new Uint32Array(values.length + 3).fill(7);
        expect(svb.decodeInto(bytes, values.length, decoded, variant)).toBe(bytes.length);
        expect(sameBytes(decoded.subarray(0, values.length), values)).toBe(true);
        expect(Array.from(decoded.subarray(values.length))).toEqual([7, 7, 7]);
      }),
      { numRuns: 150 },
    );
  });

  it('delta, zigzag and zigzag-delta Into forms match their allocating forms', () => {
    fc.assert(
      fc.property(words, ints, u32, (values, signed, prev) => {
        const out = new Uint8Array(svb.maxEncodedLength(Math.max(values.length, signed.length)));
        const delta = svb.deltaEncode(values, prev);
        expect(sameBytes(out.subarray(0, svb.deltaEncodeInto(values, out, prev)), delta)).toBe(true);
        const back = new Uint32Array(values.length);
        expect(svb.deltaDecodeInto(delta, values.length, back, prev)).toBe(delta.length);
        expect(sameBytes(back, values)).toBe(true);

        const zigzag = svb.zigzagEncode(signed);
        expect(sameBytes(out.subarray(0, svb.zigzagEncodeInto(signed, out)), zigzag)).toBe(true);
        const signedBack = new Int32Array(signed.length);
        expect(svb.zigzagDecodeInto(zigzag, signed.length, signedBack)).toBe(zigzag.length);
        expect(sameBytes(signedBack, signed)).toBe(true);

        const zd = svb.zigzagDeltaEncode(signed, prev | 0);
        expect(sameBytes(out.subarray(0, svb.zigzagDeltaEncodeInto(signed, out, prev | 0)), zd)).toBe(true);
        expect(svb.zigzagDeltaDecodeInto(zd, signed.length, signedBack, prev | 0)).toBe(zd.length);
        expect(sameBytes(signedBack, signed)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('allocating encodes own exactly their bytes and are not changed by later calls', () => {
    const a = Uint32Array.from({ length: 5000 }, (_, i) => i * 7919);
    const b = Uint32Array.from({ length: 9000 }, (_, i) => 0xffffffff - i);
    const first = svb.encode(a);
    const copy = first.slice();
    const second = svb.deltaEncode(b, 3);
    svb.zigzagEncode(new Int32Array(b.buffer));
    expect(first.byteOffset).toBe(0);
    expect(first.buffer.byteLength).toBe(first.length);
    expect(second.buffer.byteLength).toBe(second.length);
    expect(sameBytes(first, copy)).toBe(true);
    expect(sameBytes(svb.decode(first, a.length), a)).toBe(true);
    expect(sameBytes(svb.deltaDecode(second, b.length, 3), b)).toBe(true);
  });

  it('refuses an output that is too small or of the wrong type, before writing', () => {
    const values = Uint32Array.from({ length: 100 }, (_, i) => i * 1000);
    const short = new Uint8Array(svb.maxEncodedLength(100) - 1);
    for (const call of [
      () => svb.encodeInto(values, short),
      () => svb.deltaEncodeInto(values, short),
      () => svb.zigzagEncodeInto(new Int32Array(100), short),
      () => svb.zigzagDeltaEncodeInto(new Int32Array(100), short),
      () => svb.encodeInto(values, new Uint32Array(1000) as unknown as Uint8Array),
    ]) {
      expect(errorOf(call)?.code).toBe('ERR_INVALID_ARGUMENT');
    }
    expect(short.every((x) => x === 0)).toBe(true);
    const bytes = svb.encode(values);
    expect(errorOf(() => svb.deltaDecodeInto(bytes, 100, new Uint32Array(99)))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.zigzagDecodeInto(bytes, 100, new Uint32Array(100) as unknown as Int32Array))?.code).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(errorOf(() => svb.zigzagDeltaDecodeInto(bytes, 100, new Int32Array(50)))?.code).toBe('ERR_INVALID_ARGUMENT');
    expect(errorOf(() => svb.deltaDecodeInto(bytes.subarray(0, 10), 100, new Uint32Array(100)))?.code).toBe(
      'ERR_SVB_TRUNCATED',
    );
  });
});
