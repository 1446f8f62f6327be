/**
 * Model → profile.proto, streamed: samples are encoded as their batches come
 * and handed to the target in gzip members of about 1 MiB (a gzip file may be
 * several members; Go's gzip.Reader and zlib read them as one stream), and
 * the tables (locations, functions, strings) follow them, since protobuf
 * fields may come in any order. Memory grows with distinct stacks, label sets
 * and strings, never with records.
 *
 * - Every sample type and unit, the default type, period type and period,
 *   duration, time (time_nanos only on the Unix epoch; otherwise 0 and a
 *   comment says so), comments and labels (numbers with their units).
 * - Per record (default): one Sample per record with all its values; its
 *   thread as `thread_id` (unit "id"), `interpreter_id`, `thread_name` unless
 *   its label set already names the thread (a pprof read back), its time as
 *   `timestamp_us` (or `end_timestamp_ns` for a @datadog/pprof source) and a
 *   non-zero `status`. Thread 0 of interpreter 0 without a name is what a
 *   sample without thread labels reads as, so it gets none.
 * - Aggregated: one Sample per distinct (stack, thread, label set) with its
 *   values summed; time and status are gone, as in the profiles Go writes.
 * - Values are int64: fractional ones (real times) are rounded with the
 *   remainder carried to the next record, so every column's total is its
 *   model sum rounded once. The remainder (and an aggregated sum) is kept as
 *   two doubles whose sum is exact: one double rounds 15.1 added to
 *   1976143.5, and a total can then land on the wrong side of a half.
 * - One Location per model frame (one Line: function, line, column), one
 *   Function per (name, file); pprof's 0 is the model's null. End line, end
 *   column and opcode have no place in profile.proto.
 */
import { gzipSync } from 'node:zlib';
import {
  anonymousName,
  ExactSums,
  isEpochUs,
  lastTickUs,
  nanosPerUnit,
  roundExact,
  sampleCountColumn,
  timeColumnOrDefault,
  twoSumError,
} from '../../profile/index';
import type { ProfileSource } from '../../profile/index';
import { ByteSink } from '../../byte-sink';
import type { WriteOptions, WriteTarget } from '../adapter';
import {
  FunctionField,
  DATADOG,
  ID_UNIT,
  LineField,
  LocationField,
  NOT_EPOCH_COMMENT,
  PprofLabel,
  ProfileField,
  SampleField,
  THREAD_ID_KEYS,
  ValueTypeField,
  WireType,
} from './proto';
import {
  bytesField,
  copyInto,
  int64,
  INT64_MAX,
  labelNum,
  labelNumParts,
  labelStr,
  PprofStringTable,
  tagOf,
  TWO_POW_32,
  TWO_POW_63,
  varintField,
} from './encode';
import { cannotWrite } from '../io';
import { SampleKeys } from './sample-keys';
import { grown } from '../../typed-arrays';

export interface PprofWriteOptions extends WriteOptions {
  /** gzip the output (default true, as Go writes it); false writes raw profile.proto. */
  gzip?: boolean;
  /** gzip level (default 1: Go's runtime/pprof writes with gzip.BestSpeed). */
  gzipLevel?: number;
}

/** Bytes gathered before a gzip member (or raw chunk) goes to the target. */
const CHUNK = 1 << 20;
/**
 * zlib's output buffer for a member: one call fills it (a member of CHUNK bytes compresses to well under it),
 * where the default 16 KiB took about ten calls and a concatenation. The bytes zlib writes do not depend on it.
 */
const GZIP_OUT = 1 << 18;
/** Bytes of a page of location fields: a field (5 bytes an id at most) longer than a page gets a page of its own. */
const FIELD_PAGE = 1 << 18;

/** The output: a ByteSink flushed to the target in chunks. */
class ChunkedOutput {
  readonly sink = new ByteSink(CHUNK + (CHUNK >> 2));

  constructor(
    private readonly target: WriteTarget,
    private readonly gzip: boolean,
    private readonly level: number,
  ) {}

  maybeFlush(): void {
    if (this.sink.length >= CHUNK) this.flush();
  }

  flush(): void {
    if (this.sink.length === 0) return;
    this.target.write(
      this.gzip ? gzipSync(this.sink.view(), { level: this.level, chunkSize: GZIP_OUT }) : this.sink.take(),
    );
    this.sink.clear();
  }
}
/** Encodes a source's samples and tables; `write` drives it. */
class PprofEncoder {
  readonly strings = new PprofStringTable();
  // Each stack's location field (tag, length, packed ids), encoded once into pages that never move: a view of it
  // per distinct stack, in first-use order (a dense array), found by stack id through a typed column (-1: not yet).
  // A record then copies its field with one TypedArray set, no view made per record.
  private page = new Uint8Array(FIELD_PAGE);
  private pageUsed = 0;
  private readonly scratch = new ByteSink(256);
  private readonly fieldHead = new ByteSink(16);
  private readonly fields: Uint8Array[] = [];
  private fieldOfStack = new Int32Array(1024).fill(-1);
  private readonly labelBytes: ({ bytes: Uint8Array; namesThread: boolean } | undefined)[] = [];
  private readonly threadBytes: (Uint8Array | undefined)[] = [];
  private readonly usedFrames: Uint8Array[] = [];
  /** Per column the rounding remainder carried so far: carry + carryLow, exactly (twoSumError). */
  readonly carry: Float64Array;
  readonly carryLow: Float64Array;
  /** roundExact's rest, read into carry and carryLow. */
  private readonly remainder = new Float64Array(2);
  readonly timeKey: number;
  readonly timeUnit: number;
  readonly timeScale: number;
  readonly kStatus: number;
  minTime = Infinity;
  /** The latest tick: a record of c ticks ends c - 1 intervals after its time. */
  maxTime = -Infinity;
  private readonly countColumn: number;
  private readonly intervalUs: number;
  /** Samples begun so far: the index an error names. */
  samples = 0;

  constructor(private readonly source: ProfileSource) {
    this.carry = new Float64Array(source.meta.sampleTypes.length);
    this.countColumn = sampleCountColumn(source.meta);
    this.intervalUs = Number(source.meta.sampleIntervalUs);
    this.carryLow = new Float64Array(source.meta.sampleTypes.length);
    const datadog = source.meta.origin?.producer === DATADOG;
    this.timeKey = this.strings.id(datadog ? PprofLabel.endTimestampNs : PprofLabel.timestampUs);
    // @datadog/pprof writes its end times without a unit.
    this.timeUnit = datadog ? 0 : this.strings.id('microseconds');
    this.timeScale = datadog ? 1000 : 1;
    this.kStatus = this.strings.id(PprofLabel.status);
  }

  /** `stack`'s location field (none for the empty stack: an empty view), encoded the first time it is met. */
  private locationField(stack: number): Uint8Array {
    if (stack >= this.fieldOfStack.length) this.fieldOfStack = grown(this.fieldOfStack, stack, -1);
    const k = this.fieldOfStack[stack]!;
    return k >= 0 ? this.fields[k]! : this.encodeStack(stack);
  }

  private encodeStack(stack: number): Uint8Array {
    const stacks = this.source.stacks;
    const ids = this.scratch;
    ids.clear();
    // Location id = frame index + 1, innermost first, by one walk to the root.
    for (let s = stack; s !== 0; s = stacks.parent(s)) {
      const frame = stacks.frame(s);
      this.markFrame(frame);
      ids.uvarint(frame + 1);
    }
    // The field's tag and length (none for the empty stack), then the ids.
    const head = this.fieldHead;
    head.clear();
    if (ids.length > 0) {
      head.uvarint(tagOf(SampleField.locationId, WireType.bytes));
      head.uvarint(ids.length);
    }
    const size = head.length + ids.length;
    if (this.pageUsed + size > this.page.length) {
      this.page = new Uint8Array(Math.max(FIELD_PAGE, size));
      this.pageUsed = 0;
    }
    const field = this.page.subarray(this.pageUsed, this.pageUsed + size);
    this.pageUsed += size;
    field.set(head.view());
    field.set(ids.view(), head.length);
    this.fieldOfStack[stack] = this.fields.length;
    this.fields.push(field);
    return field;
  }

  private markFrame(frame: number): void {
    const page = frame >>> 16;
    while (this.usedFrames.length <= page) this.usedFrames.push(new Uint8Array(65536));
    this.usedFrames[page]![frame & 0xffff] = 1;
  }

  isUsed(frame: number): boolean {
    return this.usedFrames[frame >>> 16]?.[frame & 0xffff] === 1;
  }

  labels(set: number): { bytes: Uint8Array; namesThread: boolean } {
    let got = this.labelBytes[set];
    if (got === undefined) {
      const sink = new ByteSink(64);
      let namesThread = false;
      for (const l of this.source.labelSets[set] ?? []) {
        if (THREAD_ID_KEYS.includes(l.key)) namesThread = true;
        const key = this.strings.id(l.key);
        if (l.str !== undefined) labelStr(sink, key, this.strings.id(l.str));
        else labelNum(sink, key, l.num ?? 0, l.unit === undefined ? 0 : this.strings.id(l.unit));
      }
      got = { bytes: sink.take(), namesThread };
      this.labelBytes[set] = got;
    }
    return got;
  }

  thread(index: number): Uint8Array {
    let bytes = this.threadBytes[index];
    if (bytes === undefined) {
      const t = this.source.threads[index];
      const sink = new ByteSink(32);
      if (t !== undefined && (t.threadId !== 0n || t.interpreterId !== 0 || t.name !== undefined)) {
        const idUnit = this.strings.id(ID_UNIT);
        const key = this.strings.id(PprofLabel.threadId);
        // Label numbers are int64: a u64 thread id beyond it is written as text.
        if (t.threadId <= INT64_MAX)
          labelNum(sink, key, Number.isSafeInteger(Number(t.threadId)) ? Number(t.threadId) : t.threadId, idUnit);
        else labelStr(sink, key, this.strings.id(t.threadId.toString()));
        if (t.interpreterId !== 0) labelNum(sink, this.strings.id(PprofLabel.interpreterId), t.interpreterId, idUnit);
        if (t.name !== undefined) labelStr(sink, this.strings.id(PprofLabel.threadName), this.strings.id(t.name));
      }
      bytes = sink.take();
      this.threadBytes[index] = bytes;
    }
    return bytes;
  }

  /**
   * Appends value `v + below` of column `c` as an int64, carrying the rounding remainder (`below`: the part of an
   * aggregated sum that its double `v` could not hold).
   */
  value(sink: ByteSink, c: number, v: number, below = 0): void {
    let whole = v;
    if (!Number.isInteger(v) || below !== 0) {
      const add = Number.isFinite(v) ? v : 0;
      const carry = this.carry[c]!;
      const sum = carry + add;
      whole = roundExact(sum, this.carryLow[c]! + twoSumError(carry, add, sum) + below, this.remainder);
      this.carry[c] = this.remainder[0]!;
      this.carryLow[c] = this.remainder[1]!;
    }
    // int64 holds -2^63 … 2^63 - 1: a value beyond is refused, never wrapped or clamped.
    if (whole >= TWO_POW_63 || whole < -TWO_POW_63) {
      const type = this.source.meta.sampleTypes[c]!;
      throw cannotWrite(
        'a pprof profile',
        `sample ${this.samples - 1}'s ${type.type}/${type.unit} value ${v} is beyond int64`,
        'values within -2^63 … 2^63 - 1',
      );
    }
    int64(sink, whole);
  }

  /** A time in µs as the time label: µs for profpack's, epoch ns (past 2^53: from 32-bit halves) for Datadog's. */
  private timeLabel(sink: ByteSink, timeUs: number): void {
    if (this.timeScale === 1 || timeUs < 0) {
      labelNum(sink, this.timeKey, Math.round(timeUs * this.timeScale), this.timeUnit);
      return;
    }
    // ns = whole * 1000 + fraction, with whole = wholeHi * 2^32 + wholeLo: every product below stays exact.
    const whole = Math.floor(timeUs);
    const wholeHi = Math.floor(whole / TWO_POW_32);
    const low = (whole - wholeHi * TWO_POW_32) * 1000 + Math.round((timeUs - whole) * 1000);
    const carry = Math.floor(low / TWO_POW_32);
    labelNumParts(sink, this.timeKey, low - carry * TWO_POW_32, wholeHi * 1000 + carry, this.timeUnit);
  }

  /** One Sample message into `out`: its fields after the locations go through `body`, then both into `out`. */
  sample(
    out: ByteSink,
    body: ByteSink,
    stack: number,
    thread: number,
    labels: number,
    values: readonly Float64Array[],
    at: number,
    time: number,
    status: number,
    /** Per column the part of `values` below its doubles (aggregated sums), if any. */
    valuesBelow?: readonly Float64Array[],
  ): void {
    this.samples++;
    body.clear();
    body.uvarint(tagOf(SampleField.value, WireType.bytes));
    const valuesAt = body.length;
    body.u8(0);
    for (let c = 0; c < this.carry.length; c++) this.value(body, c, values[c]![at]!, valuesBelow?.[c]![at] ?? 0);
    const valuesLength = body.length - valuesAt - 1;
    if (valuesLength < 0x80) body.bytes[valuesAt] = valuesLength;
    else {
      // Rare (many types or huge values): re-encode with a longer length prefix.
      const payload = body.bytes.slice(valuesAt + 1, body.length);
      body.length = valuesAt;
      body.uvarint(payload.length);
      body.append(payload);
    }
    const set = this.labels(labels);
    copyInto(body, set.bytes, set.bytes.length);
    if (!set.namesThread) {
      const threadLabels = this.thread(thread);
      copyInto(body, threadLabels, threadLabels.length);
    }
    if (!Number.isNaN(time)) {
      if (time < this.minTime) this.minTime = time;
      const last = this.countColumn < 0 ? time : lastTickUs(time, values[this.countColumn]![at]!, this.intervalUs);
      if (last > this.maxTime) this.maxTime = last;
      this.timeLabel(body, time);
    }
    if (status !== 0) labelNum(body, this.kStatus, status, 0);
    // The locations' field as encoded once for the stack, then the rest.
    const field = this.locationField(stack);
    out.uvarint(tagOf(ProfileField.sample, WireType.bytes));
    out.uvarint(field.length + body.length);
    out.append(field);
    copyInto(out, body.bytes, body.length);
  }
}

/** Streams `source` to `target` as profile.proto (gzipped unless `gzip: false`). */
export function writePprof(source: ProfileSource, target: WriteTarget, options: PprofWriteOptions = {}): void {
  const out = new ChunkedOutput(target, options.gzip ?? true, options.gzipLevel ?? 1);
  const enc = new PprofEncoder(source);
  const body = new ByteSink(256);
  const types = source.meta.sampleTypes.length;
  if (options.aggregate === true) writeAggregated(source, enc, out, body, types);
  else {
    for (const b of source.batches()) {
      for (let i = 0; i < b.length; i++) {
        enc.sample(out.sink, body, b.stack[i]!, b.thread[i]!, b.labels[i]!, b.values, i, b.time[i]!, b.status[i]!);
        out.maybeFlush();
      }
    }
  }
  writeTables(source, enc, out);
  out.flush();
}

function writeAggregated(
  source: ProfileSource,
  enc: PprofEncoder,
  out: ChunkedOutput,
  body: ByteSink,
  types: number,
): void {
  const keys = new SampleKeys();
  // Each key's sum as two doubles, hi + lo: the written total is then the model's sum rounded once.
  const sums = Array.from({ length: types }, () => new ExactSums());
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const k = keys.slot(b.stack[i]!, b.thread[i]!, b.labels[i]!);
      for (let c = 0; c < types; c++) sums[c]!.add(k, b.values[c]![i]!);
    }
  }
  const his = sums.map((s) => s.hi);
  const los = sums.map((s) => s.lo);
  for (let k = 0; k < keys.size; k++) {
    enc.sample(out.sink, body, keys.stack(k), keys.thread(k), keys.labels(k), his, k, NaN, 0, los);
    out.maybeFlush();
  }
}

function writeValueType(sink: ByteSink, field: number, strings: PprofStringTable, type: string, unit: string): void {
  const body = new ByteSink(8);
  varintField(body, ValueTypeField.type, strings.id(type));
  varintField(body, ValueTypeField.unit, strings.id(unit));
  bytesField(sink, field, body.view());
}

/** Locations, functions, the profile's scalar fields and the string table, after the samples. */
function writeTables(source: ProfileSource, enc: PprofEncoder, out: ChunkedOutput): void {
  const meta = source.meta;
  const strings = enc.strings;
  const sink = out.sink;
  const functionIds = new Map<string, number>();
  const body = new ByteSink(64);
  const line = new ByteSink(16);
  const frames = source.frames;
  for (let f = 0; f < frames.length; f++) {
    if (!enc.isUsed(f)) continue;
    const frame = frames[f]!;
    const key = `${frame.funcname}\u0000${frame.filename}`;
    let fid = functionIds.get(key);
    if (fid === undefined) {
      fid = functionIds.size + 1;
      functionIds.set(key, fid);
      const name = strings.id(anonymousName(frame.funcname));
      body.clear();
      varintField(body, FunctionField.id, fid);
      varintField(body, FunctionField.name, name);
      varintField(body, FunctionField.systemName, name);
      varintField(body, FunctionField.filename, strings.id(frame.filename));
      bytesField(sink, ProfileField.function, body.view());
    }
    line.clear();
    varintField(line, LineField.functionId, fid);
    varintField(line, LineField.line, frame.lineno ?? 0);
    varintField(line, LineField.column, frame.column ?? 0);
    body.clear();
    varintField(body, LocationField.id, f + 1);
    bytesField(body, LocationField.line, line.view());
    bytesField(sink, ProfileField.location, body.view());
    out.maybeFlush();
  }

  for (const t of meta.sampleTypes) writeValueType(sink, ProfileField.sampleType, strings, t.type, t.unit);
  // The last type is the default without it (profile.proto), and Go marks an explicit one "[dflt]" in -raw.
  // A tick stream's default is its count; Go's readers show its time (the real duration) first.
  const shown = timeColumnOrDefault(meta);
  const defaultType = shown === meta.sampleTypes.length - 1 ? undefined : meta.sampleTypes[shown];
  if (defaultType !== undefined) varintField(sink, ProfileField.defaultSampleType, strings.id(defaultType.type));
  const period = periodOf(source);
  if (period !== undefined) {
    writeValueType(sink, ProfileField.periodType, strings, period.type, period.unit);
    varintField(sink, ProfileField.period, period.period);
  }
  // time_nanos is the Unix epoch (profile.proto); a source on another clock (CPython's, V8's) leaves it 0 and says so.
  const epoch = isEpochUs(meta.startTimeUs);
  // The source's ns when it has them and they still say the same µs (pprof input): never truncated to µs.
  const startNs =
    meta.startTimeNs !== undefined && meta.startTimeNs / 1000n === meta.startTimeUs
      ? meta.startTimeNs
      : meta.startTimeUs * 1000n;
  const durationNs =
    meta.durationUs !== undefined ? meta.durationUs * 1000n : spanNs(enc, meta.startTimeUs, meta.sampleIntervalUs);
  // A file with @datadog/pprof's end_timestamp_ns labels reads as its: time_nanos is then the end, as it writes it.
  const timeNs = startNs + (source.meta.origin?.producer === DATADOG ? durationNs : 0n);
  if (epoch) writeInt64(sink, ProfileField.timeNanos, timeNs);
  writeInt64(sink, ProfileField.durationNanos, durationNs);
  const comments = [...(meta.comments ?? [])];
  if (!epoch && meta.startTimeUs !== 0n && !comments.includes(NOT_EPOCH_COMMENT)) comments.push(NOT_EPOCH_COMMENT);
  for (const c of comments) varintField(sink, ProfileField.comment, strings.id(c));
  out.maybeFlush();
  const utf8 = new TextEncoder();
  for (const s of strings.list) {
    bytesField(sink, ProfileField.stringTable, utf8.encode(s));
    out.maybeFlush();
  }
}

function writeInt64(sink: ByteSink, field: number, value: bigint): void {
  if (value <= 0n || value > INT64_MAX) return;
  sink.uvarint(tagOf(field, WireType.varint));
  sink.uvarint64(value);
}

/** The span the samples' times cover, plus one interval (the last sample's own time). */
function spanNs(enc: PprofEncoder, startUs: bigint, intervalUs: bigint): bigint {
  if (enc.minTime > enc.maxTime) return 0n;
  const first = Math.min(enc.minTime, Number(startUs) || enc.minTime);
  return BigInt(Math.round((enc.maxTime - first) * 1000)) + intervalUs * 1000n;
}

/**
 * The period type and period: the source's, else its nominal interval in its first time type's unit. A source
 * of counts only (collapsed stacks) has no period: none is invented.
 */
function periodOf(source: ProfileSource): { type: string; unit: string; period: number } | undefined {
  const meta = source.meta;
  if (meta.periodType !== undefined) return { ...meta.periodType, period: meta.period ?? 0 };
  if (meta.sampleIntervalUs <= 0n) return undefined;
  const timed = meta.sampleTypes.find((t) => nanosPerUnit(t.unit) !== undefined);
  if (timed === undefined) return undefined;
  return { ...timed, period: Math.round((Number(meta.sampleIntervalUs) * 1000) / nanosPerUnit(timed.unit)!) };
}
