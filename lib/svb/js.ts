/**
 * Pure-JS twin of native/svb: the same streams, byte for byte, and the same
 * errors (ERR_SVB_TRUNCATED at the same offsets). Format: see
 * native/svb/svb_format.h and shared/notes/streamvbyte.md.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { Mode, type SvbCodec } from './modes';

/** Low-byte masks by 1234 code (1, 2, 3, 4 bytes). */
const MASK_1234 = [0xff, 0xffff, 0xffffff, -1];

function controlTruncated(size: number, count: number): ProfpackError {
  const control = Math.ceil(count / 4);
  return new ProfpackError(
    `Stream VByte stream of ${size} bytes is shorter than the ${control} control bytes of ${count} values`,
    { code: ErrorCode.SVB_TRUNCATED, offset: size, expected: `${control} control bytes` },
  );
}

function dataTruncated(pos: number, index: number, length: number, size: number): ProfpackError {
  return new ProfpackError(
    `Stream VByte value ${index} needs ${length} data bytes but the stream ends after ${size - pos}`,
    { code: ErrorCode.SVB_TRUNCATED, offset: pos, expected: `${length} data bytes for value ${index}` },
  );
}

/** x[i] -> stored value, in place on a copy. */
function forward(values: Uint32Array, mode: Mode, prev: number): Uint32Array {
  if (mode === Mode.Plain1234 || mode === Mode.Plain0124) return values;
  const n = values.length;
  const out = new Uint32Array(n);
  let last = prev | 0;
  if (mode === Mode.Delta1234) {
    for (let i = 0; i < n; i++) {
      const x = values[i]! | 0;
      out[i] = x - last;
      last = x;
    }
  } else if (mode === Mode.Zigzag1234) {
    for (let i = 0; i < n; i++) {
      const x = values[i]! | 0;
      out[i] = (x << 1) ^ (x >> 31);
    }
  } else {
    for (let i = 0; i < n; i++) {
      const x = values[i]! | 0;
      const d = (x - last) | 0;
      out[i] = (d << 1) ^ (d >> 31);
      last = x;
    }
  }
  return out;
}

/** Stored values -> x[i], in place over out[0..count). */
function inverse(out: Uint32Array, count: number, mode: Mode, prev: number): void {
  if (mode === Mode.Plain1234 || mode === Mode.Plain0124) return;
  let acc = prev | 0;
  if (mode === Mode.Delta1234) {
    for (let i = 0; i < count; i++) {
      acc = (acc + out[i]!) | 0;
      out[i] = acc;
    }
  } else if (mode === Mode.Zigzag1234) {
    for (let i = 0; i < count; i++) {
      const u = out[i]!;
      out[i] = (u >>> 1) ^ -(u & 1);
    }
  } else {
    for (let i = 0; i < count; i++) {
      const u = out[i]!;
      acc = (acc + ((u >>> 1) ^ -(u & 1))) | 0;
      out[i] = acc;
    }
  }
}

function encode1234(values: Uint32Array, out: Uint8Array): number {
  const n = values.length;
  let pos = Math.ceil(n / 4);
  for (let i = 0, g = 0; i < n; g++) {
    const lanes = n - i < 4 ? n - i : 4;
    let key = 0;
    for (let lane = 0; lane < lanes; lane++, i++) {
      const v = values[i]!;
      if (v < 0x100) {
        out[pos++] = v;
      } else if (v < 0x10000) {
        out[pos] = v;
        out[pos + 1] = v >>> 8;
        pos += 2;
        key |= 1 << (2 * lane);
      } else if (v < 0x1000000) {
        out[pos] = v;
        out[pos + 1] = v >>> 8;
        out[pos + 2] = v >>> 16;
        pos += 3;
        key |= 2 << (2 * lane);
      } else {
        out[pos] = v;
        out[pos + 1] = v >>> 8;
        out[pos + 2] = v >>> 16;
        out[pos + 3] = v >>> 24;
        pos += 4;
        key |= 3 << (2 * lane);
      }
    }
    out[g] = key;
  }
  return pos;
}

function encode0124(values: Uint32Array, out: Uint8Array): number {
  const n = values.length;
  let pos = Math.ceil(n / 4);
  for (let i = 0, g = 0; i < n; g++) {
    const lanes = n - i < 4 ? n - i : 4;
    let key = 0;
    for (let lane = 0; lane < lanes; lane++, i++) {
      const v = values[i]!;
      if (v === 0) continue;
      if (v < 0x100) {
        out[pos++] = v;
        key |= 1 << (2 * lane);
      } else if (v < 0x10000) {
        out[pos] = v;
        out[pos + 1] = v >>> 8;
        pos += 2;
        key |= 2 << (2 * lane);
      } else {
        out[pos] = v;
        out[pos + 1] = v >>> 8;
        out[pos + 2] = v >>> 16;
        out[pos + 3] = v >>> 24;
        pos += 4;
        key |= 3 << (2 * lane);
      }
    }
    out[g] = key;
  }
  return pos;
}

/** Bounds-checked decode of values i..count, data from `pos`. */
function decodeTail(bytes: Uint8Array, count: number, out: Uint32Array, i: number, pos: number, is0124: boolean): number {
  const size = bytes.length;
  for (; i < count; i++) {
    const code = (bytes[i >>> 2]! >>> (2 * (i & 3))) & 3;
    const length = is0124 ? (code === 3 ? 4 : code) : code + 1;
    if (length > size - pos) throw dataTruncated(pos, i, length, size);
    let v = 0;
    for (let b = 0; b < length; b++) v |= bytes[pos + b]! << (8 * b);
    out[i] = v;
    pos += length;
  }
  return pos;
}

function decode1234(bytes: Uint8Array, count: number, out: Uint32Array): number {
  const size = bytes.length;
  const groups = Math.floor(count / 4);
  let pos = Math.ceil(count / 4);
  let g = 0;
  // With 16 bytes left a group's four 4-byte reads stay inside the stream.
  for (; g < groups && size - pos >= 16; g++) {
    const key = bytes[g]!;
    const i = 4 * g;
    if (key === 0) {
      // Four one-byte values: common for small values and sorted deltas.
      out[i] = bytes[pos]!;
      out[i + 1] = bytes[pos + 1]!;
      out[i + 2] = bytes[pos + 2]!;
      out[i + 3] = bytes[pos + 3]!;
      pos += 4;
      continue;
    }
    let code = key & 3;
    out[i] = (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) & MASK_1234[code]!;
    pos += code + 1;
    code = (key >>> 2) & 3;
    out[i + 1] = (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) & MASK_1234[code]!;
    pos += code + 1;
    code = (key >>> 4) & 3;
    out[i + 2] = (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) & MASK_1234[code]!;
    pos += code + 1;
    code = key >>> 6;
    out[i + 3] = (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) & MASK_1234[code]!;
    pos += code + 1;
  }
  return decodeTail(bytes, count, out, 4 * g, pos, false);
}

function decode0124(bytes: Uint8Array, count: number, out: Uint32Array): number {
  const size = bytes.length;
  const groups = Math.floor(count / 4);
  let pos = Math.ceil(count / 4);
  let g = 0;
  for (; g < groups && size - pos >= 16; g++) {
    const key = bytes[g]!;
    for (let lane = 0, i = 4 * g; lane < 4; lane++, i++) {
      switch ((key >>> (2 * lane)) & 3) {
        case 0:
          out[i] = 0;
          break;
        case 1:
          out[i] = bytes[pos++]!;
          break;
        case 2:
          out[i] = bytes[pos]! | (bytes[pos + 1]! << 8);
          pos += 2;
          break;
        default:
          out[i] = bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24);
          pos += 4;
      }
    }
  }
  return decodeTail(bytes, count, out, 4 * g, pos, true);
}

export function encode(values: Uint32Array, out: Uint8Array, mode: Mode, prev: number): number {
  const stored = forward(values, mode, prev);
  return mode === Mode.Plain0124 ? encode0124(stored, out) : encode1234(stored, out);
}

export function decode(bytes: Uint8Array, count: number, out: Uint32Array, mode: Mode, prev: number): number {
  if (bytes.length < Math.ceil(count / 4)) throw controlTruncated(bytes.length, count);
  const end = mode === Mode.Plain0124 ? decode0124(bytes, count, out) : decode1234(bytes, count, out);
  inverse(out, count, mode, prev);
  return end;
}

export function encodedLength(values: Uint32Array, mode: Mode, prev: number): number {
  const stored = forward(values, mode, prev);
  const n = stored.length;
  let data = 0;
  if (mode === Mode.Plain0124) {
    for (let i = 0; i < n; i++) {
      const v = stored[i]!;
      data += v === 0 ? 0 : v < 0x100 ? 1 : v < 0x10000 ? 2 : 4;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const v = stored[i]!;
      data += v < 0x100 ? 1 : v < 0x10000 ? 2 : v < 0x1000000 ? 3 : 4;
    }
  }
  return Math.ceil(n / 4) + data;
}

/** Data bytes of the 1234 or 0124 group with control byte `key`, by key. */
const GROUP_LENGTH_1234 = new Uint8Array(256);
const GROUP_LENGTH_0124 = new Uint8Array(256);
for (let key = 0; key < 256; key++) {
  let length1234 = 0;
  let length0124 = 0;
  for (let lane = 0; lane < 4; lane++) {
    const code = (key >>> (2 * lane)) & 3;
    length1234 += code + 1;
    length0124 += code === 3 ? 4 : code;
  }
  GROUP_LENGTH_1234[key] = length1234;
  GROUP_LENGTH_0124[key] = length0124;
}

export function validate(bytes: Uint8Array, count: number, mode: Mode): boolean {
  const control = Math.ceil(count / 4);
  if (bytes.length < control) return false;
  const is0124 = mode === Mode.Plain0124;
  const table = is0124 ? GROUP_LENGTH_0124 : GROUP_LENGTH_1234;
  const groups = Math.floor(count / 4);
  let data = 0;
  for (let g = 0; g < groups; g++) data += table[bytes[g]!]!;
  for (let i = 4 * groups; i < count; i++) {
    const code = (bytes[i >>> 2]! >>> (2 * (i & 3))) & 3;
    data += is0124 ? (code === 3 ? 4 : code) : code + 1;
  }
  return bytes.length - control === data;
}

export const jsCodec: SvbCodec = { encode, decode, encodedLength, validate };
