/**
 * pprof (gzipped or raw profile.proto) → model, as Go's `go tool pprof`
 * reads the same file.
 *
 * - Sample type: one value column is read (`sampleType`, a type name such as
 *   `alloc_space`); by default the CPU/wall one (`samples`/`sample` counts,
 *   else `cpu`, else `wall`). A profile with none (a heap profile, say) is
 *   refused with ERR_CONVERT_SAMPLE_TYPE naming the types it has, so it never
 *   silently becomes CPU samples.
 * - Counts: a `count` value becomes that many samples, a time value that
 *   value over the period, any other unit (bytes) the value itself. The
 *   samples are produced lazily by `samples()`, one pprof sample repeated, so
 *   a large count costs no memory (a Tachyon sink stores it as REPEAT runs).
 * - Time: a `timestamp_us` (profpack) or `end_timestamp_ns` (Datadog) label
 *   places a sample; a profile without them (every Go `runtime/pprof` file)
 *   gets its samples one period apart from `time_nanos`, per thread in file
 *   order, and keeps `duration_nanos` as the model's duration.
 * - Threads: the first thread-id label (`thread_id`, `thread id`, `tid`,
 *   `os thread id`…, number or decimal text) is the thread; a thread-name
 *   label is kept in `meta.threadNames`. Every other label is dropped and
 *   counted (`droppedLabels`, `droppedLabelKeys`).
 * - Address-only locations (unsymbolized native code) are named after their
 *   mapping, `[libc.so.6]`, as pprof shows them; the address is not kept.
 */
import { gunzipSync } from 'node:zlib';
import { Profile, type Function as PFunction } from 'pprof-format';
import { ErrorCode, ProfpackError } from '../errors';
import { ANONYMOUS, MemoryProfile, threadKey, type Frame, type ProfileMeta, type ProfileSource, type Sample } from './model';
import { PprofLabel } from './pprof';

export interface FromPprofOptions {
  /** The sample type (value column) to read, by its type name; default the CPU/wall one. */
  sampleType?: string;
}

/** A pprof profile as a model source; samples are expanded from counts as they are read. */
export interface PprofSource extends ProfileSource {
  /** `type/unit` of the value column read. */
  readonly sampleType: string;
  /** Label occurrences dropped (not thread, thread name or time), and their keys. */
  readonly droppedLabels: number;
  readonly droppedLabelKeys: string[];
}

/** Label keys read as the thread id, in order of preference. */
const THREAD_ID_KEYS = [PprofLabel.threadId, 'thread id', 'tid', 'thread_native_id', 'os thread id', 'os_thread_id', 'native thread id'];
const THREAD_NAME_KEYS = [PprofLabel.threadName, 'thread name', 'threadName', 'thread_native_name'];
/** Samples a profile may expand to: lazily produced, but each is still visited once (a crafted count must not hang a reader). */
export const MAX_PPROF_SAMPLES = 1_000_000_000n;
const TIME_UNIT_NS: Record<string, bigint> = { nanoseconds: 1n, microseconds: 1000n, milliseconds: 1_000_000n, seconds: 1_000_000_000n };

function asBig(v: number | bigint | undefined): bigint {
  if (v === undefined) return 0n;
  return typeof v === 'bigint' ? BigInt.asIntN(64, v) : BigInt(v);
}

function bad(message: string, cause?: unknown): ProfpackError {
  return new ProfpackError(`not a pprof profile: ${message}`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'profile.proto, optionally gzipped', cause });
}

function decode(bytes: Uint8Array): Profile {
  let raw = bytes;
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      raw = gunzipSync(bytes);
    } catch (err) {
      throw bad('gzip data is corrupt', err);
    }
  }
  try {
    return Profile.decode(raw);
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err), err);
  }
}

/** Index of the value column to read: the named one, else the CPU/wall one; refuses a profile without it. */
function chooseSampleType(types: { type: string; unit: string }[], wanted: string | undefined): number {
  const names = types.map((t) => `${t.type}/${t.unit}`).join(', ') || 'none';
  if (wanted !== undefined) {
    const i = types.findIndex((t) => t.type === wanted || `${t.type}/${t.unit}` === wanted);
    if (i < 0) throw new ProfpackError(`the profile has no sample type "${wanted}" (it has ${names})`, { code: ErrorCode.CONVERT_SAMPLE_TYPE, expected: names });
    return i;
  }
  const pick = (ok: (t: { type: string; unit: string }) => boolean) => types.findIndex(ok);
  let i = pick((t) => (t.type === 'samples' || t.type === 'sample') && t.unit === 'count');
  if (i < 0) i = pick((t) => t.type === 'cpu');
  if (i < 0) i = pick((t) => t.type === 'wall');
  if (i < 0) {
    throw new ProfpackError(`not a CPU or wall-time profile (sample types: ${names}); choose one with --sample-type / { sampleType }`, {
      code: ErrorCode.CONVERT_SAMPLE_TYPE,
      expected: 'a samples/count, cpu or wall sample type',
    });
  }
  return i;
}

/** pprof bytes → model source. */
export function fromPprof(bytes: Uint8Array, options: FromPprofOptions = {}): PprofSource {
  const profile = decode(bytes);
  const strings = profile.stringTable.strings;
  const str = (i: number | bigint | undefined): string => strings[Number(i ?? 0)] ?? '';
  const types = profile.sampleType.map((vt) => ({ type: str(vt.type), unit: str(vt.unit) }));
  const column = chooseSampleType(types, options.sampleType);
  const valueUnit = types[column]!.unit;

  const period = asBig(profile.period);
  const periodUnitNs = profile.periodType === undefined ? undefined : TIME_UNIT_NS[str(profile.periodType.unit)];
  const periodNs = periodUnitNs !== undefined && period > 0n ? period * periodUnitNs : 0n;
  const intervalUs = periodNs >= 1000n ? periodNs / 1000n : 1000n;
  // A time value counts periods; a value in another time unit is scaled to ns first.
  const valueUnitNs = TIME_UNIT_NS[valueUnit];
  const countOf = (value: bigint): bigint => (valueUnitNs !== undefined && periodNs > 0n ? (value * valueUnitNs + periodNs / 2n) / periodNs : value);

  // time_nanos is the Unix epoch in ns (profile.proto).
  const startUs = asBig(profile.timeNanos) / 1000n;
  const durationNs = asBig(profile.durationNanos);
  const meta: ProfileMeta = { startTimeUs: startUs, sampleIntervalUs: intervalUs, threadNames: new Map() };
  if (durationNs > 0n) meta.durationUs = durationNs / 1000n;
  const frames = new MemoryProfile(meta);

  const mappings = new Map<string, string>();
  for (const m of profile.mapping) mappings.set(asBig(m.id).toString(), str(m.filename));
  const functions = new Map<string, PFunction>();
  for (const fn of profile.function) functions.set(asBig(fn.id).toString(), fn);
  const locationFrames = new Map<string, number[]>();
  for (const loc of profile.location) {
    const ids: number[] = [];
    const lines = loc.line ?? [];
    if (lines.length === 0) {
      const file = mappings.get(asBig(loc.mappingId).toString()) ?? '';
      const base = file.slice(file.lastIndexOf('/') + 1);
      const funcname = base === '' ? `0x${BigInt.asUintN(64, asBig(loc.address)).toString(16)}` : `[${base}]`;
      ids.push(frames.internFrame({ filename: file, funcname, lineno: null, endLineno: null, column: null, endColumn: null, opcode: null }));
    }
    // pprof lists inlined callees first and the caller they were inlined into last: innermost first.
    for (const line of lines) {
      const fn = functions.get(asBig(line.functionId).toString());
      const lineno = Number(asBig(line.line));
      const col = Number(asBig(line.column));
      const named = fn === undefined ? '' : str(fn.name) || str(fn.systemName);
      const name = named === ANONYMOUS ? '' : named;
      const frame: Frame = {
        filename: fn === undefined ? '' : str(fn.filename),
        funcname: name,
        lineno: lineno === 0 ? null : lineno,
        endLineno: null,
        column: col === 0 ? null : col,
        endColumn: null,
        opcode: null,
      };
      ids.push(frames.internFrame(frame));
    }
    locationFrames.set(asBig(loc.id).toString(), ids);
  }

  interface Group {
    stack: number[];
    threadId: bigint;
    interpreterId: number;
    status: number;
    time: bigint | undefined;
    count: bigint;
  }
  const groups: Group[] = [];
  const dropped = new Map<string, number>();
  let droppedLabels = 0;
  let total = 0n;
  for (const sample of profile.sample) {
    const stack: number[] = [];
    for (const locId of sample.locationId) {
      const ids = locationFrames.get(asBig(locId).toString());
      if (ids === undefined) throw bad(`a sample names missing location ${locId}`);
      for (const id of ids) stack.push(id);
    }
    const value = asBig(sample.value[column]);
    if (value < 0n) throw bad(`a sample has negative ${types[column]!.type} value ${value}`);
    let threadRank = THREAD_ID_KEYS.length;
    const drop = (key: string) => {
      droppedLabels++;
      dropped.set(key, (dropped.get(key) ?? 0) + 1);
    };
    const group: Group = { stack, threadId: 0n, interpreterId: 0, status: 0, time: undefined, count: countOf(value) };
    let threadName: string | undefined;
    for (const label of sample.label) {
      const key = str(label.key);
      const text = label.str !== undefined && asBig(label.str) !== 0n ? str(label.str) : undefined;
      // A numeric label, or a string label holding a decimal integer (Datadog writes "thread id" as text).
      const num = text === undefined ? asBig(label.num) : /^-?\d+$/.test(text) ? BigInt(text) : undefined;
      const rank = THREAD_ID_KEYS.indexOf(key);
      if (rank >= 0 && num !== undefined) {
        // One thread id wins; a less preferred one (Datadog's "os thread id" beside "thread id") is dropped.
        if (rank < threadRank) {
          if (threadRank < THREAD_ID_KEYS.length) drop(THREAD_ID_KEYS[threadRank]!);
          threadRank = rank;
          group.threadId = BigInt.asUintN(64, num);
        } else drop(key);
      } else if (THREAD_NAME_KEYS.includes(key) && text !== undefined) threadName = text;
      else if (key === PprofLabel.interpreterId && num !== undefined) group.interpreterId = Number(num);
      else if (key === PprofLabel.status && num !== undefined) group.status = Number(num);
      else if (key === PprofLabel.timestampUs && num !== undefined) group.time = BigInt.asUintN(64, num);
      else if (key === 'end_timestamp_ns' && num !== undefined && group.time === undefined) group.time = num / 1000n;
      else drop(key);
    }
    if (threadName !== undefined) meta.threadNames!.set(threadKey(group.threadId, group.interpreterId), threadName);
    if (group.count === 0n) continue;
    total += group.count;
    if (total > MAX_PPROF_SAMPLES) {
      throw new ProfpackError(`the ${types[column]!.type} values add up to more than ${MAX_PPROF_SAMPLES} samples; choose a count sample type (--sample-type)`, {
        code: ErrorCode.CONVERT_SAMPLE_TYPE,
        expected: `at most ${MAX_PPROF_SAMPLES} samples`,
      });
    }
    groups.push(group);
  }

  return {
    meta,
    frames: frames.frames,
    sampleType: `${types[column]!.type}/${valueUnit}`,
    droppedLabels,
    droppedLabelKeys: [...dropped.keys()],
    sampleCount: total <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(total) : undefined,
    *samples(): Iterable<Sample> {
      // Samples without a time label follow each other one period apart from the start, per thread.
      const clocks = new Map<string, bigint>();
      for (const g of groups) {
        const key = g.time === undefined ? threadKey(g.threadId, g.interpreterId) : '';
        let clock = clocks.get(key) ?? startUs;
        for (let k = 0n; k < g.count; k++) {
          const t = g.time ?? clock;
          clock += intervalUs;
          yield { threadId: g.threadId, interpreterId: g.interpreterId, timestampUs: t, status: g.status, stack: g.stack };
        }
        if (g.time === undefined) clocks.set(key, clock);
      }
    },
  };
}
