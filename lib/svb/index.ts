/**
 * Stream VByte (shared/notes/streamvbyte.md): byte-exact with the reference C
 * library for the 1234 and 0124 layouts, delta and zigzag-delta coding. The
 * count (and `prev`) are not stored in the stream: the caller keeps them.
 *
 * Each call runs on the addon (SIMD kernels, see backend.features.simd) or
 * on the JS twin: below SMALL_BATCH values crossing N-API costs more than the
 * JS loop (measured by `npm run bench -- svb threshold`, see bench/RESULTS.md).
 */
import { ErrorCode, ProfpackError, invalidArgument } from '../errors';
import { Scratch } from '../scratch';
import * as js from './js';
import { Mode, maxEncodedLength as maxLength, type SvbCodec } from './modes';
import { svbNative } from './native';

export type Variant = '1234' | '0124';

/**
 * Batches below these sizes go to the JS twin even when the addon is loaded.
 * Measured crossovers on the 2-core EPYC VM of bench/RESULTS.md ("svb",
 * small batches): a native call with two typed arrays costs ~0.2 µs of fixed
 * overhead, the JS loop 5-15 ns per value.
 */
export const SMALL_BATCH = { encode: 32, decode: 48 } as const;

function codecFor(count: number, threshold: number): SvbCodec {
  return svbNative !== null && count >= threshold ? svbNative : js.jsCodec;
}

function variantMode(variant: Variant): Mode {
  if (variant === '1234') return Mode.Plain1234;
  if (variant === '0124') return Mode.Plain0124;
  throw invalidArgument(`Stream VByte variant must be '1234' or '0124', not ${String(variant)}`, "'1234' | '0124'");
}

function checkUint32Array(values: unknown, what = 'values'): asserts values is Uint32Array {
  if (!(values instanceof Uint32Array)) throw invalidArgument(`${what} must be a Uint32Array`, 'Uint32Array');
}

function checkInt32Array(values: unknown): asserts values is Int32Array {
  if (!(values instanceof Int32Array)) throw invalidArgument('values must be an Int32Array', 'Int32Array');
}

/** `prev` as the uint32 bit pattern: any integer in [-2^31, 2^32). */
function prevBits(prev: number): number {
  if (!Number.isInteger(prev) || prev < -0x80000000 || prev > 0xffffffff) {
    throw invalidArgument(`prev must be an integer in [-2^31, 2^32), got ${prev}`, 'a 32-bit integer');
  }
  return prev >>> 0;
}

/** Validates before allocating: the control bytes alone must fit in the input. */
function checkStream(bytes: unknown, count: number): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw invalidArgument('bytes must be a Uint8Array', 'Uint8Array');
  if (!Number.isSafeInteger(count) || count < 0) {
    throw invalidArgument(`count must be a non-negative integer, got ${count}`, 'a non-negative integer');
  }
  const control = Math.ceil(count / 4);
  if (bytes.length < control) {
    throw new ProfpackError(
      `Stream VByte stream of ${bytes.length} bytes is shorter than the ${control} control bytes of ${count} values`,
      { code: ErrorCode.SVB_TRUNCATED, offset: bytes.length, expected: `${control} control bytes` },
    );
  }
}

/** Worst-case output of the allocating encodes (lib/scratch.ts says why). */
const encodeScratch = new Scratch(32 << 20);

function encodeWith(values: Uint32Array, mode: Mode, prev: number): Uint8Array {
  const need = maxLength(values.length);
  const out = encodeScratch.bytes(need) ?? new Uint8Array(need);
  return out.slice(0, codecFor(values.length, SMALL_BATCH.encode).encode(values, out, mode, prev));
}

function encodeIntoWith(values: Uint32Array, out: unknown, mode: Mode, prev: number): number {
  if (!(out instanceof Uint8Array)) throw invalidArgument('out must be a Uint8Array', 'Uint8Array');
  const need = maxLength(values.length);
  if (out.length < need)
    throw invalidArgument(
      `out holds ${out.length} bytes, fewer than maxEncodedLength(${values.length}) = ${need}`,
      `at least ${need} bytes`,
    );
  return codecFor(values.length, SMALL_BATCH.encode).encode(values, out, mode, prev);
}

function decodeWith(bytes: Uint8Array, count: number, out: Uint32Array, mode: Mode, prev: number): number {
  return codecFor(count, SMALL_BATCH.decode).decode(bytes, count, out, mode, prev);
}

function checkOut(out: unknown, count: number, type: typeof Uint32Array | typeof Int32Array): void {
  if (!(out instanceof type))
    throw invalidArgument(`out must be a${type === Int32Array ? 'n' : ''} ${type.name}`, type.name);
  if (out.length < count)
    throw invalidArgument(`out holds ${out.length} values, fewer than ${count}`, `at least ${count} values`);
}

function asWords(values: Int32Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, values.length);
}

/** Worst-case encoded size of n values: ceil(n/4) + 4n. */
export function maxEncodedLength(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0)
    throw invalidArgument(`n must be a non-negative integer, got ${n}`, 'a non-negative integer');
  return maxLength(n);
}

/**
 * Encodes `values`; the result owns exactly the encoded bytes. For a loop of
 * calls, encodeInto() with one buffer of maxEncodedLength(n) avoids the copy.
 */
export function encode(values: Uint32Array, variant: Variant = '1234'): Uint8Array {
  checkUint32Array(values);
  return encodeWith(values, variantMode(variant), 0);
}

/**
 * Encodes into out[0..), which must hold maxEncodedLength(values.length)
 * bytes (the reference C library's contract); returns the encoded length.
 * Bytes of `out` past that length may be overwritten (wide stores). The same
 * holds for every other `…EncodeInto` below.
 */
export function encodeInto(values: Uint32Array, out: Uint8Array, variant: Variant = '1234'): number {
  const mode = variantMode(variant);
  checkUint32Array(values);
  return encodeIntoWith(values, out, mode, 0);
}

/** Decodes `count` values; ERR_SVB_TRUNCATED if the stream is shorter than its control bytes demand. */
export function decode(bytes: Uint8Array, count: number, variant: Variant = '1234'): Uint32Array {
  const mode = variantMode(variant);
  checkStream(bytes, count);
  const out = new Uint32Array(count);
  decodeWith(bytes, count, out, mode, 0);
  return out;
}

/**
 * Decodes `count` values into out[0..count); returns how many bytes of
 * `bytes` the stream took (so streams can be laid end to end). On
 * ERR_SVB_TRUNCATED `out` may be partly written. The same holds for every
 * other `…DecodeInto` below.
 */
export function decodeInto(bytes: Uint8Array, count: number, out: Uint32Array, variant: Variant = '1234'): number {
  const mode = variantMode(variant);
  checkStream(bytes, count);
  checkOut(out, count, Uint32Array);
  return decodeWith(bytes, count, out, mode, 0);
}

/** 1234 encoding of values[i] - values[i-1] mod 2^32, values[-1] = prev (not stored). */
export function deltaEncode(values: Uint32Array, prev = 0): Uint8Array {
  checkUint32Array(values);
  return encodeWith(values, Mode.Delta1234, prevBits(prev));
}

export function deltaEncodeInto(values: Uint32Array, out: Uint8Array, prev = 0): number {
  checkUint32Array(values);
  return encodeIntoWith(values, out, Mode.Delta1234, prevBits(prev));
}

/** Inverse of deltaEncode: a running sum mod 2^32 from `prev`. */
export function deltaDecode(bytes: Uint8Array, count: number, prev = 0): Uint32Array {
  const bits = prevBits(prev);
  checkStream(bytes, count);
  const out = new Uint32Array(count);
  decodeWith(bytes, count, out, Mode.Delta1234, bits);
  return out;
}

export function deltaDecodeInto(bytes: Uint8Array, count: number, out: Uint32Array, prev = 0): number {
  const bits = prevBits(prev);
  checkStream(bytes, count);
  checkOut(out, count, Uint32Array);
  return decodeWith(bytes, count, out, Mode.Delta1234, bits);
}

/** 1234 encoding of zigzag(values[i]) = (x << 1) ^ (x >> 31). */
export function zigzagEncode(values: Int32Array): Uint8Array {
  checkInt32Array(values);
  return encodeWith(asWords(values), Mode.Zigzag1234, 0);
}

export function zigzagEncodeInto(values: Int32Array, out: Uint8Array): number {
  checkInt32Array(values);
  return encodeIntoWith(asWords(values), out, Mode.Zigzag1234, 0);
}

export function zigzagDecode(bytes: Uint8Array, count: number): Int32Array {
  checkStream(bytes, count);
  const out = new Int32Array(count);
  decodeWith(bytes, count, asWords(out), Mode.Zigzag1234, 0);
  return out;
}

export function zigzagDecodeInto(bytes: Uint8Array, count: number, out: Int32Array): number {
  checkStream(bytes, count);
  checkOut(out, count, Int32Array);
  return decodeWith(bytes, count, asWords(out), Mode.Zigzag1234, 0);
}

/** 1234 encoding of zigzag(values[i] - values[i-1]), the difference wrapping mod 2^32, values[-1] = prev. */
export function zigzagDeltaEncode(values: Int32Array, prev = 0): Uint8Array {
  checkInt32Array(values);
  return encodeWith(asWords(values), Mode.ZigzagDelta1234, prevBits(prev));
}

export function zigzagDeltaEncodeInto(values: Int32Array, out: Uint8Array, prev = 0): number {
  checkInt32Array(values);
  return encodeIntoWith(asWords(values), out, Mode.ZigzagDelta1234, prevBits(prev));
}

export function zigzagDeltaDecode(bytes: Uint8Array, count: number, prev = 0): Int32Array {
  const bits = prevBits(prev);
  checkStream(bytes, count);
  const out = new Int32Array(count);
  decodeWith(bytes, count, asWords(out), Mode.ZigzagDelta1234, bits);
  return out;
}

export function zigzagDeltaDecodeInto(bytes: Uint8Array, count: number, out: Int32Array, prev = 0): number {
  const bits = prevBits(prev);
  checkStream(bytes, count);
  checkOut(out, count, Int32Array);
  return decodeWith(bytes, count, asWords(out), Mode.ZigzagDelta1234, bits);
}

/** Exact encoded size of `values` (control plus data bytes). */
export function encodedLength(values: Uint32Array, variant: Variant = '1234'): number {
  const mode = variantMode(variant);
  checkUint32Array(values);
  return codecFor(values.length, SMALL_BATCH.decode).encodedLength(values, mode, 0);
}

/** True only when `bytes` is exactly as long as the control bytes of `count` values say. */
export function validate(bytes: Uint8Array, count: number, variant: Variant = '1234'): boolean {
  const mode = variantMode(variant);
  if (!(bytes instanceof Uint8Array)) throw invalidArgument('bytes must be a Uint8Array', 'Uint8Array');
  if (!Number.isSafeInteger(count) || count < 0) {
    throw invalidArgument(`count must be a non-negative integer, got ${count}`, 'a non-negative integer');
  }
  return codecFor(Math.ceil(count / 4), SMALL_BATCH.decode).validate(bytes, count, mode);
}
