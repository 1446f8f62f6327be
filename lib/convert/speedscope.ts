/**
 * speedscope's own JSON file format (https://www.speedscope.app/file-format-schema.json):
 * shared frames `{ name, file, line, col }` and one "sampled" profile per
 * thread, each stack outermost first, with a weight per sample.
 *
 * A weight is what the spec says, the weight of the sample: each sample
 * weighs one sampling interval (µs), so speedscope ranks functions as
 * `profpack top` does. Time is not part of the format: profpack keeps it in
 * an extra profile field speedscope ignores, `$profpack.gapsUs` (each sample's
 * distance to the one before, the first to `startValue`, float64 µs: exact
 * below 2^53). Thread ids live in the profile name, "thread ID" or
 * "thread ID (NAME)" with the thread's name. Status, end positions and
 * opcodes are not kept.
 *
 * Reading a file from another tool, a sample counts its weight divided by the
 * profile's smallest weight (rounded; weight 0 counts nothing), one after
 * another from `startValue`; a profile name that is not "thread ID" becomes
 * the name of thread INDEX. "evented" profiles (what speedscope's own Export
 * writes) are refused: they hold open/close events, not samples.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { ANONYMOUS, MemoryProfile, anonymousName, parseThreadKey, readJsonShape, threadKey, type ProfileSource } from './model';

export interface SpeedscopeFrame {
  name: string;
  file?: string;
  line?: number;
  col?: number;
}

export interface SpeedscopeSampledProfile {
  type: 'sampled';
  name: string;
  unit: 'microseconds';
  startValue: number;
  endValue: number;
  samples: number[][];
  weights: number[];
  /** profpack's own: each sample's time after the previous one (the first: after startValue), µs. */
  $profpack?: { gapsUs: number[] };
}

export interface SpeedscopeFile {
  $schema: 'https://www.speedscope.app/file-format-schema.json';
  shared: { frames: SpeedscopeFrame[] };
  profiles: SpeedscopeSampledProfile[];
  name?: string;
  activeProfileIndex?: number;
  exporter?: string;
}

export const SPEEDSCOPE_SCHEMA = 'https://www.speedscope.app/file-format-schema.json';

export function toSpeedscope(source: ProfileSource, name = 'profpack profile'): SpeedscopeFile {
  const perThread = new Map<string, { times: bigint[]; stacks: number[][] }>();
  for (const s of source.samples()) {
    const key = threadKey(s.threadId, s.interpreterId);
    let t = perThread.get(key);
    if (t === undefined) {
      t = { times: [], stacks: [] };
      perThread.set(key, t);
    }
    const stack = new Array<number>(s.stack.length);
    for (let i = 0; i < stack.length; i++) stack[i] = s.stack[stack.length - 1 - i]!;
    t.times.push(s.timestampUs);
    t.stacks.push(stack);
  }
  const frames: SpeedscopeFrame[] = source.frames.map((f) => {
    const out: SpeedscopeFrame = { name: anonymousName(f.funcname) };
    if (f.filename !== '') out.file = f.filename;
    if (f.lineno !== null) out.line = f.lineno;
    if (f.column !== null) out.col = f.column;
    return out;
  });
  const interval = Number(source.meta.sampleIntervalUs);
  const profiles: SpeedscopeSampledProfile[] = [];
  for (const [key, t] of perThread) {
    const order = t.times.map((_, i) => i);
    order.sort((a, b) => (t.times[a]! < t.times[b]! ? -1 : t.times[a]! > t.times[b]! ? 1 : a - b));
    const samples = order.map((i) => t.stacks[i]!);
    const weights = order.map(() => interval);
    const gapsUs = order.map((i, k) => (k === 0 ? 0 : Number(t.times[i]! - t.times[order[k - 1]!]!)));
    const startValue = order.length > 0 ? Number(t.times[order[0]!]!) : 0;
    const endValue = order.length > 0 ? Number(t.times[order[order.length - 1]!]!) + interval : 0;
    const threadName = source.meta.threadNames?.get(key);
    const name = threadName === undefined ? `thread ${key}` : `thread ${key} (${threadName})`;
    profiles.push({ type: 'sampled', name, unit: 'microseconds', startValue, endValue, samples, weights, $profpack: { gapsUs } });
  }
  return { $schema: SPEEDSCOPE_SCHEMA, shared: { frames }, profiles, name, activeProfileIndex: 0, exporter: 'profpack' };
}

/** Samples a foreign profile may expand to (they are held in memory). */
const MAX_EXPANDED_SAMPLES = 50_000_000;

const THREAD_NAME = /^thread (\d+(?:@\d+)?)(?: \((.*)\))?$/s;

/** speedscope "sampled" profiles → model (evented profiles are refused). */
export function fromSpeedscope(input: unknown): MemoryProfile {
  return readJsonShape('speedscope file', SPEEDSCOPE_SCHEMA, () => readSpeedscope(input));
}

function readSpeedscope(input: unknown): MemoryProfile {
  const file = input as SpeedscopeFile;
  if (file === null || typeof file !== 'object' || file.shared === undefined || !Array.isArray(file.shared.frames) || !Array.isArray(file.profiles)) {
    throw new ProfpackError('not a speedscope file: no shared.frames or profiles', { code: ErrorCode.CONVERT_BAD_INPUT, expected: SPEEDSCOPE_SCHEMA });
  }
  const threadNames = new Map<string, string>();
  const out = new MemoryProfile({ startTimeUs: 0n, sampleIntervalUs: 1000n, threadNames });
  let interval: number | undefined;
  const ids = file.shared.frames.map((f) =>
    out.internFrame({ filename: f.file ?? '', funcname: f.name === ANONYMOUS ? '' : String(f.name ?? ''), lineno: f.line ?? null, endLineno: null, column: f.col ?? null, endColumn: null, opcode: null }),
  );
  let start: bigint | undefined;
  file.profiles.forEach((profile, index) => {
    if (profile.type !== 'sampled') {
      throw new ProfpackError(`speedscope profile ${index} is "${String(profile.type)}"; only sampled profiles convert`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'type "sampled"' });
    }
    if (!Array.isArray(profile.samples) || !Array.isArray(profile.weights) || profile.weights.length !== profile.samples.length) {
      throw new ProfpackError(`speedscope profile ${index} needs as many weights as samples`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'samples[] and weights[] of one length' });
    }
    const name = String(profile.name ?? '');
    const m = THREAD_NAME.exec(name);
    const key = m === null ? String(index) : m[1]!;
    const { threadId, interpreterId } = parseThreadKey(key);
    if (m === null ? name !== '' : m[2] !== undefined) threadNames.set(key, m === null ? name : m[2]!);
    const scale = unitToUs(profile.unit);
    const gaps = profile.$profpack?.gapsUs;
    const own = Array.isArray(gaps) && gaps.length === profile.samples.length;
    // A foreign profile: a sample counts its weight over the smallest one.
    let unit = Infinity;
    for (const w of profile.weights) if (Number(w) > 0 && Number(w) < unit) unit = Number(w);
    if (!own) {
      let expanded = 0;
      for (const w of profile.weights) expanded += Math.round(Number(w) / unit) || 0;
      if (expanded > MAX_EXPANDED_SAMPLES) {
        throw new ProfpackError(`speedscope profile ${index}'s weights expand to ${expanded} samples of its smallest weight`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: `at most ${MAX_EXPANDED_SAMPLES} samples` });
      }
    }
    if (own) interval ??= Number(profile.weights[0] ?? 1000) * scale;
    else if (unit !== Infinity) interval ??= unit * scale;
    let t = Number(profile.startValue ?? 0) * scale;
    profile.samples.forEach((stack, i) => {
      if (!Array.isArray(stack)) throw new ProfpackError(`speedscope profile ${index} sample ${i} is not a stack`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'an array of frame indices' });
      const frames = new Array<number>(stack.length);
      for (let k = 0; k < stack.length; k++) {
        const id = ids[stack[stack.length - 1 - k]!];
        if (id === undefined) throw new ProfpackError(`speedscope sample names missing frame ${stack[stack.length - 1 - k]}`, { code: ErrorCode.CONVERT_BAD_INPUT });
        frames[k] = id;
      }
      if (own) {
        t += Number(gaps[i]) * scale;
        const time = BigInt(Math.round(t));
        if (start === undefined || time < start) start = time;
        out.writeStack(threadId, interpreterId, time, 0, frames);
        return;
      }
      const count = Math.round(Number(profile.weights[i]) / unit);
      for (let k = 0; k < count; k++) {
        const time = BigInt(Math.round(t));
        if (start === undefined || time < start) start = time;
        out.writeStack(threadId, interpreterId, time, 0, frames);
        t += unit * scale;
      }
    });
  });
  out.meta.startTimeUs = start ?? 0n;
  if (interval !== undefined && interval >= 1) out.meta.sampleIntervalUs = BigInt(Math.round(interval));
  return out;
}

function unitToUs(unit: string | undefined): number {
  switch (unit) {
    case 'nanoseconds':
      return 1e-3;
    case 'milliseconds':
      return 1e3;
    case 'seconds':
      return 1e6;
    default:
      return 1;
  }
}
