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
import { gzipSync } from 'node:zlib';
import { Function as PFunction, Label, Line, Location, Profile, Sample as PSample, StringTable, ValueType } from 'pprof-format';
import { anonymousName, isEpochUs, threadKey, type ProfileSource } from './model';

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
  threadName: 'thread_name',
} as const;

/**
 * Go's profile parser drops a numeric label whose value and unit are both 0,
 * so thread 0 would vanish from `-tags` and `-tagfocus`: ids carry this unit.
 */
const ID_UNIT = 'id';

function numOrStr(strings: StringTable, key: number, value: bigint, unit?: string): Label {
  if (value >= -INT64_MAX && value <= INT64_MAX) {
    return new Label({ key, num: Number.isSafeInteger(Number(value)) ? Number(value) : value, numUnit: unit === undefined ? 0 : strings.dedup(unit) });
  }
  return new Label({ key, str: strings.dedup(value.toString()) });
}

/** The comment a profile gets when its source's clock is not the Unix epoch. */
export const NOT_EPOCH_COMMENT = 'profpack: the source clock is not the Unix epoch: time_nanos is 0 and timestamp_us labels count from an unknown origin';

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
      const name = strings.dedup(anonymousName(f.funcname));
      functions.push(new PFunction({ id: fid, name, systemName: name, filename: strings.dedup(f.filename) }));
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
  const kIdUnit = strings.dedup(ID_UNIT);
  const kThreadName = strings.dedup(PprofLabel.threadName);
  const threadNames = source.meta.threadNames;
  const threadLabels = (threadId: bigint, interpreterId: number): Label[] => {
    const label = [numOrStr(strings, kThread, threadId)];
    if (label[0]!.str === 0) label[0]!.numUnit = kIdUnit;
    if (interpreterId !== 0) label.push(new Label({ key: kInterp, num: interpreterId, numUnit: kIdUnit }));
    const name = threadNames?.get(threadKey(threadId, interpreterId));
    if (name !== undefined) label.push(new Label({ key: kThreadName, str: strings.dedup(name) }));
    return label;
  };
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
      const label = threadLabels(agg.threadId, agg.interpreterId);
      samples.push(new PSample({ locationId: agg.locations, value: [agg.count, typeof interval === 'number' ? agg.count * interval : BigInt(agg.count) * intervalNs], label }));
    }
  } else {
    const kUs = strings.dedup('microseconds');
    for (const s of source.samples()) {
      if (first === undefined || s.timestampUs < first) first = s.timestampUs;
      if (last === undefined || s.timestampUs > last) last = s.timestampUs;
      const locs = new Array<number>(s.stack.length);
      for (let i = 0; i < s.stack.length; i++) locs[i] = locationFor(s.stack[i]!);
      const label = threadLabels(s.threadId, s.interpreterId);
      if (s.status !== 0) label.push(new Label({ key: kStatus, num: s.status }));
      const t = numOrStr(strings, kTime, s.timestampUs);
      if (t.str === 0) t.numUnit = kUs;
      label.push(t);
      samples.push(new PSample({ locationId: locs, value: [1, interval], label }));
    }
  }

  // time_nanos is the Unix epoch (profile.proto); a source on another clock (CPython's and V8's are monotonic) leaves it 0 and says so.
  const epoch = isEpochUs(source.meta.startTimeUs);
  const startNs = epoch ? source.meta.startTimeUs * 1000n : 0n;
  const spanNs = first !== undefined && last !== undefined ? (last - (first < source.meta.startTimeUs ? first : source.meta.startTimeUs)) * 1000n + intervalNs : 0n;
  // The duration the source states wins: samples spread one period apart need not span it.
  const durationNs = source.meta.durationUs !== undefined ? source.meta.durationUs * 1000n : spanNs;
  const comment = epoch ? [] : [strings.dedup(NOT_EPOCH_COMMENT)];
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
    comment,
  });
}

/** Model → gzipped profile.proto bytes. */
export function toPprof(source: ProfileSource, options: ToPprofOptions = {}): Uint8Array {
  const encoded = toPprofProfile(source, options).encode();
  return gzipSync(encoded, { level: options.gzipLevel ?? 6 });
}
