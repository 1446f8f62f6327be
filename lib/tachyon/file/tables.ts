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
  let pos = offset - base;
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
    strings[i] = decodeString(bytes, next, next + length);
    pos = next + length;
  }
  return strings;
}

/** UTF-8 with replacement; ASCII strings up to 512 bytes (names and most paths) without a TextDecoder call. */
function decodeString(bytes: Uint8Array, start: number, end: number): string {
  if (end - start <= 512) {
    let ascii = true;
    for (let i = start; i < end; i++) {
      if (bytes[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]);
  }
  return utf8.decode(bytes.subarray(start, end));
}

const FRAME_FIELDS = ['filename', 'funcname', 'lineno', 'end_lineno_delta', 'column', 'end_column_delta'] as const;

export function parseFrameTable(
  bytes: Uint8Array,
  base: number,
  offset: number,
  count: number,
  fileSize: number,
): DecodedFrameTable {
  const table: DecodedFrameTable = {
    count,
    filenameIndex: new Uint32Array(count),
    funcnameIndex: new Uint32Array(count),
    lineno: new Int32Array(count),
    endLineno: new Int32Array(count),
    column: new Int32Array(count),
    endColumn: new Int32Array(count),
    opcode: new Uint8Array(count),
  };
  let pos = offset - base;
  const end = fileSize - base;
  const fail = (field: number, at: number): never => {
    throw openError(
      ErrorCode.TACHYON_FRAME_TABLE_VARINT,
      `Malformed varint in frame table (${FRAME_FIELDS[field]})`,
      at + base,
    );
  };
  // Fields 0 and 1 are string indices (LEB128), 2 to 5 zigzag; FRAME_FIELDS names them in errors.
  const field = (k: number): number => {
    const next = k < 2 ? readU32(bytes, pos, end) : readZigzag32(bytes, pos, end);
    if (next < 0) fail(k, pos);
    pos = next;
    return varint.lo;
  };
  for (let i = 0; i < count; i++) {
    table.filenameIndex[i] = field(0);
    table.funcnameIndex[i] = field(1);
    const lineno = field(2);
    const endLinenoDelta = field(3);
    const column = field(4);
    const endColumnDelta = field(5);
    if (pos >= end)
      throw openError(ErrorCode.TACHYON_FRAME_TABLE_TRUNCATED, 'Unexpected end of frame table (opcode)', pos + base);
    table.lineno[i] = lineno;
    // int32 wrap-around as in C: the stored delta is added in 32 bits.
    table.endLineno[i] = lineno === LOCATION_NOT_AVAILABLE ? LOCATION_NOT_AVAILABLE : (lineno + endLinenoDelta) | 0;
    table.column[i] = column;
    table.endColumn[i] = column === LOCATION_NOT_AVAILABLE ? LOCATION_NOT_AVAILABLE : (column + endColumnDelta) | 0;
    table.opcode[i] = bytes[pos++]!;
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
