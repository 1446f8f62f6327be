/**
 * Pure-JS twin of native/varint/varint_napi.cc: batch decode/encode with the
 * same contract (kinds, end offsets, errors).
 */
import { MAX_BYTES_U32, overflow, truncated } from './leb128';
import { VarintKind, type BatchArray } from './kinds';

function decodeU32At(bytes: Uint8Array, pos: number, state: { pos: number }): number {
  const start = pos;
  const size = bytes.length;
  let value = 0;
  for (let i = 0; i < MAX_BYTES_U32; i++) {
    if (pos >= size) throw truncated(start, 'u32');
    const byte = bytes[pos++]!;
    if (i === 4) {
      if (byte & 0x80) throw overflow(start, 'u32', 'at most 5 bytes');
      if (byte > 0x0f) throw overflow(start, 'u32', 'the 5th byte to carry at most 4 bits');
      state.pos = pos;
      return (value | (byte << 28)) >>> 0;
    }
    value |= (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      state.pos = pos;
      return value >>> 0;
    }
  }
  /* c8 ignore next */
  throw overflow(start, 'u32', 'at most 5 bytes');
}

/** The 7-bit groups of the low four bytes of `word`, packed (bits 0..27). */
function groups28(word: number): number {
  return (word & 0x7f) | ((word >> 1) & 0x3f80) | ((word >> 2) & 0x1fc000) | ((word >> 3) & 0xfe00000);
}

/**
 * Decodes u32 varints (zigzag-decoding them when asked) into `out`, a
 * Uint32Array even for zigzag: one store type keeps the loop monomorphic.
 * While 5 bytes remain, each value comes from one 4-byte read without a branch
 * per length (mixed lengths mispredict a byte loop's branches): the lowest
 * byte without the continuation bit ends it. Near the end, and for anything
 * unusual, the careful decoder takes over (and throws the exact error).
 */
function decodeU32Words(bytes: Uint8Array, pos: number, count: number, out: Uint32Array, zigzag: boolean): number {
  const safeEnd = bytes.length - MAX_BYTES_U32;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  while (i < count && pos <= safeEnd) {
    const word = view.getInt32(pos, true);
    const stops = ~word & 0x80808080;
    if (stops !== 0) {
      const first = stops & -stops; // bit 7, 15, 23 or 31
      out[i++] = groups28(word & ((first << 1) - 1));
      pos += (32 - Math.clz32(first)) >>> 3;
    } else {
      const fifth = bytes[pos + 4]!;
      if (fifth > 0x0f) break; // overflow: the careful decoder reports it
      out[i++] = (groups28(word) | (fifth << 28)) >>> 0;
      pos += 5;
    }
  }
  const state = { pos: 0 };
  for (; i < count; i++) {
    out[i] = decodeU32At(bytes, pos, state);
    pos = state.pos;
  }
  // Zigzag as a second pass: a choice inside the loop above cost it ~30 % (measured on mixed lengths).
  if (zigzag) {
    for (let j = 0; j < count; j++) {
      const value = out[j]!;
      out[j] = (value >>> 1) ^ -(value & 1);
    }
  }
  return pos;
}

function decodeBig(
  bytes: Uint8Array,
  pos: number,
  count: number,
  out: BigUint64Array | BigInt64Array,
  kind: VarintKind,
): number {
  const size = bytes.length;
  for (let i = 0; i < count; i++) {
    const start = pos;
    let low = 0; // bits 0..27
    let high = 0; // bits 28.. as a float (exact below 2^53)
    let hi2 = 0n; // bits beyond 2^53 when needed
    let done = false;
    let lastByte = 0;
    let n = 0;
    while (!done) {
      if (n >= 10) throw overflow(start, kind === VarintKind.I64 ? 'i64' : 'u64', 'at most 10 bytes');
      if (pos >= size) throw truncated(start, kind === VarintKind.I64 ? 'i64' : 'u64');
      const byte = bytes[pos++]!;
      if (n === 9) {
        if (byte & 0x80) throw overflow(start, kind === VarintKind.I64 ? 'i64' : 'u64', 'at most 10 bytes');
        if (kind === VarintKind.I64) {
          if (byte !== 0x00 && byte !== 0x7f) throw overflow(start, 'i64', 'a 10th byte of 0x00 or 0x7f');
        } else if (byte > 0x01) {
          throw overflow(start, 'u64', 'the 10th byte to carry at most 1 bit');
        }
      }
      const bits = byte & 0x7f;
      if (n < 4) low |= bits << (7 * n);
      else if (n < 7) high += bits * 2 ** (7 * (n - 4));
      else hi2 |= BigInt(bits) << BigInt(7 * n);
      lastByte = byte;
      n++;
      done = !(byte & 0x80);
    }
    let value = (BigInt(high) << 28n) | BigInt(low >>> 0) | hi2;
    if (kind === VarintKind.I64) {
      const shift = 7 * n;
      if (shift < 64 && lastByte & 0x40) value -= 1n << BigInt(shift);
      out[i] = BigInt.asIntN(64, value);
    } else if (kind === VarintKind.Zigzag64) {
      out[i] = (value >> 1n) ^ -(value & 1n);
    } else {
      out[i] = value;
    }
  }
  return pos;
}

function decodeI32Many(bytes: Uint8Array, pos: number, count: number, out: Int32Array): number {
  const size = bytes.length;
  for (let i = 0; i < count; i++) {
    const start = pos;
    let value = 0;
    for (let n = 0; ; n++) {
      if (n >= 5) throw overflow(start, 'i32', 'at most 5 bytes');
      if (pos >= size) throw truncated(start, 'i32');
      const byte = bytes[pos++]!;
      if (n === 4) {
        if (byte & 0x80) throw overflow(start, 'i32', 'at most 5 bytes');
        const high = byte & 0x78;
        if (high !== 0 && high !== 0x78)
          throw overflow(start, 'i32', 'a 5th byte whose bits 3..6 are a sign extension');
      }
      value |= (byte & 0x7f) << (7 * n);
      if (!(byte & 0x80)) {
        const shift = 7 * (n + 1);
        if (shift < 32 && byte & 0x40) value |= -1 << shift;
        break;
      }
    }
    out[i] = value;
  }
  return pos;
}

export function decodeMany(
  kind: VarintKind,
  bytes: Uint8Array,
  offset: number,
  count: number,
  out: BatchArray,
): number {
  switch (kind) {
    case VarintKind.U32:
      return decodeU32Words(bytes, offset, count, out as Uint32Array, false);
    case VarintKind.Zigzag32:
      return decodeU32Words(bytes, offset, count, new Uint32Array(out.buffer, out.byteOffset, count), true);
    case VarintKind.I32:
      return decodeI32Many(bytes, offset, count, out as Int32Array);
    default:
      return decodeBig(bytes, offset, count, out as BigUint64Array | BigInt64Array, kind);
  }
}

function encodeU32Many(values: ArrayLike<number>, out: Uint8Array, pos: number, zigzag: boolean): number {
  for (let i = 0; i < values.length; i++) {
    let v = values[i]!;
    if (zigzag) v = ((v << 1) ^ (v >> 31)) >>> 0;
    while (v >= 0x80) {
      out[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[pos++] = v;
  }
  return pos;
}

function encodeBigMany(values: BigUint64Array | BigInt64Array, out: Uint8Array, pos: number, kind: VarintKind): number {
  for (let i = 0; i < values.length; i++) {
    let v = values[i]!;
    if (kind === VarintKind.I64) {
      for (;;) {
        const byte = Number(v & 0x7fn);
        v >>= 7n;
        const done = (v === 0n && !(byte & 0x40)) || (v === -1n && (byte & 0x40) !== 0);
        out[pos++] = done ? byte : byte | 0x80;
        if (done) break;
      }
      continue;
    }
    if (kind === VarintKind.Zigzag64) v = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    if (v < 0x1_0000_0000n) {
      let small = Number(v);
      while (small >= 0x80) {
        out[pos++] = (small & 0x7f) | 0x80;
        small = Math.floor(small / 128);
      }
      out[pos++] = small;
      continue;
    }
    while (v >= 0x80n) {
      out[pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    out[pos++] = Number(v);
  }
  return pos;
}

function encodeI32Many(values: Int32Array, out: Uint8Array, pos: number): number {
  for (let i = 0; i < values.length; i++) {
    let v = values[i]!;
    for (;;) {
      const byte = v & 0x7f;
      v >>= 7;
      const done = (v === 0 && !(byte & 0x40)) || (v === -1 && (byte & 0x40) !== 0);
      out[pos++] = done ? byte : byte | 0x80;
      if (done) break;
    }
  }
  return pos;
}

export function encodeMany(kind: VarintKind, values: BatchArray, out: Uint8Array, offset: number): number {
  switch (kind) {
    case VarintKind.U32:
      return encodeU32Many(values as Uint32Array, out, offset, false);
    case VarintKind.Zigzag32:
      return encodeU32Many(values as Int32Array, out, offset, true);
    case VarintKind.I32:
      return encodeI32Many(values as Int32Array, out, offset);
    default:
      return encodeBigMany(values as BigUint64Array | BigInt64Array, out, offset, kind);
  }
}
