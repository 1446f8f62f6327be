/**
 * LEB128 exactly as CPython 3.15.2's Tachyon reader decodes it, which is not
 * lib/varint's strict decoder: no canonical-form check, up to 10 bytes, the
 * 10th byte's bits above bit 63 silently dropped, failure only when a 10th
 * byte still has the continuation bit or the data ends. u32 fields are decoded
 * as u64 and then range-checked. Each function returns the position after the
 * varint, or -1 on failure; the value is left in `varint`.
 */
export const varint = {
  /** u32 value (readU32), or the low 32 bits of a u64 (readU64). */
  lo: 0,
  /** High 32 bits of a u64 (readU64). */
  hi: 0,
};

/** Unsigned LEB128 into 64 bits split as varint.lo / varint.hi (no BigInt on the hot path). */
export function readU64(bytes: Uint8Array, pos: number, end: number): number {
  if (pos < end) {
    const b0 = bytes[pos]!;
    if (b0 < 0x80) {
      varint.lo = b0;
      varint.hi = 0;
      return pos + 1;
    }
  }
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) return -1;
    const b = bytes[pos++]!;
    const bits = b & 0x7f;
    if (i < 4) lo |= bits << (7 * i);
    else if (i === 4) {
      lo |= (bits & 0x0f) << 28;
      hi |= bits >>> 4;
    } else if (i < 9) hi |= bits << (7 * i - 32);
    else hi |= (bits & 1) << 31;
    if (!(b & 0x80)) {
      varint.lo = lo >>> 0;
      varint.hi = hi >>> 0;
      return pos;
    }
  }
  return -1; // a 10th byte with the continuation bit: the shift would pass 63
}

/** readU64, failing when the value does not fit 32 bits. */
export function readU32(bytes: Uint8Array, pos: number, end: number): number {
  if (pos < end) {
    const b0 = bytes[pos]!;
    if (b0 < 0x80) {
      varint.lo = b0;
      return pos + 1;
    }
  }
  const next = readU64(bytes, pos, end);
  if (next < 0 || varint.hi !== 0) return -1;
  return next;
}

/** Zigzag over a u32, as an int32 (the frame table's signed fields). */
export function readZigzag32(bytes: Uint8Array, pos: number, end: number): number {
  const next = readU32(bytes, pos, end);
  if (next >= 0) {
    const z = varint.lo;
    varint.lo = (z >>> 1) ^ -(z & 1);
  }
  return next;
}
