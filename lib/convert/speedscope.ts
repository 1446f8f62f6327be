/**
 * speedscope's own JSON file format (https://www.speedscope.app/file-format-schema.json):
 * shared frames `{ name, file, line, col }` and one "sampled" profile per
 * thread, each stack outermost first, with a weight per sample.
 *
 * Weights carry time: a thread's samples are written in time order and each
 * weight is the gap to the thread's next sample (the last one gets the
 * sampling interval), with `startValue` = the first sample's time in µs. So
 * the reverse conversion recovers every timestamp (as float64 µs, which is
 * exact below 2^53). Thread ids live in the profile name, "thread ID".
 * Status, end positions and opcodes are not kept.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { MemoryProfile, parseThreadKey, threadKey, type ProfileSource } from './model';

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
    const out: SpeedscopeFrame = { name: f.funcname };
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
    const weights = order.map((i, k) => (k + 1 < order.length ? Number(t.times[order[k + 1]!]! - t.times[i]!) : interval));
    const startValue = order.length > 0 ? Number(t.times[order[0]!]!) : 0;
    const endValue = order.length > 0 ? Number(t.times[order[order.length - 1]!]!) + interval : 0;
    profiles.push({ type: 'sampled', name: `thread ${key}`, unit: 'microseconds', startValue, endValue, samples, weights });
  }
  return { $schema: SPEEDSCOPE_SCHEMA, shared: { frames }, profiles, name, activeProfileIndex: 0, exporter: 'profpack' };
}

const THREAD_NAME = /^thread (\d+(?:@\d+)?)$/;

/** speedscope "sampled" profiles → model (evented profiles are refused). */
export function fromSpeedscope(input: unknown): MemoryProfile {
  const file = input as SpeedscopeFile;
  if (file === null || typeof file !== 'object' || file.shared === undefined || !Array.isArray(file.shared.frames) || !Array.isArray(file.profiles)) {
    throw new ProfpackError('not a speedscope file: no shared.frames or profiles', { code: ErrorCode.CONVERT_BAD_INPUT, expected: SPEEDSCOPE_SCHEMA });
  }
  const out = new MemoryProfile({ startTimeUs: 0n, sampleIntervalUs: 1000n });
  const ids = file.shared.frames.map((f) =>
    out.internFrame({ filename: f.file ?? '', funcname: f.name, lineno: f.line ?? null, endLineno: null, column: f.col ?? null, endColumn: null, opcode: null }),
  );
  let start: bigint | undefined;
  file.profiles.forEach((profile, index) => {
    if (profile.type !== 'sampled') {
      throw new ProfpackError(`speedscope profile ${index} is "${String(profile.type)}"; only sampled profiles convert`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'type "sampled"' });
    }
    const m = THREAD_NAME.exec(profile.name ?? '');
    const { threadId, interpreterId } = parseThreadKey(m === null ? String(index) : m[1]!);
    const scale = unitToUs(profile.unit);
    let t = Number(profile.startValue ?? 0) * scale;
    profile.samples.forEach((stack, i) => {
      const frames = new Array<number>(stack.length);
      for (let k = 0; k < stack.length; k++) {
        const id = ids[stack[stack.length - 1 - k]!];
        if (id === undefined) throw new ProfpackError(`speedscope sample names missing frame ${stack[stack.length - 1 - k]}`, { code: ErrorCode.CONVERT_BAD_INPUT });
        frames[k] = id;
      }
      const time = BigInt(Math.round(t));
      if (start === undefined || time < start) start = time;
      out.writeStack(threadId, interpreterId, time, 0, frames);
      t += Number(profile.weights[i] ?? 0) * scale;
    });
  });
  out.meta.startTimeUs = start ?? 0n;
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
