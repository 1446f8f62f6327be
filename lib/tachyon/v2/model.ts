/**
 * Version 2's model section (docs/format-v2.md §8): what a profile measures
 * beyond version 1's one tick per sample. Sample types, one value column per
 * type, label sets with a label column, samples without a time, thread names
 * and comments, in file order of the samples of the sample region. It has its
 * own string table, so the frame table's codings are untouched, and it sits
 * between the frame table and the stats block, found through the footer
 * (HeaderFlag.ModelSection).
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { zstdCompress, zstdDecompress } from '../file/zstd';
import { ByteSink, ByteSource } from './bytes';
import { decodeStringTable, encodeStringTable } from './tables';
import { v2Native } from './native';
import { decodeProducerFields, encodeProducerFields, type ProducerFields } from './producer-fields';

/** What a value column measures (lib/profile's SampleType). */
export interface ModelSampleType {
  type: string;
  unit: string;
}

/** A label: a string, or a number with an optional unit (lib/profile's Label). */
export interface ModelLabel {
  key: string;
  str?: string;
  num?: number;
  unit?: string;
}

export interface ModelThreadName {
  threadId: bigint;
  interpreterId: number;
  name: string;
}

/** The profile-wide facts of a model section. */
export interface ModelMeta {
  sampleTypes: ModelSampleType[];
  defaultSampleType: number;
  periodType?: ModelSampleType;
  period?: number;
  durationUs?: bigint;
  comments?: string[];
  /** What recorded the file (producer-fields.ts; a Node recording: lib/recorded-by.ts's fields). */
  producer?: ProducerFields;
}

/** A decoded model section: the meta, and per-sample columns in the region's sample order. */
export interface ModelSection extends ModelMeta {
  sampleCount: number;
  /** One column per sample type. */
  values: Float64Array[];
  /** Label set of each sample (0 = none); null when no sample has labels. */
  labels: Uint32Array | null;
  /** labelSets[0] is the empty set. */
  labelSets: ModelLabel[][];
  /** Bit i set: sample i has no time (its region timestamp repeats its thread's previous one); null when every sample has one. */
  timeAbsent: Uint8Array | null;
  threadNames: ModelThreadName[];
}

/** Byte 0 of the section. */
export const ModelCoding = { Raw: 0, Zstd: 1 } as const;
/** Presence bits of the body's flags byte. */
export const ModelPresence = { Period: 1, Duration: 2, TimeAbsent: 4, Labels: 8, ThreadNames: 16, Comments: 32, Producer: 64 } as const;
const KNOWN_PRESENCE = 127;
/** How a value column is coded. */
export const ValueCoding = { DeltaZigzag: 0, Float64: 1 } as const;
/** How a label's value is stored. */
export const LabelKind = { String: 0, Integer: 1, Float64: 2, None: 3 } as const;

/** Deltas whose zigzag code fits 2^53 (exact in a double): |d| ≤ 2^52. */
const MAX_DELTA = 2 ** 52;

function zigzag(d: number): number {
  return d >= 0 ? 2 * d : -2 * d - 1;
}

function unzigzag(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

function labelKey(labels: readonly ModelLabel[]): string {
  return labels.map((l) => `${l.key}\u0001${l.str !== undefined ? `s${l.str}` : l.num !== undefined ? `n${l.num}` : '-'}\u0001${l.unit ?? ''}`).join('\u0000');
}

/** One value column, delta-zigzag coded until a value needs float64 (then the whole column is re-coded). */
class ValueColumn {
  coding: number = ValueCoding.DeltaZigzag;
  readonly sink = new ByteSink(1024);
  private previous = 0;
  private count = 0;

  add(v: number): void {
    if (this.coding === ValueCoding.DeltaZigzag) {
      const d = v - this.previous;
      if (Number.isSafeInteger(v) && Math.abs(d) <= MAX_DELTA) {
        this.sink.uvarint(zigzag(d));
        this.previous = v;
        this.count++;
        return;
      }
      this.toFloat64();
    }
    this.float64(v);
    this.count++;
  }

  private float64(v: number): void {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.sink.append(b);
  }

  private toFloat64(): void {
    const old = this.sink.take();
    const values = decodeDeltas(new ByteSource(old, 0, old.length, 0), this.count);
    this.sink.clear();
    this.coding = ValueCoding.Float64;
    for (let i = 0; i < values.length; i++) this.float64(values[i]!);
  }
}

/** Unsigned LEB128 up to 2^53 (8 bytes), as the encoder's uvarint writes it. */
function uvarint53(src: ByteSource, what: string): number {
  let value = 0;
  const at = src.pos;
  for (let i = 0; i < 8; i++) {
    const byte = src.u8(what);
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (!(byte & 0x80)) {
      if (value > 2 ** 53) break;
      return value;
    }
  }
  throw src.fail(ErrorCode.V2_BAD_MODEL, `${what} is not a LEB128 integer up to 2^53`, 'at most 8 bytes and 2^53', at);
}

/** A delta-zigzag column: on the native twin (one crossing) when the addon is loaded, else in JS; the same values and errors. */
function decodeDeltaColumn(src: ByteSource, n: number): Float64Array {
  if (v2Native === null) return decodeDeltas(src, n);
  const r = v2Native.decodeValueColumn(src.bytes.subarray(src.pos, src.end), src.offset(), n);
  if ('error' in r) throw r.error;
  src.pos += r.used;
  return r.values;
}

export function decodeDeltas(src: ByteSource, n: number): Float64Array {
  const out = new Float64Array(n);
  let v = 0;
  for (let i = 0; i < n; i++) {
    v += unzigzag(uvarint53(src, 'value'));
    out[i] = v;
  }
  return out;
}

/**
 * Builds a model section sample by sample (the writer's order), then encodes
 * it at finalize. Memory: the coded columns, a few bytes per sample.
 */
export class ModelSectionEncoder {
  private readonly columns: ValueColumn[];
  private readonly labelColumn = new ByteSink(1024);
  private readonly absent = new ByteSink(256);
  private absentByte = 0;
  private anyAbsent = false;
  private anyLabels = false;
  private readonly labelSets: ModelLabel[][] = [[]];
  private readonly labelIds = new Map<string, number>([['', 0]]);
  private readonly threadNames = new Map<string, ModelThreadName>();
  count = 0;

  constructor(private readonly meta: ModelMeta) {
    const n = meta.sampleTypes.length;
    if (n === 0) throw new ProfpackError('a model section needs at least one sample type', { code: ErrorCode.INVALID_ARGUMENT, expected: 'one sample type or more' });
    if (!Number.isInteger(meta.defaultSampleType) || meta.defaultSampleType < 0 || meta.defaultSampleType >= n) {
      throw new ProfpackError(`default sample type ${meta.defaultSampleType} is not one of the ${n} types`, { code: ErrorCode.INVALID_ARGUMENT, expected: `0..${n - 1}` });
    }
    this.columns = Array.from({ length: n }, () => new ValueColumn());
  }

  /** A label set's id in this section (0 for none). */
  internLabels(labels: readonly ModelLabel[]): number {
    if (labels.length === 0) return 0;
    const key = labelKey(labels);
    let id = this.labelIds.get(key);
    if (id === undefined) {
      id = this.labelSets.length;
      this.labelSets.push(labels.map((l) => ({ ...l })));
      this.labelIds.set(key, id);
    }
    return id;
  }

  nameThread(threadId: bigint, interpreterId: number, name: string): void {
    this.threadNames.set(`${threadId}@${interpreterId}`, { threadId, interpreterId, name });
  }

  /** One sample's values (column v at `values[v][row]`), label set and whether it has a time. */
  add(values: readonly ArrayLike<number>[], row: number, labelSet: number, hasTime: boolean): void {
    const cols = this.columns;
    for (let v = 0; v < cols.length; v++) cols[v]!.add(values[v]![row]!);
    this.labelColumn.uvarint(labelSet);
    if (labelSet !== 0) this.anyLabels = true;
    const bit = this.count & 7;
    if (!hasTime) {
      this.absentByte |= 1 << bit;
      this.anyAbsent = true;
    }
    if (bit === 7) {
      this.absent.u8(this.absentByte);
      this.absentByte = 0;
    }
    this.count++;
  }

  /** The section's bytes; `level` null = raw. */
  encode(level: number | null): Uint8Array {
    const strings: string[] = [];
    const stringIds = new Map<string, number>();
    const str = (s: string): number => {
      let id = stringIds.get(s);
      if (id === undefined) {
        id = strings.length;
        strings.push(s);
        stringIds.set(s, id);
      }
      return id;
    };
    const body = new ByteSink(4096);
    const m = this.meta;
    body.uvarint(m.sampleTypes.length);
    for (const t of m.sampleTypes) {
      body.uvarint(str(t.type));
      body.uvarint(str(t.unit));
    }
    body.uvarint(m.defaultSampleType);
    const comments = m.comments ?? [];
    const presence =
      (m.periodType !== undefined ? ModelPresence.Period : 0) |
      (m.durationUs !== undefined ? ModelPresence.Duration : 0) |
      (this.anyAbsent ? ModelPresence.TimeAbsent : 0) |
      (this.anyLabels ? ModelPresence.Labels : 0) |
      (this.threadNames.size > 0 ? ModelPresence.ThreadNames : 0) |
      (comments.length > 0 ? ModelPresence.Comments : 0) |
      (m.producer !== undefined ? ModelPresence.Producer : 0);
    body.u8(presence);
    if (presence & ModelPresence.Period) {
      body.uvarint(str(m.periodType!.type));
      body.uvarint(str(m.periodType!.unit));
      float64(body, m.period ?? 0);
    }
    if (presence & ModelPresence.Duration) body.uvarint64(m.durationUs!);
    body.uvarint(this.count);
    for (const c of this.columns) {
      body.u8(c.coding);
      body.uvarint(c.sink.length);
      body.append(c.sink.view());
    }
    if (presence & ModelPresence.TimeAbsent) {
      if ((this.count & 7) !== 0) this.absent.u8(this.absentByte);
      this.absentByte = 0;
      body.append(this.absent.view());
    }
    if (presence & ModelPresence.Labels) {
      body.uvarint(this.labelSets.length - 1);
      for (let id = 1; id < this.labelSets.length; id++) {
        const set = this.labelSets[id]!;
        body.uvarint(set.length);
        for (const l of set) {
          body.uvarint(str(l.key));
          if (l.str !== undefined) {
            body.u8(LabelKind.String);
            body.uvarint(str(l.str));
          } else if (l.num === undefined) body.u8(LabelKind.None);
          else if (Number.isSafeInteger(l.num) && Math.abs(l.num) <= MAX_DELTA) {
            body.u8(LabelKind.Integer);
            body.uvarint(zigzag(l.num));
          } else {
            body.u8(LabelKind.Float64);
            float64(body, l.num);
          }
          body.uvarint(l.unit === undefined ? 0 : str(l.unit) + 1);
        }
      }
      body.uvarint(this.labelColumn.length);
      body.append(this.labelColumn.view());
    }
    if (presence & ModelPresence.ThreadNames) {
      body.uvarint(this.threadNames.size);
      for (const t of this.threadNames.values()) {
        const b = new Uint8Array(12);
        const v = new DataView(b.buffer);
        v.setBigUint64(0, t.threadId, true);
        v.setUint32(8, t.interpreterId, true);
        body.append(b);
        body.uvarint(str(t.name));
      }
    }
    if (presence & ModelPresence.Comments) {
      body.uvarint(comments.length);
      for (const c of comments) body.uvarint(str(c));
    }
    if (presence & ModelPresence.Producer) encodeProducerFields(body, m.producer!, str);
    const out = new ByteSink(body.length + 1024);
    out.uvarint(strings.length);
    encodeStringTable(strings, false, out);
    out.append(body.view());
    const plain = out.view();
    if (level === null) return concat(ModelCoding.Raw, plain);
    return concat(ModelCoding.Zstd, zstdCompress(plain, level));
  }
}

function float64(sink: ByteSink, v: number): void {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v, true);
  sink.append(b);
}

function readFloat64(src: ByteSource, what: string): number {
  if (src.remaining() < 8) throw src.fail(ErrorCode.V2_TRUNCATED, `${what} cut off by the end of the model section`, '8 bytes');
  const v = new DataView(src.bytes.buffer, src.bytes.byteOffset + src.pos, 8).getFloat64(0, true);
  src.pos += 8;
  return v;
}

function concat(first: number, rest: Uint8Array): Uint8Array {
  const out = new Uint8Array(rest.length + 1);
  out[0] = first;
  out.set(rest, 1);
  return out;
}

function bad(src: ByteSource, message: string, expected: string, at = src.pos): ProfpackError {
  return src.fail(ErrorCode.V2_BAD_MODEL, message, expected, at);
}

/** A count read from the section, bounded by the bytes left (each entry takes at least `minBytes`). */
function boundedCount(src: ByteSource, what: string, minBytes: number): number {
  const at = src.pos;
  const n = src.uvarint32();
  if (n * minBytes > src.remaining()) throw bad(src, `${what} ${n} is more than the ${src.remaining()} bytes left can hold`, `at most ${Math.floor(src.remaining() / minBytes)}`, at);
  return n;
}

/**
 * Decodes the section at file offset `offset` (`bytes` = the section).
 * `sampleCount` is the header's: the section must describe exactly those samples.
 */
export function decodeModelSection(bytes: Uint8Array, offset: number, sampleCount: number, limit: number): ModelSection {
  if (bytes.length < 1) throw new ProfpackError('empty model section', { code: ErrorCode.V2_BAD_MODEL, offset, expected: 'a coding byte' });
  const coding = bytes[0]!;
  if (coding !== ModelCoding.Raw && coding !== ModelCoding.Zstd) throw new ProfpackError(`unknown model section coding ${coding}`, { code: ErrorCode.V2_BAD_MODEL, offset, expected: '0 (raw) or 1 (zstd)' });
  const plain = coding === ModelCoding.Zstd ? zstdDecompress(bytes.subarray(1), offset + 1, 'model section', limit) : bytes.subarray(1);
  const src = new ByteSource(plain, 0, plain.length, offset + 1);
  const stringCount = boundedCount(src, 'string count', 1);
  const strings = decodeStringTable(src, stringCount);
  const str = (what: string): string => {
    const at = src.pos;
    const i = src.uvarint32();
    if (i >= strings.length) throw bad(src, `${what} names string ${i} of ${strings.length}`, `below ${strings.length}`, at);
    return strings[i]!;
  };
  const typeCount = boundedCount(src, 'sample type count', 2);
  if (typeCount === 0) throw bad(src, 'no sample types', 'at least one sample type', src.pos - 1);
  const sampleTypes: ModelSampleType[] = [];
  for (let i = 0; i < typeCount; i++) sampleTypes.push({ type: str('sample type'), unit: str('sample unit') });
  const defaultAt = src.pos;
  const defaultSampleType = src.uvarint32();
  if (defaultSampleType >= typeCount) throw bad(src, `default sample type ${defaultSampleType} of ${typeCount}`, `below ${typeCount}`, defaultAt);
  const presenceAt = src.pos;
  const presence = src.u8('presence flags');
  if (presence & ~KNOWN_PRESENCE) throw bad(src, `unknown model presence flags 0x${presence.toString(16)}`, `only bits of 0x${KNOWN_PRESENCE.toString(16)}`, presenceAt);
  const section: ModelSection = { sampleTypes, defaultSampleType, sampleCount, values: [], labels: null, labelSets: [[]], timeAbsent: null, threadNames: [] };
  if (presence & ModelPresence.Period) {
    section.periodType = { type: str('period type'), unit: str('period unit') };
    section.period = readFloat64(src, 'period');
  }
  if (presence & ModelPresence.Duration) section.durationUs = src.uvarint64();
  const countAt = src.pos;
  const n = src.uvarint49();
  if (n !== sampleCount) throw bad(src, `the model section describes ${n} samples, the header declares ${sampleCount}`, `${sampleCount}`, countAt);
  for (let t = 0; t < typeCount; t++) {
    const codingAt = src.pos;
    const c = src.u8('value coding');
    const length = columnLength(src, 'value column');
    const col = new ByteSource(plain, src.pos, src.pos + length, src.base);
    if (c === ValueCoding.DeltaZigzag) {
      if (n > length) throw bad(src, `a value column of ${length} bytes cannot hold ${n} values`, `at least ${n} bytes`, codingAt);
      section.values.push(decodeDeltaColumn(col, n));
    } else if (c === ValueCoding.Float64) {
      if (length !== n * 8) throw bad(src, `a float64 value column of ${length} bytes for ${n} values`, `${n * 8} bytes`, codingAt);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = readFloat64(col, 'value');
      section.values.push(out);
    } else throw bad(src, `unknown value coding ${c}`, '0 (delta zigzag) or 1 (float64)', codingAt);
    if (col.pos !== col.end) throw bad(src, 'value column longer than its values', 'the column used up exactly', col.pos);
    src.pos = col.end;
  }
  if (presence & ModelPresence.TimeAbsent) {
    const size = Math.ceil(n / 8);
    if (src.remaining() < size) throw src.fail(ErrorCode.V2_TRUNCATED, 'time-absent bitmap cut off', `${size} bytes`);
    section.timeAbsent = plain.slice(src.pos, src.pos + size);
    src.pos += size;
  }
  if (presence & ModelPresence.Labels) {
    const sets = boundedCount(src, 'label set count', 1);
    for (let s = 0; s < sets; s++) {
      const count = boundedCount(src, 'label count', 3);
      const set: ModelLabel[] = [];
      for (let k = 0; k < count; k++) {
        const label: ModelLabel = { key: str('label key') };
        const kindAt = src.pos;
        const kind = src.u8('label kind');
        if (kind === LabelKind.String) label.str = str('label value');
        else if (kind === LabelKind.Integer) label.num = unzigzag(uvarint53(src, 'label number'));
        else if (kind === LabelKind.Float64) label.num = readFloat64(src, 'label number');
        else if (kind !== LabelKind.None) throw bad(src, `unknown label kind ${kind}`, '0..3', kindAt);
        const unitAt = src.pos;
        const unit = src.uvarint32();
        if (unit > strings.length) throw bad(src, `label unit names string ${unit - 1} of ${strings.length}`, `below ${strings.length + 1}`, unitAt);
        if (unit > 0) label.unit = strings[unit - 1]!;
        set.push(label);
      }
      section.labelSets.push(set);
    }
    const length = columnLength(src, 'label column');
    if (n > length) throw bad(src, `a label column of ${length} bytes cannot hold ${n} ids`, `at least ${n} bytes`);
    const col = new ByteSource(plain, src.pos, src.pos + length, src.base);
    const labels = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const at = col.pos;
      const id = col.uvarint32();
      if (id >= section.labelSets.length) throw bad(col, `label set ${id} of ${section.labelSets.length}`, `below ${section.labelSets.length}`, at);
      labels[i] = id;
    }
    if (col.pos !== col.end) throw bad(src, 'label column longer than its ids', 'the column used up exactly', col.pos);
    src.pos = col.end;
    section.labels = labels;
  }
  if (presence & ModelPresence.ThreadNames) {
    const count = boundedCount(src, 'thread name count', 13);
    for (let i = 0; i < count; i++) {
      const v = new DataView(plain.buffer, plain.byteOffset + src.pos, 12);
      const threadId = v.getBigUint64(0, true);
      const interpreterId = v.getUint32(8, true);
      src.pos += 12;
      section.threadNames.push({ threadId, interpreterId, name: str('thread name') });
    }
  }
  if (presence & ModelPresence.Comments) {
    const count = boundedCount(src, 'comment count', 1);
    section.comments = [];
    for (let i = 0; i < count; i++) section.comments.push(str('comment'));
  }
  if (presence & ModelPresence.Producer) {
    section.producer = decodeProducerFields(src, {
      str,
      count: (what, minBytes) => boundedCount(src, what, minBytes),
      uvarint53: (what) => uvarint53(src, what),
      float64: (what) => readFloat64(src, what),
      bad: (message, expected, at) => bad(src, message, expected, at),
    });
  }
  if (src.pos !== src.end) throw bad(src, `${src.end - src.pos} bytes after the model section's last field`, 'the section used up exactly');
  return section;
}

function columnLength(src: ByteSource, what: string): number {
  const at = src.pos;
  const length = src.uvarint49();
  if (length > src.remaining()) throw src.fail(ErrorCode.V2_TRUNCATED, `${what} of ${length} bytes, ${src.remaining()} left`, `at most ${src.remaining()} bytes`, at);
  return length;
}

/** Whether sample i of a decoded section has a time. */
export function hasTime(section: ModelSection, i: number): boolean {
  const a = section.timeAbsent;
  return a === null || (a[i >> 3]! & (1 << (i & 7))) === 0;
}
