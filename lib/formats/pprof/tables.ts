/**
 * The first pass over a profile.proto: the scalar fields, the string table,
 * and the mapping / function / location tables turned into model frames.
 * Samples are only counted here (read.ts decodes them batch by batch),
 * because the tables they name may come after them in the file.
 */
import { ANONYMOUS, type FrameTable } from '../../profile/index';
import type { Frame, SampleType } from '../../profile/index';
import {
  badPprof,
  FunctionField,
  LineField,
  LocationField,
  MappingField,
  ProfileField,
  ProtoReader,
  ValueTypeField,
  WireType,
} from './proto';

export interface PprofHeader {
  strings: string[];
  sampleTypes: [type: number, unit: number][];
  sampleCount: number;
  /** Offset of the first sample field (for error messages). */
  firstSampleAt: number;
  timeNanos: bigint;
  durationNanos: bigint;
  periodType?: [type: number, unit: number];
  period: number;
  comments: number[];
  defaultSampleType: number;
  dropFrames: number;
  keepFrames: number;
  mappings: number[];
  locations: number[];
  functions: number[];
}

/** Expects a field of one wire type (profile.proto has one per field). */
function want(wireType: number, expected: number, field: string, at: number): void {
  if (wireType !== expected)
    throw badPprof(`${field} has wire type ${wireType}`, at, `wire type ${expected} for ${field}`);
}

const utf8 = new TextDecoder('utf-8');

function readValueType(r: ProtoReader, end: number): [number, number] {
  const outer = r.end;
  r.end = end;
  let type = 0;
  let unit = 0;
  while (r.pos < end) {
    const at = r.pos;
    const tag = r.tag();
    if (tag >>> 3 === ValueTypeField.type && (tag & 7) === WireType.varint) type = r.int64();
    else if (tag >>> 3 === ValueTypeField.unit && (tag & 7) === WireType.varint) unit = r.int64();
    else r.skip(tag & 7, at);
  }
  r.end = outer;
  return [type, unit];
}

/** Pass one: every top-level field, samples counted and skipped, tables kept as byte ranges. */
export function scanProfile(bytes: Uint8Array): PprofHeader {
  const r = new ProtoReader(bytes);
  const h: PprofHeader = {
    strings: [],
    sampleTypes: [],
    sampleCount: 0,
    firstSampleAt: -1,
    timeNanos: 0n,
    durationNanos: 0n,
    period: 0,
    comments: [],
    defaultSampleType: 0,
    dropFrames: 0,
    keepFrames: 0,
    mappings: [],
    locations: [],
    functions: [],
  };
  while (!r.done) {
    const at = r.pos;
    const tag = r.tag();
    const field = tag >>> 3;
    const wt = tag & 7;
    switch (field) {
      case ProfileField.sample:
        want(wt, WireType.bytes, 'sample', at);
        if (h.firstSampleAt < 0) h.firstSampleAt = at;
        r.pos = r.sub();
        h.sampleCount++;
        break;
      case ProfileField.stringTable: {
        want(wt, WireType.bytes, 'string_table', at);
        const end = r.sub();
        h.strings.push(decodeString(bytes, r.pos, end));
        r.pos = end;
        break;
      }
      case ProfileField.sampleType:
      case ProfileField.periodType: {
        want(wt, WireType.bytes, field === ProfileField.sampleType ? 'sample_type' : 'period_type', at);
        const vt = readValueType(r, r.sub());
        if (field === ProfileField.sampleType) h.sampleTypes.push(vt);
        else h.periodType = vt;
        break;
      }
      case ProfileField.mapping:
      case ProfileField.location:
      case ProfileField.function: {
        want(
          wt,
          WireType.bytes,
          field === ProfileField.mapping ? 'mapping' : field === ProfileField.location ? 'location' : 'function',
          at,
        );
        const end = r.sub();
        const list =
          field === ProfileField.mapping ? h.mappings : field === ProfileField.location ? h.locations : h.functions;
        list.push(r.pos, end);
        r.pos = end;
        break;
      }
      case ProfileField.timeNanos:
      case ProfileField.durationNanos:
        want(wt, WireType.varint, field === ProfileField.timeNanos ? 'time_nanos' : 'duration_nanos', at);
        r.int64();
        if (field === ProfileField.timeNanos) h.timeNanos = r.lastBigInt();
        else h.durationNanos = r.lastBigInt();
        break;
      case ProfileField.period:
        want(wt, WireType.varint, 'period', at);
        h.period = r.int64();
        break;
      case ProfileField.comment:
        if (wt === WireType.bytes) {
          const end = r.sub();
          const outer = r.end;
          r.end = end;
          while (r.pos < end) h.comments.push(r.int64());
          r.end = outer;
        } else {
          want(wt, WireType.varint, 'comment', at);
          h.comments.push(r.int64());
        }
        break;
      case ProfileField.defaultSampleType:
      case ProfileField.dropFrames:
      case ProfileField.keepFrames: {
        want(wt, WireType.varint, 'a string index', at);
        const v = r.int64();
        if (field === ProfileField.defaultSampleType) h.defaultSampleType = v;
        else if (field === ProfileField.dropFrames) h.dropFrames = v;
        else h.keepFrames = v;
        break;
      }
      default:
        r.skip(wt, at);
    }
  }
  return h;
}

/** Short ASCII strings (most of a string table) without TextDecoder's call cost. */
function decodeString(bytes: Uint8Array, from: number, to: number): string {
  if (to - from > 32) return utf8.decode(bytes.subarray(from, to));
  let s = '';
  for (let i = from; i < to; i++) {
    const c = bytes[i]!;
    if (c >= 0x80) return utf8.decode(bytes.subarray(from, to));
    s += String.fromCharCode(c);
  }
  return s;
}

/** A string-table index checked against the table. */
export function stringAt(strings: readonly string[], index: number, at: number): string {
  const s = strings[index];
  if (s === undefined)
    throw badPprof(
      `string index ${index} is outside the string table (${strings.length} strings)`,
      at,
      `an index below ${strings.length}`,
    );
  return s;
}

/** pprof's location ids → the model frames each stands for, innermost first. */
export interface LocationFrames {
  /** Index of a location id, -1 when there is none. */
  indexOf(id: number): number;
  /** Frames of location index i are frameIds[start[i] .. start[i + 1]). */
  start: Int32Array;
  frameIds: Uint32Array;
}

interface FunctionInfo {
  name: string;
  filename: string;
}

function idIndex(ids: number[]): (id: number) => number {
  let max = 0;
  for (const id of ids) if (id > max) max = id;
  // Go numbers ids 1..n; a dense table is then one array read per lookup.
  if (max <= ids.length * 2 + 1024) {
    const dense = new Int32Array(max + 1).fill(-1);
    ids.forEach((id, i) => (dense[id] = i));
    return (id) => (id >= 0 && id <= max ? dense[id]! : -1);
  }
  const byId = new Map<number, number>();
  ids.forEach((id, i) => byId.set(id, i));
  return (id) => byId.get(id) ?? -1;
}

/**
 * Functions, mappings and locations → frames in `frames`. A location without
 * lines (unsymbolized native code) is named after its mapping's file,
 * `[libc.so.6]`, as pprof shows it, or its address when it has no mapping.
 * pprof lists a location's inlined callees first and the function they were
 * inlined into last: the model's innermost-first order already.
 */
export function readLocations(bytes: Uint8Array, h: PprofHeader, frames: FrameTable): LocationFrames {
  const strings = h.strings;
  const r = new ProtoReader(bytes);
  const functions = new Map<number, FunctionInfo>();
  for (let i = 0; i < h.functions.length; i += 2) {
    r.pos = h.functions[i]!;
    r.end = h.functions[i + 1]!;
    let id = 0;
    let name = 0;
    let systemName = 0;
    let filename = 0;
    while (!r.done) {
      const at = r.pos;
      const tag = r.tag();
      if ((tag & 7) !== WireType.varint) r.skip(tag & 7, at);
      else if (tag >>> 3 === FunctionField.id) id = r.uint64();
      else if (tag >>> 3 === FunctionField.name) name = r.int64();
      else if (tag >>> 3 === FunctionField.systemName) systemName = r.int64();
      else if (tag >>> 3 === FunctionField.filename) filename = r.int64();
      else r.skip(tag & 7, at);
    }
    const at = h.functions[i]!;
    const named = stringAt(strings, name, at) || stringAt(strings, systemName, at);
    // profpack writes a nameless function as "(anonymous)"; the model's name for it is ''.
    functions.set(id, { name: named === ANONYMOUS ? '' : named, filename: stringAt(strings, filename, at) });
  }
  const mappings = new Map<number, string>();
  for (let i = 0; i < h.mappings.length; i += 2) {
    r.pos = h.mappings[i]!;
    r.end = h.mappings[i + 1]!;
    let id = 0;
    let filename = 0;
    while (!r.done) {
      const at = r.pos;
      const tag = r.tag();
      if (tag >>> 3 === MappingField.id && (tag & 7) === WireType.varint) id = r.uint64();
      else if (tag >>> 3 === MappingField.filename && (tag & 7) === WireType.varint) filename = r.int64();
      else r.skip(tag & 7, at);
    }
    mappings.set(id, stringAt(strings, filename, h.mappings[i]!));
  }
  const count = h.locations.length / 2;
  const ids: number[] = new Array<number>(count);
  const start = new Int32Array(count + 1);
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const locAt = h.locations[2 * k]!;
    r.pos = locAt;
    r.end = h.locations[2 * k + 1]!;
    let id = 0;
    let mappingId = 0;
    let address = 0n;
    let lines = 0;
    start[k] = out.length;
    while (!r.done) {
      const at = r.pos;
      const tag = r.tag();
      const field = tag >>> 3;
      if (field === LocationField.line && (tag & 7) === WireType.bytes) {
        out.push(readLine(r, r.sub(), functions, frames, at));
        lines++;
      } else if ((tag & 7) !== WireType.varint) r.skip(tag & 7, at);
      else if (field === LocationField.id) id = r.uint64();
      else if (field === LocationField.mappingId) mappingId = r.uint64();
      else if (field === LocationField.address) {
        r.uint64();
        address = BigInt.asUintN(64, r.lastBigInt());
      } else r.skip(tag & 7, at);
    }
    if (id === 0) throw badPprof('a location has id 0 (reserved)', locAt, 'a location id above 0');
    if (lines === 0) {
      const file = mappings.get(mappingId) ?? '';
      const base = file.slice(file.lastIndexOf('/') + 1);
      out.push(frames.intern(frameOf(base === '' ? `0x${address.toString(16)}` : `[${base}]`, file, 0, 0)));
    }
    ids[k] = id;
  }
  start[count] = out.length;
  return { indexOf: idIndex(ids), start, frameIds: Uint32Array.from(out) };
}

function readLine(
  r: ProtoReader,
  end: number,
  functions: Map<number, FunctionInfo>,
  frames: FrameTable,
  lineAt: number,
): number {
  const outer = r.end;
  r.end = end;
  let functionId = 0;
  let line = 0;
  let column = 0;
  while (r.pos < end) {
    const at = r.pos;
    const tag = r.tag();
    if ((tag & 7) !== WireType.varint) r.skip(tag & 7, at);
    else if (tag >>> 3 === LineField.functionId) functionId = r.uint64();
    else if (tag >>> 3 === LineField.line) line = r.int64();
    else if (tag >>> 3 === LineField.column) column = r.int64();
    else r.skip(tag & 7, at);
  }
  r.end = outer;
  const fn = functions.get(functionId);
  if (fn === undefined)
    throw badPprof(
      `a location line names function ${functionId}, which the profile does not have`,
      lineAt,
      'a function id of the profile',
    );
  return frames.intern(frameOf(fn.name, fn.filename, line, column));
}

/** pprof's 0 means "no line / column": the model's null. */
function frameOf(funcname: string, filename: string, line: number, column: number): Frame {
  return {
    filename,
    funcname,
    lineno: line > 0 ? line : null,
    endLineno: null,
    column: column > 0 ? column : null,
    endColumn: null,
    opcode: null,
  };
}

/** The model's sample types from the header's string indices. */
export function sampleTypesOf(h: PprofHeader): SampleType[] {
  return h.sampleTypes.map(([t, u]) => ({ type: stringAt(h.strings, t, 0), unit: stringAt(h.strings, u, 0) }));
}
