/**
 * Version-2 string and frame tables: version 1's layouts (lib/tachyon notes
 * §4), optionally with move-to-front codes for the frame table's filename and
 * funcname indices (memtrace's 31-entry lists, seed 004), and optionally each
 * table as one zstd frame (HeaderFlag.TablesZstd).
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ByteSink, ByteSource } from './bytes';
import { MTF_SIZE } from './format';

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

export function encodeStringTable(strings: readonly string[], out = new ByteSink(1024)): Uint8Array {
  for (const s of strings) {
    const bytes = textEncoder.encode(s);
    out.uvarint(bytes.length);
    out.append(bytes);
  }
  return out.take();
}

export function decodeStringTable(src: ByteSource, count: number): string[] {
  if (count > src.remaining()) {
    throw src.fail(ErrorCode.V2_BAD_TABLES, `string count ${count} exceeds the ${src.remaining()} bytes of the string table`, `at most ${src.remaining()} strings`);
  }
  const strings: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = src.pos;
    const length = src.uvarint32();
    if (length > src.remaining()) throw src.fail(ErrorCode.V2_BAD_TABLES, `string ${i} of ${length} bytes overflows the string table`, `at most ${src.remaining()} bytes`, at);
    strings[i] = textDecoder.decode(src.bytes.subarray(src.pos, src.pos + length));
    src.pos += length;
  }
  return strings;
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
        throw src.fail(ErrorCode.V2_BAD_MTF, `move-to-front code ${code} but the list holds ${this.list.length} names`, `a code below ${this.list.length}, or ${MTF_SIZE} + a string index`, at);
      }
      const index = this.list[code]!;
      this.list.splice(code, 1);
      this.list.unshift(index);
      return index;
    }
    const index = code - MTF_SIZE;
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

export function encodeFrameTable(frames: readonly FrameTableEntry[], moveToFront: boolean, out = new ByteSink(1024)): Uint8Array {
  const files = new MoveToFront();
  const funcs = new MoveToFront();
  for (const f of frames) {
    out.uvarint(moveToFront ? files.encode(f.filenameIndex) : f.filenameIndex);
    out.uvarint(moveToFront ? funcs.encode(f.funcnameIndex) : f.funcnameIndex);
    out.uvarint(zigzag32(f.lineno));
    out.uvarint(zigzag32(f.endLinenoDelta));
    out.uvarint(zigzag32(f.column));
    out.uvarint(zigzag32(f.endColumnDelta));
    out.u8(f.opcode);
  }
  return out.take();
}

/** Minimum bytes of one entry: six one-byte varints and the opcode. */
const MIN_ENTRY = 7;

export function decodeFrameTable(src: ByteSource, count: number, moveToFront: boolean): FrameTableEntry[] {
  if (count > Math.floor(src.remaining() / MIN_ENTRY)) {
    throw src.fail(ErrorCode.V2_BAD_TABLES, `frame count ${count} exceeds what ${src.remaining()} bytes can hold`, `at most ${Math.floor(src.remaining() / MIN_ENTRY)} frames`);
  }
  const files = new MoveToFront();
  const funcs = new MoveToFront();
  const frames: FrameTableEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    let at = src.pos;
    let filenameIndex = src.uvarint32();
    if (moveToFront) filenameIndex = files.decode(filenameIndex, src, at);
    at = src.pos;
    let funcnameIndex = src.uvarint32();
    if (moveToFront) funcnameIndex = funcs.decode(funcnameIndex, src, at);
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
    endLinenoDelta: l === -1 || el === -1 ? 0 : int32(el - l),
    column: c,
    endColumnDelta: c === -1 || ec === -1 ? 0 : int32(ec - c),
    opcode: opcode === null || !Number.isInteger(opcode) || opcode < 0 || opcode > 254 ? 255 : opcode,
  };
}

export function checkFrameTableEntry(f: FrameTableEntry): void {
  for (const key of ['filenameIndex', 'funcnameIndex'] as const) {
    if (!Number.isInteger(f[key]) || f[key] < 0 || f[key] > 0xffff_ffff) {
      throw new ProfpackError(`frame ${key} ${f[key]} is not a u32`, { code: ErrorCode.INVALID_ARGUMENT });
    }
  }
}
