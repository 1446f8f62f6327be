/**
 * Version 1's string and frame tables (../shared/notes/tachyon-format.md §4), the one codec, both directions.
 * Decoding is CPython 3.15.2's at open: exactly the footer's counts, each table read until the end of the file
 * (not until the next section), CPython's messages. Encoding is one entry at a time, as the writer interns them
 * (write/tables.ts); version 2's 'plain' frame rows are these rows (codec/tables.ts).
 */
import { ErrorCode } from '../../errors';
import type { ByteSink } from '../../byte-sink';
import { openError } from './layout';
import { readU32, readZigzag32, varint } from './cpython-varint';

/** The raw frame table: one entry per frame, string indices unresolved. */
export interface DecodedFrameTable {
  count: number;
  filenameIndex: Uint32Array;
  funcnameIndex: Uint32Array;
  lineno: Int32Array;
  endLineno: Int32Array;
  column: Int32Array;
  endColumn: Int32Array;
  opcode: Uint8Array;
}

/** A location field CPython stores as -1: not available (its end is then stored as delta 0). */
export const LOCATION_NOT_AVAILABLE = -1;

// CPython decodes with errors="replace"; TextDecoder without `fatal` does the same substitution.
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * `bytes` holds the file from `base` on; `offset`/`end` are file offsets.
 * Counts were checked against the remaining bytes (checkTableCounts) before this allocates.
 */
export function parseStringTable(
  bytes: Uint8Array,
  base: number,
  offset: number,
  count: number,
  fileSize: number,
): string[] {
  const strings = new Array<string>(count);
  // Each entry's start, negated (minus one) when it is not ASCII: the whole table is checked before any is decoded.
  const starts = new Array<number>(count);
  const lengths = new Array<number>(count);
  let pos = offset - base;
  const first = pos;
  const end = fileSize - base;
  for (let i = 0; i < count; i++) {
    const next = readU32(bytes, pos, end);
    if (next < 0)
      throw openError(ErrorCode.TACHYON_STRING_TABLE_VARINT, 'Malformed varint in string table', pos + base);
    const length = varint.lo;
    if (length > end - next)
      throw openError(
        ErrorCode.TACHYON_STRING_TABLE_OVERFLOW,
        'String table overflow',
        next + base,
        `${length} bytes of string ${i}`,
      );
    pos = next + length;
    let ascii = true;
    for (let k = next; k < pos; k++) {
      if (bytes[k]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    starts[i] = ascii ? next : -next - 1;
    lengths[i] = length;
  }
  // ASCII entries are slices of one Latin-1 decode of the table (one call, not one per string: ~110 ns each).
  const text = count > 0 ? latin1(bytes, first, pos) : '';
  for (let i = 0; i < count; i++) {
    const at = starts[i]!;
    strings[i] =
      at >= 0
        ? text.slice(at - first, at - first + lengths[i]!)
        : utf8.decode(bytes.subarray(-at - 1, -at - 1 + lengths[i]!));
  }
  return strings;
}

/** bytes[start, end) as Latin-1 (byte n is char n), in one call. */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

const FRAME_FIELDS = ['filename', 'funcname', 'lineno', 'end_lineno_delta', 'column', 'end_column_delta'] as const;

export function parseFrameTable(
  bytes: Uint8Array,
  base: number,
  offset: number,
  count: number,
  fileSize: number,
): DecodedFrameTable {
  // The seven columns share one buffer: seven typed arrays of their own were most of a small file's table cost.
  const buffer = new ArrayBuffer(count * 25);
  const table: DecodedFrameTable = {
    count,
    filenameIndex: new Uint32Array(buffer, 0, count),
    funcnameIndex: new Uint32Array(buffer, count * 4, count),
    lineno: new Int32Array(buffer, count * 8, count),
    endLineno: new Int32Array(buffer, count * 12, count),
    column: new Int32Array(buffer, count * 16, count),
    endColumn: new Int32Array(buffer, count * 20, count),
    opcode: new Uint8Array(buffer, count * 24, count),
  };
  const { filenameIndex, funcnameIndex, lineno: linenos, endLineno, column: columns, endColumn, opcode } = table;
  let pos = offset - base;
  const end = fileSize - base;
  // Fields 0 and 1 are string indices (LEB128), 2 to 5 zigzag; FRAME_FIELDS names them in errors.
  const values = [0, 0, 0, 0, 0, 0];
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < 6; k++) {
      const next = k < 2 ? readU32(bytes, pos, end) : readZigzag32(bytes, pos, end);
      if (next < 0)
        throw openError(
          ErrorCode.TACHYON_FRAME_TABLE_VARINT,
          `Malformed varint in frame table (${FRAME_FIELDS[k]})`,
          pos + base,
        );
      pos = next;
      values[k] = varint.lo;
    }
    if (pos >= end)
      throw openError(ErrorCode.TACHYON_FRAME_TABLE_TRUNCATED, 'Unexpected end of frame table (opcode)', pos + base);
    const lineno = values[2]!;
    const column = values[4]!;
    filenameIndex[i] = values[0]!;
    funcnameIndex[i] = values[1]!;
    linenos[i] = lineno;
    // int32 wrap-around as in C: the stored delta is added in 32 bits.
    endLineno[i] = lineno === LOCATION_NOT_AVAILABLE ? LOCATION_NOT_AVAILABLE : (lineno + values[3]!) | 0;
    columns[i] = column;
    endColumn[i] = column === LOCATION_NOT_AVAILABLE ? LOCATION_NOT_AVAILABLE : (column + values[5]!) | 0;
    opcode[i] = bytes[pos++]!;
  }
  return table;
}

/** Appends one string-table entry: its UTF-8 length (LEB128), then the bytes. */
export function encodeStringEntry(out: ByteSink, utf8: Uint8Array): void {
  out.uvarint(utf8.length);
  out.append(utf8);
}

/**
 * Appends one frame-table entry as stored: string indices, line and column (zigzag), their end deltas (zigzag,
 * 0 when either side is -1, int32 wrap), then the opcode byte.
 */
export function encodeFrameEntry(
  out: ByteSink,
  filenameIndex: number,
  funcnameIndex: number,
  lineno: number,
  endLinenoDelta: number,
  column: number,
  endColumnDelta: number,
  opcode: number,
): void {
  out.uvarint(filenameIndex);
  out.uvarint(funcnameIndex);
  out.zigzag32(lineno);
  out.zigzag32(endLinenoDelta);
  out.zigzag32(column);
  out.zigzag32(endColumnDelta);
  out.u8(opcode);
}

/** The stored end delta of a location (CPython: 0 when either bound is -1; int32 wrap). */
export function endDelta(start: number, end: number): number {
  return start === LOCATION_NOT_AVAILABLE || end === LOCATION_NOT_AVAILABLE ? 0 : (end - start) | 0;
}
