/**
 * Builds version 2's model section (docs/format-v2.md §8; its shape, codes and
 * decoder are in model.ts) sample by sample, in the writer's order, and
 * encodes it at finalize.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { LabelSets } from '../../../profile/index';
import { zstdCompress } from '../../file/index';
import { ByteSink, ByteSource } from '../bytes';
import { encodeStringTable } from '../tables';
import { encodeProducerFields } from './producer-fields';
import {
  LabelKind,
  MAX_DELTA,
  ModelCoding,
  ModelPresence,
  ValueCoding,
  decodeDeltas,
  zigzag,
  type ModelLabel,
  type ModelMeta,
  type ModelThreadName,
} from './section';

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
    float64(this.sink, v);
    this.count++;
  }

  private toFloat64(): void {
    const old = this.sink.take();
    const values = decodeDeltas(new ByteSource(old, 0, old.length, 0), this.count);
    this.sink.clear();
    this.coding = ValueCoding.Float64;
    for (let i = 0; i < values.length; i++) float64(this.sink, values[i]!);
  }
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
  private readonly labelSets = new LabelSets();
  private readonly threadNames = new Map<string, ModelThreadName>();
  count = 0;

  constructor(private readonly meta: ModelMeta) {
    const n = meta.sampleTypes.length;
    if (n === 0)
      throw new ProfpackError('a model section needs at least one sample type', {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'one sample type or more',
      });
    if (!Number.isInteger(meta.defaultSampleType) || meta.defaultSampleType < 0 || meta.defaultSampleType >= n) {
      throw new ProfpackError(`default sample type ${meta.defaultSampleType} is not one of the ${n} types`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `0..${n - 1}`,
      });
    }
    this.columns = Array.from({ length: n }, () => new ValueColumn());
  }

  /** A label set's id in this section (0 for none). */
  internLabels(labels: readonly ModelLabel[]): number {
    return this.labelSets.intern(labels);
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
      const sets = this.labelSets.list;
      body.uvarint(sets.length - 1);
      for (let id = 1; id < sets.length; id++) {
        const set = sets[id]!;
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

function concat(first: number, rest: Uint8Array): Uint8Array {
  const out = new Uint8Array(rest.length + 1);
  out[0] = first;
  out.set(rest, 1);
  return out;
}
