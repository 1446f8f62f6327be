/**
 * Version-2 string and frame tables: version 1's layouts (notes/tachyon-format.md
 * §4) or two other frame-table codings, and optionally each table as one zstd
 * frame (HeaderFlag.TablesZstd):
 * - 'plain': version 1's rows, byte for byte;
 * - 'mtf': rows with move-to-front codes for filename/funcname indices
 *   (memtrace's 31-entry lists, seed 004). It measured larger after zstd on
 *   every stream (bench/RESULTS.md ## v2), so it is never the default;
 * - 'columns': the seven fields column by column; name indices coded as
 *   0 = "the next string not yet named in this column" (funcnames: 1 = the
 *   previous funcname of the same file) else the index + 1 (+ 2), line
 *   numbers relative to the previous frame of the same function (else
 *   file), end columns absolute. Measured 9–94 %
 *   smaller after zstd, so version 2's default.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ByteSink, ByteSource } from './bytes';
import { HeaderFlag, MTF_SIZE } from './format';
import { encodeFrameEntry, endDelta, parseFrameTable, zstdCompress } from '../file/index';

/**
 * One frame-table entry with the values version 1 stores (after CPython's
 * conversions: deltas 0 when a bound is −1, opcode 255 for none).
 */
export interface FrameTableEntry {
  filenameIndex: number;
  funcnameIndex: number;
  lineno: number;
  endLinenoDelta: number;
  column: number;
  endColumnDelta: number;
  opcode: number;
}

const textEncoder = new TextEncoder();
// CPython decodes with errors="replace"; so does a non-fatal TextDecoder.
const textDecoder = new TextDecoder('utf-8', { fatal: false });

function zigzag32(value: number): number {
  return ((value << 1) ^ (value >> 31)) >>> 0;
}
function unzigzag32(value: number): number {
  return (value >>> 1) ^ -(value & 1);
}

export function encodeStringTable(
  strings: readonly string[],
  nulTerminated = false,
  out = new ByteSink(1024),
): Uint8Array {
  for (const s of strings) {
    const bytes = textEncoder.encode(s);
    if (nulTerminated) {
      out.append(bytes);
      out.u8(0);
    } else {
      out.uvarint(bytes.length);
      out.append(bytes);
    }
  }
  return out.take();
}

export function decodeStringTable(src: ByteSource, count: number, nulTerminated = false): string[] {
  if (count > src.remaining()) {
    throw src.fail(
      ErrorCode.V2_BAD_TABLES,
      `string count ${count} exceeds the ${src.remaining()} bytes of the string table`,
      `at most ${src.remaining()} strings`,
    );
  }
  const strings: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = src.pos;
    if (nulTerminated) {
      const end = src.bytes.indexOf(0, src.pos);
      if (end < 0 || end >= src.end)
        throw src.fail(
          ErrorCode.V2_BAD_TABLES,
          `string ${i} has no NUL terminator before the end of the string table`,
          'a 0 byte',
          at,
        );
      strings[i] = textDecoder.decode(src.bytes.subarray(src.pos, end));
      src.pos = end + 1;
      continue;
    }
    const length = src.uvarint32();
    if (length > src.remaining())
      throw src.fail(
        ErrorCode.V2_BAD_TABLES,
        `string ${i} of ${length} bytes overflows the string table`,
        `at most ${src.remaining()} bytes`,
        at,
      );
    strings[i] = textDecoder.decode(src.bytes.subarray(src.pos, src.pos + length));
    src.pos += length;
  }
  return strings;
}

function checkedIndex(index: number, src: ByteSource, at: number): number {
  if (index > 0xffff_ffff)
    throw src.fail(ErrorCode.V2_BAD_TABLES, `string index ${index} does not fit u32`, 'a u32 string index', at);
  return index;
}

/** Memtrace's move-to-front list: codes 0..30 are positions, 31 + i is string index i. */
class MoveToFront {
  private readonly list: number[] = [];

  encode(index: number): number {
    const at = this.list.indexOf(index);
    if (at >= 0) {
      this.list.splice(at, 1);
      this.list.unshift(index);
      return at;
    }
    this.push(index);
    return MTF_SIZE + index;
  }

  decode(code: number, src: ByteSource, at: number): number {
    if (code < MTF_SIZE) {
      if (code >= this.list.length) {
        throw src.fail(
          ErrorCode.V2_BAD_MTF,
          `move-to-front code ${code} but the list holds ${this.list.length} names`,
          `a code below ${this.list.length}, or ${MTF_SIZE} + a string index`,
          at,
        );
      }
      const index = this.list[code]!;
      this.list.splice(code, 1);
      this.list.unshift(index);
      return index;
    }
    const index = checkedIndex(code - MTF_SIZE, src, at);
    const known = this.list.indexOf(index);
    if (known >= 0) this.list.splice(known, 1);
    this.push(index);
    return index;
  }

  private push(index: number): void {
    this.list.unshift(index);
    if (this.list.length > MTF_SIZE) this.list.pop();
  }
}

export type FrameTableCoding = 'plain' | 'mtf' | 'columns';

export function encodeFrameTable(
  frames: readonly FrameTableEntry[],
  coding: FrameTableCoding,
  out = new ByteSink(1024),
): Uint8Array {
  if (coding === 'columns') return encodeFrameColumns(frames, out);
  const moveToFront = coding === 'mtf';
  const files = new MoveToFront();
  const funcs = new MoveToFront();
  // Version 1's rows; 'mtf' replaces the two string indices with move-to-front codes.
  for (const f of frames) {
    encodeFrameEntry(
      out,
      moveToFront ? files.encode(f.filenameIndex) : f.filenameIndex,
      moveToFront ? funcs.encode(f.funcnameIndex) : f.funcnameIndex,
      f.lineno,
      f.endLinenoDelta,
      f.column,
      f.endColumnDelta,
      f.opcode,
    );
  }
  return out.take();
}

/** Filename index → column code: 0 names the column's next new string, else index + 1. */
function encodeFilenames(frames: readonly FrameTableEntry[], out: ByteSink): void {
  let next = 0;
  for (const f of frames) {
    const index = f.filenameIndex;
    if (index === next) {
      out.u8(0);
      next++;
    } else {
      out.uvarint(index + 1);
      if (index > next) next = index + 1;
    }
  }
}

/**
 * Funcname index → column code: 0 = the column's next new string, 1 = the
 * funcname of the previous frame with the same filename (another line of the
 * same function), else index + 2.
 */
function encodeFuncnames(frames: readonly FrameTableEntry[], out: ByteSink): void {
  let next = 0;
  const lastOfFile = new Map<number, number>();
  for (const f of frames) {
    const index = f.funcnameIndex;
    if (lastOfFile.get(f.filenameIndex) === index) out.u8(1);
    else if (index === next) out.u8(0);
    else out.uvarint(index + 2);
    if (index >= next) next = index + 1;
    lastOfFile.set(f.filenameIndex, index);
  }
}

function encodeFrameColumns(frames: readonly FrameTableEntry[], out: ByteSink): Uint8Array {
  encodeFilenames(frames, out);
  encodeFuncnames(frames, out);
  const lines = new LineReference();
  for (const f of frames) {
    out.uvarint(zigzag32((f.lineno - lines.reference(f.filenameIndex, f.funcnameIndex)) | 0));
    lines.update(f.filenameIndex, f.funcnameIndex, f.lineno);
  }
  for (const f of frames) out.uvarint(zigzag32(f.endLinenoDelta));
  for (const f of frames) out.uvarint(zigzag32(f.column));
  // The end column itself (column + stored delta, in int32) compresses better than the delta.
  for (const f of frames) out.uvarint(zigzag32((f.column + f.endColumnDelta) | 0));
  for (const f of frames) out.u8(f.opcode);
  return out.take();
}

/**
 * What a frame's line number is coded against: the previous line of the same
 * function (same file and funcname), else the previous line of the same file,
 * else 0. Measured on py_stdlib: 30 % smaller than file-relative lines alone.
 */
class LineReference {
  private readonly ofFile = new Map<number, number>();
  /** file → funcname → line; numeric keys (a string key per frame took most of finalize on perf_gcc). */
  private readonly ofFunction = new Map<number, Map<number, number>>();

  reference(file: number, func: number): number {
    return this.ofFunction.get(file)?.get(func) ?? this.ofFile.get(file) ?? 0;
  }

  update(file: number, func: number, lineno: number): void {
    let funcs = this.ofFunction.get(file);
    if (funcs === undefined) this.ofFunction.set(file, (funcs = new Map()));
    funcs.set(func, lineno);
    this.ofFile.set(file, lineno);
  }
}

function decodeFilenames(src: ByteSource, count: number, into: Uint32Array): void {
  let next = 0;
  for (let i = 0; i < count; i++) {
    const at = src.pos;
    const code = src.uvarint49();
    if (code === 0) {
      into[i] = next++;
    } else {
      const index = checkedIndex(code - 1, src, at);
      into[i] = index;
      if (index > next) next = index + 1;
    }
  }
}

function decodeFuncnames(src: ByteSource, count: number, files: Uint32Array, into: Uint32Array): void {
  let next = 0;
  const lastOfFile = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const at = src.pos;
    const code = src.uvarint49();
    let index: number;
    if (code === 1) {
      const last = lastOfFile.get(files[i]!);
      if (last === undefined)
        throw src.fail(
          ErrorCode.V2_BAD_TABLES,
          `frame ${i} repeats the funcname of an earlier frame of its file, but there is none`,
          'code 0 or a string index + 2',
          at,
        );
      index = last;
    } else if (code === 0) {
      index = next;
    } else {
      index = checkedIndex(code - 2, src, at);
    }
    into[i] = index;
    if (index >= next) next = index + 1;
    lastOfFile.set(files[i]!, index);
  }
}

function decodeFrameColumns(src: ByteSource, count: number): FrameTableEntry[] {
  const files = new Uint32Array(count);
  const funcs = new Uint32Array(count);
  decodeFilenames(src, count, files);
  decodeFuncnames(src, count, files, funcs);
  const lineno = new Int32Array(count);
  const lines = new LineReference();
  for (let i = 0; i < count; i++) {
    lineno[i] = (lines.reference(files[i]!, funcs[i]!) + unzigzag32(src.uvarint32())) | 0;
    lines.update(files[i]!, funcs[i]!, lineno[i]!);
  }
  const fields = [new Int32Array(count), new Int32Array(count), new Int32Array(count)] as const;
  for (const field of fields) for (let i = 0; i < count; i++) field[i] = unzigzag32(src.uvarint32());
  const frames: FrameTableEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    frames[i] = {
      filenameIndex: files[i]!,
      funcnameIndex: funcs[i]!,
      lineno: lineno[i]!,
      endLinenoDelta: fields[0][i]!,
      column: fields[1][i]!,
      endColumnDelta: (fields[2][i]! - fields[1][i]!) | 0,
      opcode: 0,
    };
  }
  for (let i = 0; i < count; i++) frames[i]!.opcode = src.u8('opcode');
  return frames;
}

/** Minimum bytes of one entry: six one-byte varints and the opcode. */
const MIN_ENTRY = 7;

export function decodeFrameTable(src: ByteSource, count: number, coding: FrameTableCoding): FrameTableEntry[] {
  if (count > Math.floor(src.remaining() / MIN_ENTRY)) {
    throw src.fail(
      ErrorCode.V2_BAD_TABLES,
      `frame count ${count} exceeds what ${src.remaining()} bytes can hold`,
      `at most ${Math.floor(src.remaining() / MIN_ENTRY)} frames`,
    );
  }
  if (coding === 'columns') return decodeFrameColumns(src, count);
  const moveToFront = coding === 'mtf';
  const files = new MoveToFront();
  const funcs = new MoveToFront();
  const frames: FrameTableEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    let at = src.pos;
    let filenameIndex = src.uvarint49();
    filenameIndex = moveToFront ? files.decode(filenameIndex, src, at) : checkedIndex(filenameIndex, src, at);
    at = src.pos;
    let funcnameIndex = src.uvarint49();
    funcnameIndex = moveToFront ? funcs.decode(funcnameIndex, src, at) : checkedIndex(funcnameIndex, src, at);
    frames[i] = {
      filenameIndex,
      funcnameIndex,
      lineno: unzigzag32(src.uvarint32()),
      endLinenoDelta: unzigzag32(src.uvarint32()),
      column: unzigzag32(src.uvarint32()),
      endColumnDelta: unzigzag32(src.uvarint32()),
      opcode: src.u8('opcode'),
    };
  }
  return frames;
}

/** CPython's conversion of one frame's location to the stored entry (notes §4). */
export function frameTableEntry(
  filenameIndex: number,
  funcnameIndex: number,
  lineno: number,
  endLineno: number,
  column: number,
  endColumn: number,
  opcode: number | null,
): FrameTableEntry {
  const int32 = (v: number) => v | 0;
  const l = int32(lineno);
  const el = int32(endLineno);
  const c = int32(column);
  const ec = int32(endColumn);
  return {
    filenameIndex,
    funcnameIndex,
    lineno: l,
    endLinenoDelta: endDelta(l, el),
    column: c,
    endColumnDelta: endDelta(c, ec),
    opcode: opcode === null || !Number.isInteger(opcode) || opcode < 0 || opcode > 254 ? 255 : opcode,
  };
}

/**
 * The raw location and opcode that CPython's conversion stores as `entry`: end = start + delta (in int32), −1 stays
 * −1.
 */
export function entryLocation(entry: FrameTableEntry): {
  lineno: number;
  endLineno: number;
  column: number;
  endColumn: number;
  opcode: number | null;
} {
  const { lineno, column } = entry;
  return {
    lineno,
    endLineno: lineno === -1 ? -1 : (lineno + entry.endLinenoDelta) | 0,
    column,
    endColumn: column === -1 ? -1 : (column + entry.endColumnDelta) | 0,
    opcode: entry.opcode === 255 ? null : entry.opcode,
  };
}

export function checkFrameTableEntry(f: FrameTableEntry): void {
  for (const key of ['filenameIndex', 'funcnameIndex'] as const) {
    if (!Number.isInteger(f[key]) || f[key] < 0 || f[key] > 0xffff_ffff) {
      throw new ProfpackError(`frame ${key} ${f[key]} is not a u32`, { code: ErrorCode.INVALID_ARGUMENT });
    }
  }
}

export interface Version2Tables {
  strings: Uint8Array;
  frames: Uint8Array;
  /** Header flags (HeaderFlag) that describe how the two tables are stored. */
  flags: number;
}

/**
 * A version-1 string table (LEB128 length + UTF-8 bytes, as the writer built
 * it) as NUL-terminated strings, byte for byte, or null when a string holds a
 * NUL. Copies bytes instead of decoding and re-encoding every string, which
 * took a third of finalize on perf_gcc's 26,348 frames.
 */
function terminateStrings(table: Uint8Array, count: number): Uint8Array | null {
  const src = new ByteSource(table, 0, table.length, 0);
  // Never longer than the input: one terminator replaces a length of at least one byte.
  const out = new Uint8Array(table.length);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const length = src.uvarint32();
    const bytes = table.subarray(src.pos, src.pos + length);
    if (bytes.includes(0)) return null;
    out.set(bytes, at);
    at += length;
    out[at++] = 0;
    src.pos += length;
  }
  return out.subarray(0, at);
}

/**
 * Version 2's tables from version 1's encoded ones (what ProfileWriter builds
 * as it interns): NUL-terminated strings when no string has a NUL, the frame
 * table in `coding` (default the column coding, the smallest measured), each
 * zstd-compressed when `level` is given.
 */
export function version2Tables(
  stringTable: Uint8Array,
  stringCount: number,
  frameTable: Uint8Array,
  frameCount: number,
  level: number | null,
  coding: FrameTableCoding = 'columns',
): Version2Tables {
  const terminated = terminateStrings(stringTable, stringCount);
  const nul = terminated !== null;
  let s = terminated ?? stringTable;
  const v1 = parseFrameTable(frameTable, 0, 0, frameCount, frameTable.length);
  const frames = new Array<FrameTableEntry>(frameCount);
  for (let i = 0; i < frameCount; i++) {
    const lineno = v1.lineno[i]!;
    const column = v1.column[i]!;
    frames[i] = {
      filenameIndex: v1.filenameIndex[i]!,
      funcnameIndex: v1.funcnameIndex[i]!,
      lineno,
      endLinenoDelta: endDelta(lineno, v1.endLineno[i]!),
      column,
      endColumnDelta: endDelta(column, v1.endColumn[i]!),
      opcode: v1.opcode[i]!,
    };
  }
  let f = encodeFrameTable(frames, coding);
  let flags =
    (coding === 'columns' ? HeaderFlag.FrameTableColumns : coding === 'mtf' ? HeaderFlag.FrameTableMtf : 0) |
    (nul ? HeaderFlag.StringsNulTerminated : 0);
  if (level !== null) {
    s = zstdCompress(s, level);
    f = zstdCompress(f, level);
    flags |= HeaderFlag.TablesZstd;
  }
  return { strings: s, frames: f, flags };
}
