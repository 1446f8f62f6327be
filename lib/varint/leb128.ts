/**
 * LEB128 (seed 001) for single values: unsigned u32 (number) and u64 (bigint),
 * signed (as GHC's putSLEB128/getSLEB128), and zigzag as Tachyon's frame table
 * uses it. Single values are always decoded in JS: crossing N-API for one
 * value costs more than decoding it. Batches are in index.ts.
 */
import { ErrorCode, ProfpackError } from '../errors';

export interface Decoded<T> {
  value: T;
  /** Bytes consumed. */
  length: number;
}

export const MAX_BYTES_U32 = 5;
export const MAX_BYTES_U64 = 10;

/** 2^32: the library's one spelling of it (u64 halves, LEB128 past u32). */
export const TWO_POW_32 = 0x1_0000_0000;
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

export function truncated(start: number, what: string): ProfpackError {
  return new ProfpackError(`varint cut off by the end of the buffer (${what})`, {
    code: ErrorCode.VARINT_TRUNCATED,
    offset: start,
    expected: `a byte without the continuation bit before the end, for ${what}`,
  });
}

export function overflow(start: number, what: string, limit: string): ProfpackError {
  return new ProfpackError(`varint does not fit ${what}`, {
    code: ErrorCode.VARINT_OVERFLOW,
    offset: start,
    expected: limit,
  });
}

function checkOffset(bytes: Uint8Array, offset: number): void {
  if (!(bytes instanceof Uint8Array)) throw notBytes('bytes', bytes);
  if (!Number.isInteger(offset) || offset < 0) {
    throw new ProfpackError(`offset must be a non-negative integer, got ${offset}`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  }
  if (offset >= bytes.length) throw truncated(offset, 'start');
}

/** Unsigned LEB128 into a u32: at most 5 bytes, the 5th carrying only bits 28..31. */
export function decodeU32(bytes: Uint8Array, offset = 0): Decoded<number> {
  checkOffset(bytes, offset);
  let value = 0;
  for (let i = 0; i < MAX_BYTES_U32; i++) {
    const pos = offset + i;
    if (pos >= bytes.length) throw truncated(offset, 'u32');
    const byte = bytes[pos]!;
    if (i === 4) {
      if (byte & 0x80) throw overflow(offset, 'u32', 'at most 5 bytes');
      if (byte > 0x0f) throw overflow(offset, 'u32', 'the 5th byte to carry at most 4 bits');
      return { value: value + byte * 0x1000_0000, length: 5 };
    }
    value |= (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) return { value: value >>> 0, length: i + 1 };
  }
  /* c8 ignore next */
  throw overflow(offset, 'u32', 'at most 5 bytes');
}

/** Unsigned LEB128 into a u64: at most 10 bytes, the 10th carrying only bit 63. */
export function decodeU64(bytes: Uint8Array, offset = 0): Decoded<bigint> {
  checkOffset(bytes, offset);
  // Accumulate 28-bit groups as numbers, and combine with BigInt once.
  let low = 0;
  let high = 0;
  for (let i = 0; i < MAX_BYTES_U64; i++) {
    const pos = offset + i;
    if (pos >= bytes.length) throw truncated(offset, 'u64');
    const byte = bytes[pos]!;
    if (i === 9) {
      if (byte & 0x80) throw overflow(offset, 'u64', 'at most 10 bytes');
      if (byte > 0x01) throw overflow(offset, 'u64', 'the 10th byte to carry at most 1 bit');
    }
    if (i < 4) low |= (byte & 0x7f) << (7 * i);
    else high += (byte & 0x7f) * 2 ** (7 * (i - 4));
    if (!(byte & 0x80)) {
      return { value: (BigInt(high) << 28n) | BigInt(low >>> 0), length: i + 1 };
    }
  }
  /* c8 ignore next */
  throw overflow(offset, 'u64', 'at most 10 bytes');
}

/** Signed LEB128 into an i64 (seed 001's getSLEB128 with exact width checks). */
export function decodeI64(bytes: Uint8Array, offset = 0): Decoded<bigint> {
  checkOffset(bytes, offset);
  let value = 0n;
  for (let i = 0; i < MAX_BYTES_U64; i++) {
    const pos = offset + i;
    if (pos >= bytes.length) throw truncated(offset, 'i64');
    const byte = bytes[pos]!;
    if (i === 9) {
      if (byte & 0x80) throw overflow(offset, 'i64', 'at most 10 bytes');
      if (byte !== 0x00 && byte !== 0x7f) throw overflow(offset, 'i64', 'a 10th byte of 0x00 or 0x7f');
    }
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if (!(byte & 0x80)) {
      const shift = 7 * (i + 1);
      if (shift < 64 && byte & 0x40) value -= 1n << BigInt(shift);
      return { value: BigInt.asIntN(64, value), length: i + 1 };
    }
  }
  /* c8 ignore next */
  throw overflow(offset, 'i64', 'at most 10 bytes');
}

/** Signed LEB128 into an i32: the 5th byte's bits 3..6 must be a sign extension of bit 3. */
export function decodeI32(bytes: Uint8Array, offset = 0): Decoded<number> {
  checkOffset(bytes, offset);
  let value = 0;
  for (let i = 0; i < MAX_BYTES_U32; i++) {
    const pos = offset + i;
    if (pos >= bytes.length) throw truncated(offset, 'i32');
    const byte = bytes[pos]!;
    if (i === 4) {
      if (byte & 0x80) throw overflow(offset, 'i32', 'at most 5 bytes');
      const high = byte & 0x78;
      if (high !== 0 && high !== 0x78) throw overflow(offset, 'i32', 'a 5th byte whose bits 3..6 are a sign extension');
    }
    value |= (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      const shift = 7 * (i + 1);
      if (shift < 32 && byte & 0x40) value |= -1 << shift;
      return { value: value | 0, length: i + 1 };
    }
  }
  /* c8 ignore next */
  throw overflow(offset, 'i32', 'at most 5 bytes');
}

function checkU32(value: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= TWO_POW_32) {
    throw new ProfpackError(`${value} is not a u32`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'an integer in [0, 2^32)',
    });
  }
}

function checkI32(value: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x8000_0000 || value > 0x7fff_ffff) {
    throw new ProfpackError(`${value} is not an i32`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'an integer in [-2^31, 2^31)',
    });
  }
}

function checkBig(value: bigint, min: bigint, max: bigint, what: string): void {
  if (typeof value !== 'bigint' || value < min || value > max) {
    throw new ProfpackError(`${String(value)} is not a ${what}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: `a bigint in [${min}, ${max}]`,
    });
  }
}

function notBytes(name: string, value: unknown): ProfpackError {
  const got = value === null ? 'null' : ArrayBuffer.isView(value) ? value.constructor.name : typeof value;
  return new ProfpackError(`${name} must be a Uint8Array, not ${got}`, {
    code: ErrorCode.INVALID_ARGUMENT,
    expected: 'Uint8Array',
  });
}

/** An encoder's output and offset: a Uint8Array, and a non-negative integer (its end is checked byte by byte). */
function checkOut(out: Uint8Array, offset: number): void {
  if (!(out instanceof Uint8Array)) throw notBytes('out', out);
  if (!Number.isInteger(offset) || offset < 0) {
    throw new ProfpackError(`offset must be a non-negative integer, got ${offset}`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  }
}

function put(target: Uint8Array, pos: number, byte: number): void {
  if (pos >= target.length) {
    throw new ProfpackError('output buffer too small for the varint', {
      code: ErrorCode.INVALID_ARGUMENT,
      offset: pos,
    });
  }
  target[pos] = byte;
}

/**
 * Writes `value` as unsigned LEB128 into `out` at `offset` and returns the new
 * offset; without `out` use the encode*ToBytes forms.
 */
export function encodeU32(value: number, out: Uint8Array, offset = 0): number {
  checkU32(value);
  checkOut(out, offset);
  let pos = offset;
  while (value >= 0x80) {
    put(out, pos++, (value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  put(out, pos++, value);
  return pos;
}

export function encodeU64(value: bigint, out: Uint8Array, offset = 0): number {
  checkBig(value, 0n, U64_MAX, 'u64');
  checkOut(out, offset);
  let pos = offset;
  // The low 56 bits go through numbers (7 bytes) quickly; BigInt only for larger values.
  while (value >= 0x80n) {
    put(out, pos++, Number(value & 0x7fn) | 0x80);
    value >>= 7n;
  }
  put(out, pos++, Number(value));
  return pos;
}

export function encodeI64(value: bigint, out: Uint8Array, offset = 0): number {
  checkBig(value, I64_MIN, I64_MAX, 'i64');
  checkOut(out, offset);
  let pos = offset;
  for (;;) {
    const byte = Number(value & 0x7fn);
    value >>= 7n; // BigInt shift is arithmetic
    const done = (value === 0n && !(byte & 0x40)) || (value === -1n && (byte & 0x40) !== 0);
    put(out, pos++, done ? byte : byte | 0x80);
    if (done) return pos;
  }
}

export function encodeI32(value: number, out: Uint8Array, offset = 0): number {
  checkI32(value);
  checkOut(out, offset);
  let pos = offset;
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    const done = (value === 0 && !(byte & 0x40)) || (value === -1 && (byte & 0x40) !== 0);
    put(out, pos++, done ? byte : byte | 0x80);
    if (done) return pos;
  }
}

/** Zigzag as Tachyon's frame table uses it: (v << 1) ^ (v >> 31) on int32. */
export function zigzagEncode32(value: number): number {
  checkI32(value);
  return ((value << 1) ^ (value >> 31)) >>> 0;
}

export function zigzagDecode32(value: number): number {
  checkU32(value);
  return (value >>> 1) ^ -(value & 1);
}

export function zigzagEncode64(value: bigint): bigint {
  checkBig(value, I64_MIN, I64_MAX, 'i64');
  return BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
}

export function zigzagDecode64(value: bigint): bigint {
  checkBig(value, 0n, U64_MAX, 'u64');
  return (value >> 1n) ^ -(value & 1n);
}

/** zigzag + unsigned LEB128 of an int32, as in the Tachyon frame table. */
export function encodeZigzag32(value: number, out: Uint8Array, offset = 0): number {
  return encodeU32(zigzagEncode32(value), out, offset);
}

export function decodeZigzag32(bytes: Uint8Array, offset = 0): Decoded<number> {
  const { value, length } = decodeU32(bytes, offset);
  return { value: (value >>> 1) ^ -(value & 1), length };
}

export function encodingLengthU32(value: number): number {
  checkU32(value);
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5;
}

export function encodingLengthU64(value: bigint): number {
  checkBig(value, 0n, U64_MAX, 'u64');
  let n = 1;
  while (value >= 0x80n) {
    value >>= 7n;
    n++;
  }
  return n;
}

export function encodingLengthI64(value: bigint): number {
  return encodeI64(value, new Uint8Array(MAX_BYTES_U64), 0);
}

export function encodingLengthI32(value: number): number {
  return encodeI32(value, new Uint8Array(MAX_BYTES_U32), 0);
}

export function encodingLengthZigzag32(value: number): number {
  return encodingLengthU32(zigzagEncode32(value));
}

/** Convenience forms that return a fresh buffer holding exactly the encoding. */
export function encodeU32ToBytes(value: number): Uint8Array {
  const out = new Uint8Array(MAX_BYTES_U32);
  return out.subarray(0, encodeU32(value, out));
}
export function encodeU64ToBytes(value: bigint): Uint8Array {
  const out = new Uint8Array(MAX_BYTES_U64);
  return out.subarray(0, encodeU64(value, out));
}
export function encodeI64ToBytes(value: bigint): Uint8Array {
  const out = new Uint8Array(MAX_BYTES_U64);
  return out.subarray(0, encodeI64(value, out));
}
export function encodeI32ToBytes(value: number): Uint8Array {
  const out = new Uint8Array(MAX_BYTES_U32);
  return out.subarray(0, encodeI32(value, out));
}
export function encodeZigzag32ToBytes(value: number): Uint8Array {
  const out = new Uint8Array(MAX_BYTES_U32);
  return out.subarray(0, encodeZigzag32(value, out));
}
