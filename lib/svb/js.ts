/**
 * Pure-JS twin of native/svb: the same streams, byte for byte, and the same
 * errors (ERR_SVB_TRUNCATED at the same offsets). Format: see
 * native/svb/svb_format.h and shared/notes/streamvbyte.md.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { Scratch } from '../scratch';
import { Mode, type SvbCodec } from './modes';

/** Low-byte masks by 1234 code (1, 2, 3, 4 bytes). */
const MASK_1234 = new Int32Array([0xff, 0xffff, 0xffffff, -1]);

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

/** The transformed values of an encode (lib/scratch.ts says why). */
const stage = new Scratch(16 << 20);

/** x[i] -> stored value, in a staging copy (valid until the next call). */
function forward(values: Uint32Array, mode: Mode, prev: number): Uint32Array {
  if (mode === Mode.Plain1234 || mode === Mode.Plain0124) return values;
  const n = values.length;
  const out = stage.words(n) ?? new Uint32Array(n);
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

/**
 * Stored values -> x[i], in place over out[from..to); `acc` is x[from-1]
 * (the running sum carried between blocks). Returns x[to-1] as the next acc.
 */
function inverse(out: Uint32Array, from: number, to: number, mode: Mode, acc: number): number {
  if (mode === Mode.Delta1234) {
    for (let i = from; i < to; i++) {
      acc = (acc + out[i]!) | 0;
      out[i] = acc;
    }
  } else if (mode === Mode.Zigzag1234) {
    for (let i = from; i < to; i++) {
      const u = out[i]!;
      out[i] = (u >>> 1) ^ -(u & 1);
    }
  } else if (mode === Mode.ZigzagDelta1234) {
    for (let i = from; i < to; i++) {
      const u = out[i]!;
      acc = (acc + ((u >>> 1) ^ -(u & 1))) | 0;
      out[i] = acc;
    }
  }
  return acc;
}

/** Bytes - 1 of v in the 1234 layout: 0 for v < 2^8 ... 3 for v >= 2^24. */
function code1234(v: number): number {
  return (31 - Math.clz32(v | 1)) >>> 3;
}

function encode1234(values: Uint32Array, out: Uint8Array): number {
  const n = values.length;
  let pos = Math.ceil(n / 4);
  let i = 0;
  let g = 0;
  // Whole groups store each value as a 4-byte write and advance by its length;
  // 16 bytes of room keep the last write of a group inside `out`.
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const whole = n - (n & 3);
  for (; i < whole && out.length - pos >= 16; g++) {
    let v = values[i]!;
    view.setUint32(pos, v, true);
    let code = code1234(v);
    pos += code + 1;
    let key = code;
    v = values[i + 1]!;
    view.setUint32(pos, v, true);
    code = code1234(v);
    pos += code + 1;
    key |= code << 2;
    v = values[i + 2]!;
    view.setUint32(pos, v, true);
    code = code1234(v);
    pos += code + 1;
    key |= code << 4;
    v = values[i + 3]!;
    view.setUint32(pos, v, true);
    code = code1234(v);
    pos += code + 1;
    out[g] = key | (code << 6);
    i += 4;
  }
  for (; i < n; g++) {
    const lanes = n - i < 4 ? n - i : 4;
    let key = 0;
    for (let lane = 0; lane < lanes; lane++, i++) {
      const v = values[i]!;
      const code = code1234(v);
      for (let b = 0; b <= code; b++) out[pos + b] = v >>> (8 * b);
      pos += code + 1;
      key |= code << (2 * lane);
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
function decodeTail(
  bytes: Uint8Array,
  count: number,
  out: Uint32Array,
  i: number,
  pos: number,
  is0124: boolean,
): number {
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

function decode1234(bytes: Uint8Array, count: number, out: Uint32Array, mode: Mode, prev: number): number {
  const size = bytes.length;

  const groups = Math.floor(count / 4);
  let pos = Math.ceil(count / 4);
  let g = 0;
  // DataView reads compile to one unaligned load each; with 16 bytes left a
  // group's four 4-byte reads stay inside the stream.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (; g < groups && size - pos >= 16; g++) {
    const key = bytes[g]!;
    const i = 4 * g;
    // Groups of one width (small values, sorted deltas, timestamps) split one or two words.
    if (key === 0x00) {
      const w = view.getUint32(pos, true);
      out[i] = w & 0xff;
      out[i + 1] = (w >>> 8) & 0xff;
      out[i + 2] = (w >>> 16) & 0xff;
      out[i + 3] = w >>> 24;
      pos += 4;
      continue;
    }
    if (key === 0x55) {
      const lo = view.getUint32(pos, true);
      const hi = view.getUint32(pos + 4, true);
      out[i] = lo & 0xffff;
      out[i + 1] = lo >>> 16;
      out[i + 2] = hi & 0xffff;
      out[i + 3] = hi >>> 16;
      pos += 8;
      continue;
    }
    let code = key & 3;
    out[i] = view.getInt32(pos, true) & MASK_1234[code]!;
    pos += code + 1;
    code = (key >>> 2) & 3;
    out[i + 1] = view.getInt32(pos, true) & MASK_1234[code]!;
    pos += code + 1;
    code = (key >>> 4) & 3;
    out[i + 2] = view.getInt32(pos, true) & MASK_1234[code]!;
    pos += code + 1;
    code = key >>> 6;
    out[i + 3] = view.getInt32(pos, true) & MASK_1234[code]!;
    pos += code + 1;
  }
  const end = decodeTail(bytes, count, out, 4 * g, pos, false);
  if (mode !== Mode.Plain1234) inverse(out, 0, count, mode, prev | 0);
  return end;
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
  return mode === Mode.Plain0124 ? decode0124(bytes, count, out) : decode1234(bytes, count, out, mode, prev);
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
      data += code1234(v) + 1;
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
