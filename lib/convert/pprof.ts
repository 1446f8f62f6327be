/**
 * pprof (gzipped profile.proto, through Datadog's `pprof-format`).
 *
 * Two shapes:
 * - per sample (default): one pprof Sample per profile sample, with labels
 *   `thread_id`, `interpreter_id` (when not 0), `status` (when not 0) and
 *   `timestamp_us`, so time and thread survive (the time-preserving
 *   equivalent of Tachyon);
 * - aggregated: one Sample per distinct (stack, thread) with a count, as
 *   @datadog/pprof writes; time and status are gone.
 *
 * One pprof Location per model frame (one Line: function, line, column) and
 * one Function per (funcname, filename). pprof's 0 means "no line/column", so
 * `null` and 0 both become 0 and read back as `null`. Tachyon's end line, end
 * column and opcode have no place in profile.proto.
 *
 * Label numbers are int64: a thread id or timestamp beyond 2^63-1 goes into
 * the label's `str` as decimal text instead.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { Function as PFunction, Label, Line, Location, Profile, Sample as PSample, StringTable, ValueType } from 'pprof-format';
import { ErrorCode, ProfpackError } from '../errors';
import { MemoryProfile, threadKey, type Frame, type ProfileSource } from './model';

export interface ToPprofOptions {
  aggregate?: boolean;
  /** gzip level (default 6, as Go's pprof writes). */
  gzipLevel?: number;
}

const INT64_MAX = (1n << 63n) - 1n;
export const PprofLabel = {
  threadId: 'thread_id',
  interpreterId: 'interpreter_id',
  status: 'status',
  timestampUs: 'timestamp_us',
} as const;

function numOrStr(strings: StringTable, key: number, value: bigint, unit?: string): Label {
  if (value >= -INT64_MAX && value <= INT64_MAX) {
    return new Label({ key, num: Number.isSafeInteger(Number(value)) ? Number(value) : value, numUnit: unit === undefined ? 0 : strings.dedup(unit) });
  }
  return new Label({ key, str: strings.dedup(value.toString()) });
}

/** Model → pprof Profile object (call `encodePprof` for the gzipped bytes). */
export function toPprofProfile(source: ProfileSource, options: ToPprofOptions = {}): Profile {
  const strings = new StringTable();
  const intervalNs = source.meta.sampleIntervalUs * 1000n;
  const functions: PFunction[] = [];
  const functionIds = new Map<string, number>();
  const locations: Location[] = [];
  const locationOf: number[] = [];
  const frames = source.frames;
  const locationFor = (frameIndex: number): number => {
    let id = locationOf[frameIndex];
    if (id !== undefined) return id;
    const f = frames[frameIndex]!;
    const fkey = `${f.funcname}\u0000${f.filename}`;
    let fid = functionIds.get(fkey);
    if (fid === undefined) {
      fid = functions.length + 1;
      functions.push(new PFunction({ id: fid, name: strings.dedup(f.funcname), systemName: strings.dedup(f.funcname), filename: strings.dedup(f.filename) }));
      functionIds.set(fkey, fid);
    }
    id = locations.length + 1;
    locations.push(new Location({ id, line: [new Line({ functionId: fid, line: f.lineno ?? 0, column: f.column ?? 0 })] }));
    locationOf[frameIndex] = id;
    return id;
  };

  const kThread = strings.dedup(PprofLabel.threadId);
  const kInterp = strings.dedup(PprofLabel.interpreterId);
  const kStatus = strings.dedup(PprofLabel.status);
  const kTime = strings.dedup(PprofLabel.timestampUs);
  const samples: PSample[] = [];
  let first: bigint | undefined;
  let last: bigint | undefined;
  const interval = Number(intervalNs) <= Number.MAX_SAFE_INTEGER ? Number(intervalNs) : intervalNs;

  if (options.aggregate === true) {
    const byKey = new Map<string, { locations: number[]; threadId: bigint; interpreterId: number; count: number }>();
    for (const s of source.samples()) {
      if (first === undefined || s.timestampUs < first) first = s.timestampUs;
      if (last === undefined || s.timestampUs > last) last = s.timestampUs;
      const locs = new Array<number>(s.stack.length);
      for (let i = 0; i < s.stack.length; i++) locs[i] = locationFor(s.stack[i]!);
      const key = `${threadKey(s.threadId, s.interpreterId)}:${locs.join(',')}`;
      const hit = byKey.get(key);
      if (hit !== undefined) hit.count++;
      else byKey.set(key, { locations: locs, threadId: s.threadId, interpreterId: s.interpreterId, count: 1 });
    }
    for (const agg of byKey.values()) {
      const label = [numOrStr(strings, kThread, agg.threadId)];
      if (agg.interpreterId !== 0) label.push(new Label({ key: kInterp, num: agg.interpreterId }));
      samples.push(new PSample({ locationId: agg.locations, value: [agg.count, typeof interval === 'number' ? agg.count * interval : BigInt(agg.count) * intervalNs], label }));
    }
  } else {
    const kUs = strings.dedup('microseconds');
    for (const s of source.samples()) {
      if (first === undefined || s.timestampUs < first) first = s.timestampUs;
      if (last === undefined || s.timestampUs > last) last = s.timestampUs;
      const locs = new Array<number>(s.stack.length);
      for (let i = 0; i < s.stack.length; i++) locs[i] = locationFor(s.stack[i]!);
      const label = [numOrStr(strings, kThread, s.threadId)];
      if (s.interpreterId !== 0) label.push(new Label({ key: kInterp, num: s.interpreterId }));
      if (s.status !== 0) label.push(new Label({ key: kStatus, num: s.status }));
      const t = numOrStr(strings, kTime, s.timestampUs);
      if (t.str === 0) t.numUnit = kUs;
      label.push(t);
      samples.push(new PSample({ locationId: locs, value: [1, interval], label }));
    }
  }

  const startNs = source.meta.startTimeUs * 1000n;
  const durationNs = first !== undefined && last !== undefined ? (last - (first < source.meta.startTimeUs ? first : source.meta.startTimeUs)) * 1000n + intervalNs : 0n;
  return new Profile({
    sampleType: [new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') }), new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') })],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: strings,
    timeNanos: startNs <= INT64_MAX ? startNs : 0,
    durationNanos: durationNs <= INT64_MAX && durationNs >= 0n ? durationNs : 0,
    periodType: new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') }),
    period: interval,
  });
}

/** Model → gzipped profile.proto bytes. */
export function toPprof(source: ProfileSource, options: ToPprofOptions = {}): Uint8Array {
  const encoded = toPprofProfile(source, options).encode();
  return gzipSync(encoded, { level: options.gzipLevel ?? 6 });
}

function asBig(v: number | bigint | undefined): bigint {
  if (v === undefined) return 0n;
  return typeof v === 'bigint' ? BigInt.asIntN(64, v) : BigInt(v);
}

function asNum(v: number | bigint | undefined): number {
  return Number(asBig(v));
}

function bad(message: string, cause?: unknown): ProfpackError {
  return new ProfpackError(`not a pprof profile: ${message}`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'profile.proto, optionally gzipped', cause });
}

/**
 * pprof (gzipped or raw profile.proto) → model. A sample's count (the
 * "samples"/"count" value, else the first value divided by the period when the
 * first value is a time, else 1) becomes that many model samples. Time comes
 * from a `timestamp_us` label (profpack) or `end_timestamp_ns` (Datadog); a
 * sample without one is placed at the profile's start.
 */
export function fromPprof(bytes: Uint8Array): MemoryProfile {
  let raw = bytes;
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      raw = gunzipSync(bytes);
    } catch (err) {
      throw bad('gzip data is corrupt', err);
    }
  }
  let profile: Profile;
  try {
    profile = Profile.decode(raw);
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err), err);
  }
  const str = (i: number | bigint | undefined): string => profile.stringTable.strings[Number(i ?? 0)] ?? '';
  const periodNs = asBig(profile.period);
  const periodUnit = profile.periodType === undefined ? '' : str(profile.periodType.unit);
  const periodUs = periodUnit === 'nanoseconds' && periodNs > 0n ? periodNs / 1000n : periodUnit === 'microseconds' && periodNs > 0n ? periodNs : 1000n;
  const startUs = asBig(profile.timeNanos) / 1000n;
  const out = new MemoryProfile({ startTimeUs: startUs, sampleIntervalUs: periodUs > 0n ? periodUs : 1000n });

  let countIndex = -1;
  let timeIndex = -1;
  profile.sampleType.forEach((vt, i) => {
    const type = str(vt.type);
    const unit = str(vt.unit);
    if (countIndex < 0 && (unit === 'count' || type === 'samples')) countIndex = i;
    if (timeIndex < 0 && unit === 'nanoseconds') timeIndex = i;
  });

  const functions = new Map<string, PFunction>();
  for (const fn of profile.function) functions.set(asBig(fn.id).toString(), fn);
  const locationFrames = new Map<string, number[]>();
  for (const loc of profile.location) {
    const ids: number[] = [];
    const lines = loc.line ?? [];
    if (lines.length === 0) {
      // An address-only location (unsymbolised native code).
      ids.push(out.internFrame({ filename: '', funcname: `0x${asBig(loc.address).toString(16)}`, lineno: null, endLineno: null, column: null, endColumn: null, opcode: null }));
    }
    // pprof lists inlined callees first and the caller they were inlined into last: innermost first.
    for (const line of lines) {
      const fn = functions.get(asBig(line.functionId).toString());
      const lineno = asNum(line.line);
      const column = asNum(line.column);
      const frame: Frame = {
        filename: fn === undefined ? '' : str(fn.filename),
        funcname: fn === undefined ? '' : str(fn.name),
        lineno: lineno === 0 ? null : lineno,
        endLineno: null,
        column: column === 0 ? null : column,
        endColumn: null,
        opcode: null,
      };
      ids.push(out.internFrame(frame));
    }
    locationFrames.set(asBig(loc.id).toString(), ids);
  }

  for (const sample of profile.sample) {
    const stack: number[] = [];
    for (const locId of sample.locationId) {
      const ids = locationFrames.get(asBig(locId).toString());
      if (ids === undefined) throw bad(`a sample names missing location ${locId}`);
      for (const id of ids) stack.push(id);
    }
    let threadId = 0n;
    let interpreterId = 0;
    let status = 0;
    let time: bigint | undefined;
    for (const label of sample.label) {
      const key = str(label.key);
      const value = label.str !== undefined && asBig(label.str) !== 0n ? BigInt(str(label.str)) : asBig(label.num);
      if (key === PprofLabel.threadId || key === 'thread id') threadId = BigInt.asUintN(64, value);
      else if (key === PprofLabel.interpreterId) interpreterId = Number(value);
      else if (key === PprofLabel.status) status = Number(value);
      else if (key === PprofLabel.timestampUs) time = BigInt.asUintN(64, value);
      else if (key === 'end_timestamp_ns' && time === undefined) time = value / 1000n;
    }
    let count = 1;
    if (countIndex >= 0) count = asNum(sample.value[countIndex]);
    else if (timeIndex >= 0 && periodNs > 0n) count = Number(asBig(sample.value[timeIndex]) / periodNs);
    for (let k = 0; k < count; k++) out.writeStack(threadId, interpreterId, time ?? startUs, status, stack);
  }
  return out;
}
