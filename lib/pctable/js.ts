/**
 * Pure-JS twin of native/pctable: Go varint-delta tables (runtime.pcvalue's
 * rules, in js-varint.ts) and the linear-index encoding (seed 000, here), with
 * the same contract as the addon (native.ts): same outputs, same error codes
 * and offsets.
 * Every read of input bytes is bounds-checked, or follows a validation pass.
 */
import { ErrorCode } from '../errors';
import {
  CHUNK_QUANTA,
  CHUNK_SHIFT,
  INDEX_MARKER_U16,
  INDEX_MARKER_U32,
  LENGTH_1,
  LENGTH_2,
  LENGTH_4,
  LENGTH_UNUSED,
  VALUE_BYTES,
  VLEN_BYTE_SUMS,
  type IndexWidth,
} from './format';
import { decodeVarint, fail, walk, walkVarint } from './js-varint';

export { decodeVarint, lookupVarint, lookupVarintValue, type DecodedRuns } from './js-varint';

/** A linear encoding with its geometry; lookups trust that it was validated. */
export interface LinearView {
  readonly bytes: Uint8Array;
  /** Bytes of PCs covered (a multiple of quantum). */
  readonly size: number;
  readonly quantum: number;
  readonly chunks: number;
  readonly width: IndexWidth;
  /** Chunk index length, marker included. */
  readonly indexBytes: number;
  /** The varint table it came from (terminator included), when it came from one. */
  varint: Uint8Array | null;
}

export interface FromVarintResult<H> {
  linear: Uint8Array;
  size: number;
  end: number;
  handle: H;
}

/** Every table of a set back to back, with a typed-array directory (as the addon's set). */
export interface JsSet {
  readonly linear: Uint8Array;
  /**
   * DIRECTORY_STRIDE words per table, in one cache line: linear start, size,
   * chunk index length, index width | quantum << 8.
   */
  readonly directory: Uint32Array;
  /** Varint tables back to back (empty unless every table has one); table t is [varintStart[t], varintStart[t + 1]). */
  readonly varint: Uint8Array;
  readonly varintStart: Uint32Array;
  readonly hasVarint: boolean;
}

const DIRECTORY_STRIDE = 4;

// ---------------------------------------------------------------------------
// Linear index: encoder

function lengthCodeOf(value: number): number {
  if (value >= -128 && value <= 127) return LENGTH_1;
  if (value >= -32768 && value <= 32767) return LENGTH_2;
  return LENGTH_4;
}

/** Encodes decoded runs covering `size` bytes, with the reference encoder's choices. */
export function encodeLinear(values: Int32Array, ends: Uint32Array, size: number, quantum: number): Uint8Array {
  const quanta = size / quantum;
  const chunkCount = Math.ceil(quanta / CHUNK_QUANTA);
  const runCount = values.length;
  // Per run at most 1 pcs byte + 4 value bytes + a vlen quarter; per chunk n, a bias and a vlen byte.
  // Chunks written: constant ones with a new value, or ones holding a change: at most 2 per run.
  const body = new Uint8Array(runCount * 6 + Math.min(chunkCount, 2 * runCount) * 7 + 8);
  let length = 0;
  const chunkOffsets = new Uint32Array(chunkCount);
  // value -> offset of the first constant chunk (n = 0) with it; the reference
  // reuses it for every later constant chunk, the short last one included.
  const constantChunks = new Map<number, number>();
  const put = (value: number, code: number): void => {
    for (let i = 0; i < VALUE_BYTES[code]!; i++) body[length++] = (value >>> (8 * i)) & 0xff;
  };
  const startQuanta = (run: number): number => (run === 0 ? 0 : ends[run - 1]! / quantum);
  let run = 0;
  for (let chunk = 0; chunk < chunkCount; chunk++) {
    const chunkStart = chunk * CHUNK_QUANTA;
    const chunkEnd = Math.min(chunkStart + CHUNK_QUANTA, quanta);
    while (ends[run]! / quantum <= chunkStart) run++;
    const bias = values[run]!;
    // Every record starting inside the chunk is a change point, as the reference lists them.
    let last = run + 1;
    while (last < runCount && startQuanta(last) < chunkEnd) last++;
    const n = last - run - 1;
    if (n === 0) {
      let offset = constantChunks.get(bias);
      if (offset === undefined) {
        offset = length;
        constantChunks.set(bias, offset);
        const code = lengthCodeOf(bias);
        body[length++] = 0;
        body[length++] = code;
        put(bias, code);
      }
      // Every later chunk inside the same run is the same constant chunk: fill them
      // at once (a 19-byte table can declare a run of ~2^32 PCs, 2^24 chunks).
      const runEnd = ends[run]! / quantum;
      const lastInside = runEnd >= quanta ? chunkCount - 1 : Math.floor(runEnd / CHUNK_QUANTA) - 1;
      chunkOffsets.fill(offset, chunk, lastInside + 1);
      chunk = lastInside;
      continue;
    }
    chunkOffsets[chunk] = length;
    body[length++] = n;
    for (let i = run + 1; i < last; i++) body[length++] = startQuanta(i) - chunkStart;
    const vlenAt = length;
    const vlenBytes = (n + 4) >> 2;
    body.fill(0, vlenAt, vlenAt + vlenBytes);
    length += vlenBytes;
    const biasCode = lengthCodeOf(bias);
    body[vlenAt] = biasCode;
    put(bias, biasCode);
    for (let i = 1; i <= n; i++) {
      const delta = (values[run + i]! - bias) | 0;
      const code = lengthCodeOf(delta);
      body[vlenAt + (i >> 2)] = body[vlenAt + (i >> 2)]! | (code << (2 * (i & 3)));
      put(delta, code);
    }
    if (n > 0) run = last - 1;
  }

  let maxOffset = 0;
  for (let chunk = 1; chunk < chunkCount; chunk++) maxOffset = Math.max(maxOffset, chunkOffsets[chunk]!);
  let width: IndexWidth = 0;
  if (chunkCount > 1) {
    // A u8 index starting with 0xfe/0xff would read as a marker: fall back to u16.
    if (maxOffset <= 0xff && chunkOffsets[1]! < INDEX_MARKER_U16) width = 1;
    else if (maxOffset <= 0xffff) width = 2;
    else width = 4;
  }
  const indexBytes = chunkCount > 1 ? (width === 1 ? 0 : 1) + (chunkCount - 1) * width : 0;
  const out = new Uint8Array(indexBytes + length);
  let at = 0;
  if (width === 2) out[at++] = INDEX_MARKER_U16;
  if (width === 4) out[at++] = INDEX_MARKER_U32;
  for (let chunk = 1; chunk < chunkCount; chunk++) {
    const offset = chunkOffsets[chunk]!;
    for (let i = 0; i < width; i++) out[at++] = (offset >>> (8 * i)) & 0xff;
  }
  out.set(body.subarray(0, length), at);
  return out;
}

// ---------------------------------------------------------------------------
// Linear index: geometry, validation, lookup

/** Chunk count, index width and length from the first byte; no validation beyond the index length. */
export function linearGeometry(bytes: Uint8Array, size: number, quantum: number): LinearView {
  const chunks = Math.ceil(size / quantum / CHUNK_QUANTA);
  let width: IndexWidth = 0;
  let indexBytes = 0;
  if (chunks > 1) {
    if (bytes.length === 0)
      throw fail(ErrorCode.PCTABLE_TRUNCATED, 'linear table is empty but needs a chunk index', 0, 'a chunk index');
    const entries = chunks - 1;
    if (bytes[0] === INDEX_MARKER_U16) {
      width = 2;
      indexBytes = 1 + 2 * entries;
    } else if (bytes[0] === INDEX_MARKER_U32) {
      width = 4;
      indexBytes = 1 + 4 * entries;
    } else {
      width = 1;
      indexBytes = entries;
    }
    if (indexBytes > bytes.length) {
      throw fail(
        ErrorCode.PCTABLE_TRUNCATED,
        'linear table ends inside its chunk index',
        bytes.length,
        `a chunk index of ${indexBytes} bytes for ${chunks} chunks`,
      );
    }
  }
  return { bytes, size, quantum, chunks, width, indexBytes, varint: null };
}

function chunkOffset(view: LinearView, chunk: number): number {
  return chunk === 0 ? 0 : indexEntry(view.bytes, 0, view.width, chunk);
}

/** Reads and validates a linear encoding: every chunk the index reaches must lie inside it. */
export function openLinear(bytes: Uint8Array, size: number, quantum: number): LinearView {
  const view = linearGeometry(bytes, size, quantum);
  const length = bytes.length;
  const dataBytes = length - view.indexBytes;
  let lastChecked = -1;
  for (let chunk = 0; chunk < view.chunks; chunk++) {
    const offset = chunkOffset(view, chunk);
    if (offset === lastChecked) continue; // deduplicated constant chunks repeat an offset
    if (offset >= dataBytes) {
      if (chunk === 0)
        throw fail(
          ErrorCode.PCTABLE_TRUNCATED,
          'linear table ends before its first chunk',
          length,
          'chunk 0 after the index',
        );
      const entryAt = view.width === 1 ? chunk - 1 : 1 + view.width * (chunk - 1);
      throw fail(
        ErrorCode.PCTABLE_BAD_OFFSET,
        `chunk ${chunk} offset ${offset} points outside the linear table`,
        entryAt,
        `an offset below ${dataBytes}`,
      );
    }
    const at = view.indexBytes + offset;
    const n = bytes[at]!;
    const pcsAt = at + 1;
    const vlenAt = pcsAt + n;
    const vlenBytes = (n + 4) >> 2;
    if (vlenAt + vlenBytes > length)
      throw fail(
        ErrorCode.PCTABLE_TRUNCATED,
        'linear chunk runs past the end of the table',
        at,
        'n, pcs and vlen inside the table',
      );
    let previous = 0;
    for (let i = 0; i < n; i++) {
      const pc = bytes[pcsAt + i]!;
      if (pc <= previous)
        throw fail(
          ErrorCode.PCTABLE_BAD_PCS,
          'linear chunk pcs are not ascending positions 1..255',
          pcsAt + i,
          `a position above ${previous}`,
        );
      previous = pc;
    }
    let valueBytes = 0;
    for (let i = 0; i <= n; i++) {
      const code = (bytes[vlenAt + (i >> 2)]! >> (2 * (i & 3))) & 3;
      if (code === LENGTH_UNUSED)
        throw fail(
          ErrorCode.PCTABLE_BAD_LENGTH_CODE,
          `linear chunk value ${i} has length code 0b00`,
          vlenAt + (i >> 2),
          'a length code 0b01, 0b10 or 0b11',
        );
      valueBytes += VALUE_BYTES[code]!;
    }
    if (vlenAt + vlenBytes + valueBytes > length) {
      throw fail(
        ErrorCode.PCTABLE_TRUNCATED,
        'linear chunk values run past the end of the table',
        vlenAt + vlenBytes,
        `${valueBytes} bytes of values`,
      );
    }
    lastChecked = offset;
  }
  return view;
}

function readValue(b: Uint8Array, p: number, code: number): number {
  if (code === LENGTH_1) return (b[p]! << 24) >> 24;
  if (code === LENGTH_2) return ((b[p]! | (b[p + 1]! << 8)) << 16) >> 16;
  return b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24);
}

/** The chunk index entry of `chunk` (>= 1) of the table at `base`. */
function indexEntry(b: Uint8Array, base: number, width: IndexWidth, chunk: number): number {
  if (width === 1) return b[base + chunk - 1]!;
  if (width === 2) {
    const e = base + 2 * chunk - 1;
    return b[e]! | (b[e + 1]! << 8);
  }
  const e = base + 4 * chunk - 3;
  return (b[e]! | (b[e + 1]! << 8) | (b[e + 2]! << 16) | (b[e + 3]! << 24)) >>> 0;
}

/** Value at `pc` of the validated table at b[base...]; the caller guarantees 0 <= pc < size, pc an integer. */
export function lookupLinearAt(
  b: Uint8Array,
  base: number,
  indexBytes: number,
  width: IndexWidth,
  quantum: number,
  pc: number,
): number {
  const quanta = quantum === 1 ? pc : Math.floor(pc / quantum);
  const chunk = quanta >>> CHUNK_SHIFT;
  const at = base + indexBytes + (chunk === 0 ? 0 : indexEntry(b, base, width, chunk));
  const target = quanta & (CHUNK_QUANTA - 1);
  const n = b[at]!;
  const pcs = at + 1;
  // k = how many change points are <= target (pcs ascend).
  let k = 0;
  while (k < n && b[pcs + k]! <= target) k++;
  const vlen = pcs + n;
  const vals = vlen + ((n + 4) >> 2);
  const bias = readValue(b, vals, b[vlen]! & 3);
  if (k === 0) return bias;
  let offset = 0;
  const full = k >> 2;
  for (let i = 0; i < full; i++) offset += VLEN_BYTE_SUMS[b[vlen + i]!]!;
  const shift = 2 * (k & 3);
  const last = b[vlen + full]!;
  offset += VLEN_BYTE_SUMS[last & ((1 << shift) - 1)]!;
  return (bias + readValue(b, vals + offset, (last >> shift) & 3)) | 0;
}

/** Value at `pc` of a validated table; the caller guarantees 0 <= pc < size, pc an integer. */
export function lookupLinear(view: LinearView, pc: number): number {
  return lookupLinearAt(view.bytes, 0, view.indexBytes, view.width, view.quantum, pc);
}

// ---------------------------------------------------------------------------
// The contract shared with the addon (see native.ts)

export function fromVarint(bytes: Uint8Array, quantum: number, expectedSize: number): FromVarintResult<LinearView> {
  const decoded = decodeVarint(bytes, quantum);
  const size = decoded.ends[decoded.ends.length - 1]!;
  if (expectedSize !== 0 && size !== expectedSize) {
    throw fail(
      ErrorCode.PCTABLE_SIZE_MISMATCH,
      `pcvalue table covers ${size} bytes, not the given size ${expectedSize}`,
      decoded.end - 1,
      `runs summing to ${expectedSize} bytes`,
    );
  }
  const linear = encodeLinear(decoded.values, decoded.ends, size, quantum);
  const handle = linearGeometry(linear, size, quantum);
  handle.varint = bytes.subarray(0, decoded.end);
  return { linear, size, end: decoded.end, handle };
}

export function fromLinear(bytes: Uint8Array, size: number, quantum: number): LinearView {
  return openLinear(bytes, size, quantum);
}

export function lookupMany(
  view: LinearView,
  pcs: Uint32Array,
  out: Int32Array,
  fillOutside: boolean,
  outsideValue: number,
): number {
  const size = view.size;
  for (let i = 0; i < pcs.length; i++) {
    const pc = pcs[i]!;
    if (pc >= size) {
      if (!fillOutside) return i;
      out[i] = outsideValue;
      continue;
    }
    out[i] = lookupLinear(view, pc);
  }
  return -1;
}

export function openSet(handles: LinearView[]): JsSet {
  const count = handles.length;
  const hasVarint = handles.every((h) => h.varint !== null);
  const directory = new Uint32Array(count * DIRECTORY_STRIDE);
  const varintStart = new Uint32Array(count + 1);
  let linearBytes = 0;
  let varintBytes = 0;
  handles.forEach((h, t) => {
    const d = t * DIRECTORY_STRIDE;
    directory[d] = linearBytes;
    directory[d + 1] = h.size;
    directory[d + 2] = h.indexBytes;
    directory[d + 3] = h.width | (h.quantum << 8);
    linearBytes += h.bytes.length;
    varintStart[t] = varintBytes;
    if (hasVarint) varintBytes += h.varint!.length;
  });
  varintStart[count] = varintBytes;
  const linear = new Uint8Array(linearBytes);
  const varint = new Uint8Array(varintBytes);
  handles.forEach((h, t) => {
    linear.set(h.bytes, directory[t * DIRECTORY_STRIDE]);
    if (hasVarint) varint.set(h.varint!, varintStart[t]);
  });
  return { linear, directory, varint, varintStart, hasVarint };
}

export function setLookupMany(
  set: JsSet,
  tableIndex: Uint32Array,
  pcs: Uint32Array,
  out: Int32Array,
  fillOutside: boolean,
  outsideValue: number,
  useVarint: boolean,
): number {
  const { linear, directory, varint, varintStart } = set;
  const count = directory.length / DIRECTORY_STRIDE;
  for (let i = 0; i < pcs.length; i++) {
    const t = tableIndex[i]!;
    if (t >= count) return i;
    const d = t * DIRECTORY_STRIDE;
    const pc = pcs[i]!;
    if (pc >= directory[d + 1]!) {
      if (!fillOutside) return i;
      out[i] = outsideValue;
      continue;
    }
    const shape = directory[d + 3]!;
    if (useVarint) {
      walkVarint(varint, varintStart[t]!, varintStart[t + 1]!, shape >>> 8, pc);
      out[i] = walk.value;
    } else {
      out[i] = lookupLinearAt(linear, directory[d]!, directory[d + 2]!, (shape & 0xff) as IndexWidth, shape >>> 8, pc);
    }
  }
  return -1;
}
