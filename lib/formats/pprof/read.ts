/**
 * profile.proto → model, as `go tool pprof` reads the same bytes.
 *
 * - Every sample type and unit is kept; the default is `default_sample_type`,
 *   else the last type (profile.proto: "clients should default to the last").
 * - One record per pprof sample with all its values, never expanded: a count
 *   of 10^9 is one record. Negative values (diff profiles) are kept.
 * - Labels: a thread-id label (`thread_id`, Datadog's text `thread id`, …)
 *   and a thread-name label make the record's thread and stay in its label
 *   set as written, so they go back out unchanged; `timestamp_us` (profpack)
 *   or `end_timestamp_ns` (@datadog/pprof) is the record's time and `status`
 *   (profpack) its status byte, and those three leave the label set (a
 *   distinct time per sample would make a label set per sample). Every other
 *   label is kept. A numeric label beyond ±2^53 is kept as decimal text.
 * - Streaming: the tables are read once; the samples are decoded batch by
 *   batch from the bytes each time `batches()` runs, so memory is the bytes,
 *   the tables and one batch, whatever the number of samples.
 */
import { BATCH_ROWS, SourceTables, newBatch, sliceBatch, isEpochUs, nanosPerUnit } from '../../profile/index';
import type { Label, ProfileMeta, ProfileSource, SampleBatch, SampleType } from '../../profile/index';
import type { ReadOptions } from '../adapter';
import {
  badPprof,
  DATADOG,
  LabelField,
  PprofLabel,
  ProfileField,
  ProtoReader,
  SampleField,
  THREAD_ID_KEYS,
  THREAD_NAME_KEYS,
  WireType,
} from './proto';
import { PackedStackCache } from './stack-cache';
import { readLocations, sampleTypesOf, scanProfile, stringAt, type LocationFrames, type PprofHeader } from './tables';
import { resized } from '../../typed-arrays';

/** What a label key means to the reader. */
const enum KeyRole {
  Plain,
  ThreadId,
  ThreadName,
  TimestampUs,
  EndTimestampNs,
  Status,
  InterpreterId,
}

function roleOf(key: string): KeyRole {
  if (THREAD_ID_KEYS.includes(key)) return KeyRole.ThreadId;
  if (THREAD_NAME_KEYS.includes(key)) return KeyRole.ThreadName;
  if (key === PprofLabel.timestampUs) return KeyRole.TimestampUs;
  if (key === PprofLabel.endTimestampNs) return KeyRole.EndTimestampNs;
  if (key === PprofLabel.status) return KeyRole.Status;
  if (key === PprofLabel.interpreterId) return KeyRole.InterpreterId;
  return KeyRole.Plain;
}

const DECIMAL = /^-?\d+$/;

/** Decoded profile.proto bytes (gzip already undone) as a model source. */
export class PprofSource extends SourceTables implements ProfileSource {
  readonly meta: ProfileMeta;
  readonly sampleCount: number;
  private readonly header: PprofHeader;
  private readonly locations: LocationFrames;
  private readonly roles: Uint8Array;
  /** Thread-id rank of each string used as a key (lower wins), THREAD_ID_KEYS.length for none. */
  private readonly threadRank: Uint8Array;
  private readonly labelSetOf = new Map<string, number>();
  private readonly threadOf = new Map<string, number>();

  constructor(
    private readonly bytes: Uint8Array,
    options: ReadOptions = {},
  ) {
    super();
    const h = scanProfile(bytes);
    this.header = h;
    const strings = h.strings;
    if (strings.length > 0 && strings[0] !== '')
      throw badPprof(`the string table starts with "${strings[0]}"`, 0, 'an empty first string');
    let sampleTypes = sampleTypesOf(h);
    if (sampleTypes.length === 0) {
      // Go refuses samples without types ("missing sample type information"); an empty profile still needs one.
      if (h.sampleCount > 0)
        throw badPprof('the profile has samples but no sample types', h.firstSampleAt, 'sample_type entries');
      sampleTypes = [h.periodType === undefined ? { type: 'samples', unit: 'count' } : this.valueType(h.periodType)];
    }
    this.sampleCount = h.sampleCount;
    this.locations = readLocations(bytes, h, this.frameTable);
    this.roles = new Uint8Array(strings.length);
    this.threadRank = new Uint8Array(strings.length).fill(THREAD_ID_KEYS.length);
    strings.forEach((s, i) => {
      this.roles[i] = roleOf(s);
      const rank = THREAD_ID_KEYS.indexOf(s);
      if (rank >= 0) this.threadRank[i] = rank;
    });
    this.meta = this.metaOf(sampleTypes, options);
  }

  private valueType([t, u]: [number, number]): SampleType {
    return { type: stringAt(this.header.strings, t, 0), unit: stringAt(this.header.strings, u, 0) };
  }

  private metaOf(sampleTypes: SampleType[], options: ReadOptions): ProfileMeta {
    const h = this.header;
    const strings = h.strings;
    let defaultSampleType = sampleTypes.length - 1;
    if (h.defaultSampleType !== 0) {
      const name = stringAt(strings, h.defaultSampleType, 0);
      const i = sampleTypes.findIndex((t) => t.type === name);
      if (i >= 0) defaultSampleType = i;
      else
        options.onWarning?.(`pprof: default_sample_type "${name}" is not one of the sample types; using the last one`);
    }
    // @datadog/pprof's time labels; the writer gives them back under the same key.
    const datadog = strings.includes(PprofLabel.endTimestampNs);
    let startNs = h.timeNanos > 0n ? h.timeNanos : 0n;
    // @datadog/pprof stamps time_nanos with Date.now() when it serialises, after the samples: the start is
    // duration_nanos before it (profile-serializer.js, serializeTimeProfile).
    if (datadog && startNs > h.durationNanos) startNs -= h.durationNanos;
    const meta: ProfileMeta = {
      sampleTypes,
      defaultSampleType,
      startTimeUs: startNs / 1000n,
      sampleIntervalUs: 0n,
      origin: datadog ? { format: 'pprof', producer: DATADOG } : { format: 'pprof' },
    };
    if (h.periodType !== undefined) {
      meta.periodType = this.valueType(h.periodType);
      meta.period = h.period;
      const ns = nanosPerUnit(meta.periodType.unit);
      if (ns !== undefined && h.period > 0) meta.sampleIntervalUs = BigInt(Math.round((h.period * ns) / 1000));
    } else if (h.period !== 0) meta.period = h.period;
    if (startNs > 0n) meta.startTimeNs = startNs;
    if (h.durationNanos > 0n) meta.durationUs = h.durationNanos / 1000n;
    if (h.comments.length > 0) meta.comments = h.comments.map((c) => stringAt(strings, c, 0));
    if (h.dropFrames !== 0 || h.keepFrames !== 0)
      options.onWarning?.('pprof: drop_frames / keep_frames are not applied (the model has no place for them)');
    if (!isEpochUs(meta.startTimeUs) && meta.startTimeUs !== 0n)
      options.onWarning?.('pprof: time_nanos does not read as the Unix epoch');
    return meta;
  }

  *batches(): Iterable<SampleBatch> {
    const types = this.meta.sampleTypes.length;
    const batch = newBatch(BATCH_ROWS, types);
    const r = new ProtoReader(this.bytes);
    const decoder = new SampleDecoder(this, types);
    let n = 0;
    while (!r.done) {
      const at = r.pos;
      const tag = r.tag();
      if (tag >>> 3 !== ProfileField.sample) {
        r.skip(tag & 7, at);
        continue;
      }
      const end = r.sub();
      decoder.decode(r, end, at, batch, n);
      r.pos = end;
      r.end = this.bytes.length;
      if (++n === BATCH_ROWS) {
        // Views of exactly the rows filled, as ProfileBuilder hands them out.
        yield sliceBatch(batch, 0, n);
        n = 0;
      }
    }
    if (n > 0) yield sliceBatch(batch, 0, n);
  }

  /** @internal the tables SampleDecoder reads and fills. */
  get parts() {
    return {
      bytes: this.bytes,
      strings: this.header.strings,
      roles: this.roles,
      threadRank: this.threadRank,
      locations: this.locations,
      stacks: this.stacks,
      threadTable: this.threadTable,
      labelTable: this.labelTable,
      labelSetOf: this.labelSetOf,
      threadOf: this.threadOf,
    };
  }
}

const TWO_POW_32_DIV_1000 = 4294967; // 2^32 = 1000 * 4294967 + 296

/**
 * An int64 of ns as µs, from its 32-bit halves without a bigint (Datadog's
 * epoch ns are past 2^53): hi * 2^32 + lo = 1000 * (hi * 4294967) + (hi * 296 + lo).
 */
function nanosToMicros(num: number, hi: number, lo: number): number {
  if (Number.isSafeInteger(num)) return num / 1000;
  if (hi >= 0x80000000) return Number(BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo))) / 1000;
  const rest = hi * 296 + lo;
  return hi * TWO_POW_32_DIV_1000 + Math.floor(rest / 1000) + (rest % 1000) / 1000;
}

/** Decodes one sample message into a batch row; keeps its scratch buffers between samples. */
class SampleDecoder {
  private frames = new Uint32Array(256);
  private readonly values: Float64Array;
  /** Kept labels of the sample: key, str, num and unit string indices (num itself in nums). */
  private kept: number[] = [];
  private keptNums: (number | bigint)[] = [];
  private readonly p: PprofSource['parts'];
  private readonly stackCache: PackedStackCache;
  /** Samples decoded so far: the index an error names. */
  private decoded = 0;

  constructor(
    source: PprofSource,
    private readonly types: number,
  ) {
    this.p = source.parts;
    this.stackCache = new PackedStackCache(source.parts.bytes);
    this.values = new Float64Array(types);
  }

  decode(r: ProtoReader, end: number, sampleAt: number, batch: SampleBatch, row: number): void {
    const sample = this.decoded++;
    const p = this.p;
    const loc = p.locations;
    r.end = end;
    let depth = 0;
    let locationFields = 0;
    let cachedStack = -1;
    let packedFrom = 0;
    let packedTo = 0;
    let packedHash = 0;
    let valueCount = 0;
    let time = NaN;
    let timeRank = 2;
    let status = 0;
    let threadRank = THREAD_ID_KEYS.length;
    let threadText = '';
    let threadName = -1;
    let interpreter = 0;
    this.kept.length = 0;
    this.keptNums.length = 0;
    while (r.pos < end) {
      const at = r.pos;
      const tag = r.tag();
      const field = tag >>> 3;
      const wt = tag & 7;
      if (field === SampleField.locationId && (wt === WireType.varint || wt === WireType.bytes)) {
        const stop = wt === WireType.bytes ? r.sub() : -1;
        if (++locationFields === 1 && stop >= 0) {
          packedFrom = r.pos;
          packedTo = stop;
          packedHash = this.stackCache.hash(packedFrom, packedTo);
          cachedStack = this.stackCache.find(packedFrom, packedTo, packedHash);
          if (cachedStack >= 0) {
            r.pos = stop;
            continue;
          }
        } else if (cachedStack >= 0) {
          // A second location_id field (legal, if odd): the cached stack's frames come first.
          const holder = { buffer: this.frames };
          depth = p.stacks.frames(cachedStack, holder);
          this.frames = holder.buffer;
          cachedStack = -1;
        }
        const outer = r.end;
        if (stop >= 0) r.end = stop;
        do {
          const idAt = r.pos;
          const k = loc.indexOf(r.uint64());
          if (k < 0)
            throw badPprof(
              `a sample names location ${r.lastBigInt()}, which the profile does not have`,
              idAt,
              'a location id of the profile',
            );
          const from = loc.start[k]!;
          const to = loc.start[k + 1]!;
          if (depth + (to - from) > this.frames.length) this.growFrames(depth + (to - from));
          for (let f = from; f < to; f++) this.frames[depth++] = loc.frameIds[f]!;
        } while (stop >= 0 && r.pos < stop);
        r.end = outer;
      } else if (field === SampleField.value && (wt === WireType.varint || wt === WireType.bytes)) {
        const stop = wt === WireType.bytes ? r.sub() : -1;
        const outer = r.end;
        if (stop >= 0) r.end = stop;
        do {
          const valueAt = r.pos;
          const v = r.int64();
          // Past ±2^53 a number rounds: refused with the exact value rather than changed silently.
          if (v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER)
            throw badPprof(
              `sample ${sample} value ${valueCount} is ${r.lastBigInt()}, past 2^53 (not exact as a number)`,
              valueAt,
              'sample values within ±(2^53 - 1)',
            );
          if (valueCount < this.types) this.values[valueCount] = v;
          valueCount++;
        } while (stop >= 0 && r.pos < stop);
        r.end = outer;
      } else if (field === SampleField.label && wt === WireType.bytes) {
        const stop = r.sub();
        const outer = r.end;
        r.end = stop;
        let key = 0;
        let str = 0;
        let num: number | bigint = 0;
        let numHi = 0;
        let numLo = 0;
        let unit = 0;
        while (r.pos < stop) {
          const lat = r.pos;
          const ltag = r.tag();
          if ((ltag & 7) !== WireType.varint) r.skip(ltag & 7, lat);
          else if (ltag >>> 3 === LabelField.key) key = r.int64();
          else if (ltag >>> 3 === LabelField.str) str = r.int64();
          else if (ltag >>> 3 === LabelField.num) {
            num = r.int64();
            numHi = r.hi;
            numLo = r.lo;
          } else if (ltag >>> 3 === LabelField.numUnit) unit = r.int64();
          else r.skip(ltag & 7, lat);
        }
        r.end = outer;
        stringAt(p.strings, key, at);
        stringAt(p.strings, str, at);
        stringAt(p.strings, unit, at);
        const role = p.roles[key]! as KeyRole;
        // Go's parser: a label with a string is a string label; one with neither number nor unit means nothing.
        if (str === 0 && num === 0 && unit === 0) continue;
        if (role === KeyRole.TimestampUs && str === 0) {
          time = Number(num);
          timeRank = 0;
          continue;
        }
        if (role === KeyRole.EndTimestampNs && str === 0) {
          if (timeRank > 1) time = nanosToMicros(num, numHi, numLo);
          timeRank = Math.min(timeRank, 1);
          continue;
        }
        // Beyond ±2^53 a number is exact only as a bigint (and is kept as text, below).
        if (!Number.isSafeInteger(num)) num = BigInt.asIntN(64, (BigInt(numHi) << 32n) | BigInt(numLo));
        if (role === KeyRole.Status && str === 0) {
          status = Number(num) & 0xff;
          continue;
        }
        if (role === KeyRole.ThreadId && p.threadRank[key]! < threadRank) {
          const text = str !== 0 ? p.strings[str]! : String(num);
          if (DECIMAL.test(text)) {
            threadRank = p.threadRank[key]!;
            threadText = text;
          }
        } else if (role === KeyRole.ThreadName && str !== 0) threadName = str;
        else if (role === KeyRole.InterpreterId && str === 0) interpreter = Number(num);
        this.kept.push(key, str, unit);
        this.keptNums.push(num);
      } else r.skip(wt, at);
    }
    if (valueCount !== this.types)
      throw badPprof(
        `a sample has ${valueCount} values for ${this.types} sample types`,
        sampleAt,
        `${this.types} values per sample`,
      );
    if (cachedStack >= 0) batch.stack[row] = cachedStack;
    else {
      const stack = p.stacks.intern(this.frames, depth);
      if (locationFields === 1 && packedTo > packedFrom) this.stackCache.add(packedFrom, packedTo, packedHash, stack);
      batch.stack[row] = stack;
    }
    batch.thread[row] = this.thread(threadText, interpreter, threadName);
    batch.time[row] = time;
    batch.status[row] = status;
    batch.labels[row] = this.labelSet();
    for (let v = 0; v < this.types; v++) batch.values[v]![row] = this.values[v]!;
  }

  private growFrames(need: number): void {
    this.frames = resized(this.frames, Math.max(need, this.frames.length * 2));
  }

  private thread(idText: string, interpreter: number, nameIndex: number): number {
    const p = this.p;
    const key = `${idText}\u0000${interpreter}\u0000${nameIndex}`;
    let id = p.threadOf.get(key);
    if (id === undefined) {
      const threadId = idText === '' ? 0n : BigInt.asUintN(64, BigInt(idText));
      id = p.threadTable.intern(threadId, interpreter, nameIndex < 0 ? undefined : p.strings[nameIndex]);
      p.threadOf.set(key, id);
    }
    return id;
  }

  private labelSet(): number {
    const kept = this.kept;
    if (kept.length === 0) return 0;
    const nums = this.keptNums;
    let key = '';
    for (let i = 0; i < nums.length; i++) key += `${kept[3 * i]},${kept[3 * i + 1]},${kept[3 * i + 2]},${nums[i]};`;
    const p = this.p;
    let id = p.labelSetOf.get(key);
    if (id === undefined) {
      const labels: Label[] = [];
      for (let i = 0; i < nums.length; i++) {
        const k = p.strings[kept[3 * i]!]!;
        const str = kept[3 * i + 1]!;
        const unit = kept[3 * i + 2]!;
        const num = nums[i]!;
        if (str !== 0) labels.push({ key: k, str: p.strings[str]! });
        // Beyond ±2^53 a number is no longer exact: the label keeps its decimal text.
        else if (typeof num === 'bigint') labels.push({ key: k, str: num.toString() });
        else labels.push(unit === 0 ? { key: k, num } : { key: k, num, unit: p.strings[unit]! });
      }
      // Go writes a sample's labels in map order: one set whatever the order
      // (a stable sort keeps repeated keys in their order).
      labels.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      id = p.labelTable.intern(labels);
      p.labelSetOf.set(key, id);
    }
    return id;
  }
}
