/**
 * Version 2's model section (docs/format-v2.md §8): what a profile measures
 * beyond version 1's one tick per sample. Sample types, one value column per
 * type, label sets with a label column, samples without a time, thread names
 * and comments, in file order of the samples of the sample region. It has its
 * own string table, so the frame table's codings are untouched, and it sits
 * between the frame table and the stats block, found through the footer
 * (HeaderFlag.ModelSection).
 *
 * This file: the section's shape, its codes and its decoder; encoder.ts builds and encodes one.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import type { Label as ModelLabel, SampleType as ModelSampleType } from '../../../profile/index';
import { zstdDecompress } from '../../file/index';
import { ByteSource } from '../bytes';
import { decodeStringTable } from '../tables';
import { v2Native } from '../native';
import { decodeProducerFields, type ProducerFields } from './producer-fields';

// What a value column measures, and a label: lib/profile's types, under the names version 2 exported them first.
export type { ModelLabel, ModelSampleType };

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
  /**
   * Bit i set: sample i has no time (its region timestamp repeats its thread's previous one);
   * null when every sample has one.
   */
  timeAbsent: Uint8Array | null;
  threadNames: ModelThreadName[];
}

/** Byte 0 of the section. */
export const ModelCoding = { Raw: 0, Zstd: 1 } as const;
/** Presence bits of the body's flags byte. */
export const ModelPresence = {
  Period: 1,
  Duration: 2,
  TimeAbsent: 4,
  Labels: 8,
  ThreadNames: 16,
  Comments: 32,
  Producer: 64,
} as const;
const KNOWN_PRESENCE = 127;
/** How a value column is coded. */
export const ValueCoding = { DeltaZigzag: 0, Float64: 1 } as const;
/** How a label's value is stored. */
export const LabelKind = { String: 0, Integer: 1, Float64: 2, None: 3 } as const;

/** Deltas whose zigzag code fits 2^53 (exact in a double): |d| ≤ 2^52. */
export const MAX_DELTA = 2 ** 52;

export function zigzag(d: number): number {
  return d >= 0 ? 2 * d : -2 * d - 1;
}

function unzigzag(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

/** Unsigned LEB128 up to 2^53 (8 bytes), as the encoder's uvarint writes it. */
function uvarint53(src: ByteSource, what: string): number {
  let value = 0;
  let over = false;
  const at = src.pos;
  for (let i = 0; i < 8; i++) {
    const byte = src.u8(what);
    // Compared before it is added: a sum past 2^53 rounds in a double (2^53 + 1 reads as 2^53), the native twin's
    // uint64 does not. Both values here are exact (value <= 2^53, part a 7-bit group times a power of two).
    const part = (byte & 0x7f) * 2 ** (7 * i);
    if (part > 2 ** 53 - value) over = true;
    else value += part;
    if (!(byte & 0x80)) {
      if (over) break;
      return value;
    }
  }
  throw src.fail(ErrorCode.V2_BAD_MODEL, `${what} is not a LEB128 integer up to 2^53`, 'at most 8 bytes and 2^53', at);
}

/**
 * A delta-zigzag column: on the native twin (one crossing) when the addon is loaded, else in JS;
 * the same values and errors.
 */
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

function readFloat64(src: ByteSource, what: string): number {
  if (src.remaining() < 8)
    throw src.fail(ErrorCode.V2_TRUNCATED, `${what} cut off by the end of the model section`, '8 bytes');
  const v = new DataView(src.bytes.buffer, src.bytes.byteOffset + src.pos, 8).getFloat64(0, true);
  src.pos += 8;
  return v;
}

function bad(src: ByteSource, message: string, expected: string, at = src.pos): ProfpackError {
  return src.fail(ErrorCode.V2_BAD_MODEL, message, expected, at);
}

/** A count read from the section, bounded by the bytes left (each entry takes at least `minBytes`). */
function boundedCount(src: ByteSource, what: string, minBytes: number): number {
  const at = src.pos;
  const n = src.uvarint32();
  if (n * minBytes > src.remaining())
    throw bad(
      src,
      `${what} ${n} is more than the ${src.remaining()} bytes left can hold`,
      `at most ${Math.floor(src.remaining() / minBytes)}`,
      at,
    );
  return n;
}

/**
 * Decodes the section at file offset `offset` (`bytes` = the section).
 * `sampleCount` is the header's: the section must describe exactly those samples.
 */
export function decodeModelSection(
  bytes: Uint8Array,
  offset: number,
  sampleCount: number,
  limit: number,
): ModelSection {
  if (bytes.length < 1)
    throw new ProfpackError('empty model section', { code: ErrorCode.V2_BAD_MODEL, offset, expected: 'a coding byte' });
  const coding = bytes[0]!;
  if (coding !== ModelCoding.Raw && coding !== ModelCoding.Zstd)
    throw new ProfpackError(`unknown model section coding ${coding}`, {
      code: ErrorCode.V2_BAD_MODEL,
      offset,
      expected: '0 (raw) or 1 (zstd)',
    });
  const plain =
    coding === ModelCoding.Zstd
      ? zstdDecompress(bytes.subarray(1), offset + 1, 'model section', limit)
      : bytes.subarray(1);
  const src = new ByteSource(plain, 0, plain.length, offset + 1);
  const stringCount = boundedCount(src, 'string count', 1);
  const strings = decodeStringTable(src, stringCount);
  const str = (what: string): string => {
    const at = src.pos;
    const i = src.uvarint32();
    if (i >= strings.length)
      throw bad(src, `${what} names string ${i} of ${strings.length}`, `below ${strings.length}`, at);
    return strings[i]!;
  };
  const typeCount = boundedCount(src, 'sample type count', 2);
  if (typeCount === 0) throw bad(src, 'no sample types', 'at least one sample type', src.pos - 1);
  const sampleTypes: ModelSampleType[] = [];
  for (let i = 0; i < typeCount; i++) sampleTypes.push({ type: str('sample type'), unit: str('sample unit') });
  const defaultAt = src.pos;
  const defaultSampleType = src.uvarint32();
  if (defaultSampleType >= typeCount)
    throw bad(src, `default sample type ${defaultSampleType} of ${typeCount}`, `below ${typeCount}`, defaultAt);
  const presenceAt = src.pos;
  const presence = src.u8('presence flags');
  if (presence & ~KNOWN_PRESENCE)
    throw bad(
      src,
      `unknown model presence flags 0x${presence.toString(16)}`,
      `only bits of 0x${KNOWN_PRESENCE.toString(16)}`,
      presenceAt,
    );
  const section: ModelSection = {
    sampleTypes,
    defaultSampleType,
    sampleCount,
    values: [],
    labels: null,
    labelSets: [[]],
    timeAbsent: null,
    threadNames: [],
  };
  if (presence & ModelPresence.Period) {
    section.periodType = { type: str('period type'), unit: str('period unit') };
    section.period = readFloat64(src, 'period');
  }
  if (presence & ModelPresence.Duration) section.durationUs = src.uvarint64();
  const countAt = src.pos;
  const n = src.uvarint49();
  if (n !== sampleCount)
    throw bad(
      src,
      `the model section describes ${n} samples, the header declares ${sampleCount}`,
      `${sampleCount}`,
      countAt,
    );
  for (let t = 0; t < typeCount; t++) {
    const codingAt = src.pos;
    const c = src.u8('value coding');
    const length = columnLength(src, 'value column');
    const col = new ByteSource(plain, src.pos, src.pos + length, src.base);
    if (c === ValueCoding.DeltaZigzag) {
      if (n > length)
        throw bad(src, `a value column of ${length} bytes cannot hold ${n} values`, `at least ${n} bytes`, codingAt);
      section.values.push(decodeDeltaColumn(col, n));
    } else if (c === ValueCoding.Float64) {
      if (length !== n * 8)
        throw bad(src, `a float64 value column of ${length} bytes for ${n} values`, `${n * 8} bytes`, codingAt);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = readFloat64(col, 'value');
      section.values.push(out);
    } else throw bad(src, `unknown value coding ${c}`, '0 (delta zigzag) or 1 (float64)', codingAt);
    if (col.pos !== col.end)
      throw bad(src, 'value column longer than its values', 'the column used up exactly', col.pos);
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
        if (unit > strings.length)
          throw bad(
            src,
            `label unit names string ${unit - 1} of ${strings.length}`,
            `below ${strings.length + 1}`,
            unitAt,
          );
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
      if (id >= section.labelSets.length)
        throw bad(col, `label set ${id} of ${section.labelSets.length}`, `below ${section.labelSets.length}`, at);
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
  if (src.pos !== src.end)
    throw bad(src, `${src.end - src.pos} bytes after the model section's last field`, 'the section used up exactly');
  return section;
}

function columnLength(src: ByteSource, what: string): number {
  const at = src.pos;
  const length = src.uvarint49();
  if (length > src.remaining())
    throw src.fail(
      ErrorCode.V2_TRUNCATED,
      `${what} of ${length} bytes, ${src.remaining()} left`,
      `at most ${src.remaining()} bytes`,
      at,
    );
  return length;
}

/** Whether sample i of a decoded section has a time. */
export function hasTime(section: ModelSection, i: number): boolean {
  const a = section.timeAbsent;
  return a === null || (a[i >> 3]! & (1 << (i & 7))) === 0;
}
