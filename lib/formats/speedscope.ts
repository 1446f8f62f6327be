/**
 * speedscope's own JSON format (https://www.speedscope.app/file-format-schema.json):
 * shared frames `{ name, file, line, col }` and profiles, each with a `unit`
 * (none, nanoseconds … seconds, bytes).
 *
 * Read: "sampled" profiles, one record per sample whose value is its weight
 * (never expanded into samples). The unit gives the sample type: times become
 * time/nanoseconds (exact integers: a weight that is not a whole number of ns,
 * or past 2^53 ns, is refused), bytes space/bytes, none samples/count (whole
 * numbers). Negative, fractional (where the unit is not a time) and
 * non-numeric weights are refused naming the profile and the index. A profile
 * named "thread ID" or "thread ID (NAME)" (what profpack writes), or py-spy's
 * `Thread TID "NAME"` / `Process PID Thread TID "NAME"`, is that thread;
 * another profile is thread INDEX with its name. Time: the samples of a time
 * profile lie end to end from its startValue, unless profpack's own
 * `$profpack.gapsUs` says each sample's real time. "evented" profiles (open
 * and close events: what speedscope's Export writes) are refused, named.
 *
 * Write: "sampled" profiles, one per thread, in the unit of the chosen sample
 * type (time units as they are, bytes, else none); weights are the records'
 * values; a thread's samples are in time order and its axis is the real time
 * (startValue/endValue from the records' times, relative to the profile's
 * start) when the records have times. `$profpack` keeps the sample type and,
 * per profile, the gaps between samples' times.
 */
import { ErrorCode, ProfpackError } from '../errors';
import {
  ANONYMOUS,
  ExactSums,
  ProfileBuilder,
  anonymousName,
  nanosPerUnit,
  parseThreadKey,
  threadKey,
  timeColumnOrDefault,
  type Label,
  type ProfileSource,
  type SampleType,
} from '../profile/index';
import type { FormatAdapter, ReadInput, ReadOptions, WriteOptions, WriteTarget } from './adapter';
import {
  ChunkedText,
  GrowingFloats,
  GrowingUints,
  badInput,
  describeType,
  inputBytes,
  negativeValue,
  parseJson,
  pushNumbers,
  readJsonShape,
  utf8,
  writtenColumn,
  DroppedLabels,
} from './io';
import { detectJsonKeys, headText } from './sniff';

export const SPEEDSCOPE_SCHEMA = 'https://www.speedscope.app/file-format-schema.json';
const WHAT = 'speedscope file';
const bad = (message: string) => badInput(WHAT, message, SPEEDSCOPE_SCHEMA);

interface SpeedscopeFrame {
  name?: unknown;
  file?: unknown;
  line?: unknown;
  col?: unknown;
}

interface SpeedscopeProfile {
  type?: unknown;
  name?: unknown;
  unit?: unknown;
  startValue?: unknown;
  endValue?: unknown;
  samples?: unknown;
  weights?: unknown;
  $profpack?: { gapsUs?: unknown };
}

const SPEEDSCOPE_UNITS = ['none', 'nanoseconds', 'microseconds', 'milliseconds', 'seconds', 'bytes'];

/** The sample type a speedscope unit reads as (profpack's own `$profpack.sampleType` wins when its unit agrees). */
function typeOfUnit(unit: string): SampleType {
  if (nanosPerUnit(unit) !== undefined) return { type: 'time', unit: 'nanoseconds' };
  if (unit === 'bytes') return { type: 'space', unit: 'bytes' };
  return { type: 'samples', unit: 'count' };
}

const THREAD_NAME = /^thread (\d+(?:@\d+)?)(?: \((.*)\))?$/s;
// py-spy names a profile `Thread TID "NAME"`, `Process PID Thread TID "NAME"` with --subprocesses; TID is the
// OS thread id, or `0x…` (the pthread id: macOS, or no OS id known); NAME may be empty.
const PYSPY_THREAD = /^(?:Process (\d+) )?Thread (\d+|0x[0-9A-Fa-f]+) "(.*)"$/s;

/** The thread (and process label) a profile's name says, else thread INDEX named as the profile. */
function profileThread(
  name: string,
  index: number,
): { threadId: bigint; interpreterId: number; name?: string; labels: Label[] } {
  const own = THREAD_NAME.exec(name);
  if (own !== null) return { ...parseThreadKey(own[1]!), name: own[2], labels: [] };
  const spy = PYSPY_THREAD.exec(name);
  if (spy !== null)
    return {
      threadId: BigInt(spy[2]!),
      interpreterId: 0,
      name: spy[3] === '' ? undefined : spy[3],
      labels: spy[1] === undefined ? [] : [{ key: 'pid', num: Number(spy[1]) }],
    };
  return { threadId: BigInt(index), interpreterId: 0, name: name === '' ? undefined : name, labels: [] };
}

function readSpeedscope(doc: unknown, bytes: Uint8Array): ProfileBuilder {
  const file = doc as {
    shared?: { frames?: unknown };
    profiles?: unknown;
    $profpack?: { sampleType?: SampleType; startTimeUs?: unknown };
  };
  if (
    doc === null ||
    typeof doc !== 'object' ||
    file.shared === null ||
    typeof file.shared !== 'object' ||
    !Array.isArray(file.shared.frames) ||
    !Array.isArray(file.profiles)
  ) {
    throw bad('no shared.frames or profiles');
  }
  const profiles = file.profiles as SpeedscopeProfile[];
  // One sample type per kind of unit among the profiles, in first-seen order.
  const types: SampleType[] = [];
  const columnOf = profiles.map((p, index) => {
    if (p === null || typeof p !== 'object') throw bad(`profile ${index} is not an object`);
    if (p.type === 'evented')
      throw new ProfpackError(
        `speedscope profile ${index} is "evented" (open/close events, what speedscope's Export writes); ` +
          'only sampled profiles convert',
        { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'type "sampled"' },
      );
    if (p.type !== 'sampled') throw bad(`profile ${index} is of type ${JSON.stringify(p.type)}`);
    const unit = typeof p.unit === 'string' && SPEEDSCOPE_UNITS.includes(p.unit) ? p.unit : undefined;
    if (unit === undefined)
      throw bad(`profile ${index}'s unit ${JSON.stringify(p.unit)} is not one of ${SPEEDSCOPE_UNITS.join(', ')}`);
    let type = typeOfUnit(unit);
    const own = file.$profpack?.sampleType;
    if (
      own !== undefined &&
      typeof own.type === 'string' &&
      typeOfUnit(String(own.unit)).unit === type.unit &&
      nanosPerUnit(String(own.unit)) === nanosPerUnit(type.unit)
    )
      type = { type: own.type, unit: type.unit };
    let column = types.findIndex((t) => t.unit === type.unit);
    if (column < 0) column = types.push(type) - 1;
    return column;
  });
  if (types.length === 0) types.push({ type: 'samples', unit: 'count' });
  const out = new ProfileBuilder({
    sampleTypes: types,
    defaultSampleType: 0,
    startTimeUs: 0n,
    sampleIntervalUs: 0n,
    origin: { format: 'speedscope' },
  });
  const frameIds = (file.shared.frames as SpeedscopeFrame[]).map((f, i) => {
    if (f === null || typeof f !== 'object') throw bad(`shared.frames[${i}] is not an object`);
    const name = typeof f.name === 'string' ? f.name : f.name == null ? '' : JSON.stringify(f.name);
    const line = typeof f.line === 'number' && Number.isInteger(f.line) ? f.line : null;
    const col = typeof f.col === 'number' && Number.isInteger(f.col) ? f.col : null;
    return out.internFrame({
      filename: typeof f.file === 'string' ? f.file : '',
      funcname: name === ANONYMOUS ? '' : name,
      lineno: line,
      endLineno: null,
      column: col,
      endColumn: null,
      opcode: null,
    });
  });

  // profpack writes startValue relative to the profile's start and keeps the start here.
  const baseUs = Number(file.$profpack?.startTimeUs ?? 0);
  const offsetUs = Number.isSafeInteger(baseUs) && baseUs > 0 ? baseUs : 0;
  let start = Infinity;
  let end = -Infinity;
  const values = new Array<number>(types.length).fill(0);
  const frames = new GrowingUints();
  profiles.forEach((profile, index) => {
    const unit = profile.unit as string;
    const column = columnOf[index]!;
    const samples = profile.samples;
    const weights = profile.weights;
    if (!Array.isArray(samples) || !Array.isArray(weights) || weights.length !== samples.length)
      throw bad(`profile ${index} needs as many weights as samples`);
    const name = typeof profile.name === 'string' ? profile.name : '';
    const who = profileThread(name, index);
    const thread = out.internThread(who.threadId, who.interpreterId, who.name);
    const labels = who.labels.length === 0 ? 0 : out.internLabels(who.labels);
    const nsPer = nanosPerUnit(unit);
    const usPer = nsPer === undefined ? undefined : nsPer / 1000;
    const gaps = profile.$profpack?.gapsUs;
    const ownGaps = Array.isArray(gaps) && gaps.length === samples.length ? (gaps as unknown[]) : undefined;
    const startValue = Number(profile.startValue ?? 0);
    let t = usPer === undefined || !Number.isFinite(startValue) ? NaN : offsetUs + startValue * usPer;
    if (Number.isFinite(t)) start = Math.min(start, t);
    for (let i = 0; i < samples.length; i++) {
      const w = weights[i];
      const where = `profile ${index} ("${name}") weights[${i}]`;
      const badWeight = (message: string) =>
        badInput(WHAT, `${where} ${message}`, SPEEDSCOPE_SCHEMA, weightOffset(bytes, index, i));
      if (typeof w !== 'number' || !Number.isFinite(w)) throw badWeight(`is ${JSON.stringify(w)}, not a number`);
      if (w < 0) throw badWeight(`is negative (${w}); a weight is 0 or more`);
      const value = nsPer === undefined ? w : wholeNanos(w, nsPer);
      if (!Number.isInteger(value))
        throw badWeight(
          nsPer === undefined
            ? `is ${w}, not a whole number of ${unit === 'bytes' ? 'bytes' : 'samples'}`
            : `is ${w} ${unit}, not a whole number of ns`,
        );
      if (value > Number.MAX_SAFE_INTEGER)
        throw badWeight(`is ${w} ${unit}, past 2^53 ${nsPer === undefined ? unit : 'ns'} (not exact)`);
      const stack = samples[i];
      if (!Array.isArray(stack)) throw bad(`profile ${index} samples[${i}] is not a stack`);
      frames.length = 0;
      for (const f of stack as unknown[]) {
        const id = typeof f === 'number' ? frameIds[f] : undefined;
        if (id === undefined) throw bad(`profile ${index} samples[${i}] names missing frame ${JSON.stringify(f)}`);
        frames.push(id);
      }
      if (ownGaps !== undefined) t += Number(ownGaps[i]);
      values[column] = value;
      out.add(
        out.stacks.internOutermostFirst(frames.data, frames.length),
        thread,
        ownGaps !== undefined || usPer !== undefined ? t : NaN,
        0,
        values,
        labels,
      );
      if (ownGaps === undefined && usPer !== undefined) t += w * usPer;
    }
    const endValue = Number(profile.endValue);
    if (usPer !== undefined && Number.isFinite(endValue)) end = Math.max(end, offsetUs + endValue * usPer);
    values[column] = 0;
  });
  if (Number.isFinite(start)) {
    out.meta.startTimeUs = BigInt(Math.round(start));
    if (end > start) out.meta.durationUs = BigInt(Math.round(end - start));
  }
  return out;
}

/**
 * A time weight in whole ns, or NaN when it has a sub-ns fraction. `w * nsPer`
 * carries binary noise (0.07 s is 70000000.00000001 ns), so the weight is whole
 * when the nearest integer, back in the unit, is the very same double.
 */
function wholeNanos(w: number, nsPer: number): number {
  const n = Math.round(w * nsPer);
  return n / nsPer === w ? n : NaN;
}

/**
 * The byte offset of `weights[item]` of the profile-th "weights" array in the
 * file, for an error to point at (found again in the text only when a weight
 * is refused); undefined when the text does not show it plainly.
 */
function weightOffset(bytes: Uint8Array, profile: number, item: number): number | undefined {
  const text = utf8(bytes);
  const key = /"weights"\s*:\s*\[/g;
  let m: RegExpExecArray | null = null;
  for (let k = 0; k <= profile; k++) if ((m = key.exec(text)) === null) return undefined;
  let i = m!.index + m![0].length;
  let depth = 0;
  let seen = 0;
  const skipSpace = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  skipSpace();
  while (i < text.length && seen < item) {
    const c = text[i]!;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (depth-- === 0) return undefined;
    } else if (c === ',' && depth === 0) seen++;
    i++;
  }
  skipSpace();
  return Buffer.byteLength(text.slice(0, i));
}

/** The unit a speedscope profile is written in for a sample type. */
function speedscopeUnit(type: SampleType): string {
  const ns = nanosPerUnit(type.unit);
  if (ns !== undefined)
    return ['nanoseconds', 'microseconds', 'milliseconds', 'seconds'][[1, 1e3, 1e6, 1e9].indexOf(ns)]!;
  return type.unit === 'bytes' ? 'bytes' : 'none';
}

function writeSpeedscope(source: ProfileSource, target: WriteTarget, options: WriteOptions): void {
  // A tick stream's time axis is its real time (the time column), not its count of ticks.
  const column =
    options.sampleType === undefined
      ? timeColumnOrDefault(source.meta)
      : writtenColumn(source.meta, options.sampleType);
  const type = source.meta.sampleTypes[column]!;
  const unit = speedscopeUnit(type);
  const usPerUnit = nanosPerUnit(type.unit) === undefined ? undefined : nanosPerUnit(type.unit)! / 1000;
  const perThread = new Map<number, { stack: GrowingUints; time: GrowingFloats; value: GrowingFloats }>();
  const dropped = new DroppedLabels();
  for (const b of source.batches()) {
    const values = b.values[column]!;
    for (let i = 0; i < b.length; i++) {
      dropped.note(b.labels[i]!);
      let rows = perThread.get(b.thread[i]!);
      if (rows === undefined)
        perThread.set(
          b.thread[i]!,
          (rows = { stack: new GrowingUints(), time: new GrowingFloats(), value: new GrowingFloats() }),
        );
      if (values[i]! < 0)
        throw negativeValue(WHAT, values[i]!, describeType(source.meta, column), "speedscope's importer");
      rows.stack.push(b.stack[i]!);
      rows.time.push(b.time[i]!);
      rows.value.push(values[i]!);
    }
  }
  const out = new ChunkedText(target);
  const own = JSON.stringify({ sampleType: type, startTimeUs: String(source.meta.startTimeUs) });
  out.push(
    `{"$schema":"${SPEEDSCOPE_SCHEMA}","exporter":"profpack","name":"profpack profile","activeProfileIndex":0,` +
      `"$profpack":${own},"shared":{"frames":[`,
  );
  source.frames.forEach((f, i) => {
    const frame: { name: string; file?: string; line?: number; col?: number } = { name: anonymousName(f.funcname) };
    if (f.filename !== '') frame.file = f.filename;
    if (f.lineno !== null) frame.line = f.lineno;
    if (f.column !== null) frame.col = f.column;
    out.push((i === 0 ? '' : ',') + JSON.stringify(frame));
  });
  out.push(']},"profiles":[');
  const stackJson = new Map<number, string>();
  const outermostFirst = (stack: number): string => {
    let s = stackJson.get(stack);
    if (s === undefined) {
      s = `[${source.stacks.toArray(stack).reverse().join(',')}]`;
      stackJson.set(stack, s);
    }
    return s;
  };
  const startUs = Number(source.meta.startTimeUs);
  let first = true;
  for (const [t, rows] of perThread) {
    const n = rows.stack.length;
    const times = rows.time.view();
    const timed = usPerUnit !== undefined && times.every((x) => Number.isFinite(x));
    const order = Array.from({ length: n }, (_, i) => i);
    if (timed) order.sort((a, b) => times[a]! - times[b]! || a - b);
    const ref = source.threads[t]!;
    const key = threadKey(ref.threadId, ref.interpreterId);
    const name = ref.name === undefined ? `thread ${key}` : `thread ${key} (${ref.name})`;
    // The axis ends at the start plus the weights, their exact sum rounded once to a double.
    const span = new ExactSums(1);
    for (let i = 0; i < n; i++) span.add(0, rows.value.data[i]!);
    let startValue = 0;
    let endValue = span.nearest(0);
    if (timed && n > 0) {
      startValue = (times[order[0]!]! - startUs) / usPerUnit;
      span.add(0, startValue);
      const last = order[n - 1]!;
      endValue = Math.max(span.nearest(0), (times[last]! - startUs) / usPerUnit + rows.value.data[last]!);
    }
    out.push(
      `${first ? '' : ','}{"type":"sampled","name":${JSON.stringify(name)},"unit":"${unit}",` +
        `"startValue":${startValue},"endValue":${endValue},"samples":[`,
    );
    first = false;
    for (let k = 0; k < n; k++) out.push((k === 0 ? '' : ',') + outermostFirst(rows.stack.data[order[k]!]!));
    out.push('],"weights":[');
    pushNumbers(
      out,
      order.map((i) => rows.value.data[i]!),
    );
    out.push(']');
    if (timed) {
      out.push(',"$profpack":{"gapsUs":[');
      pushNumbers(
        out,
        order.map((i, k) => times[i]! - (k === 0 ? startUs + startValue * usPerUnit : times[order[k - 1]!]!)),
      );
      out.push(']}');
    }
    out.push('}');
  }
  out.push(']}');
  out.flush();
  dropped.warn(source.labelSets, 'speedscope', options.onWarning);
}

export const speedscopeAdapter: FormatAdapter<'speedscope'> = {
  name: 'speedscope',
  title: 'speedscope JSON',
  label: 'speedscope',
  extensions: ['.speedscope.json'],
  mayBeGzipped: true,
  writesWhole: true,
  detect: (head) => {
    const keys = detectJsonKeys(head);
    if (keys === undefined) return false;
    if (keys.has('$schema') && headText(head).includes('speedscope')) return true;
    return keys.has('shared') && keys.has('profiles');
  },
  read(input: ReadInput, _options: ReadOptions): ProfileSource {
    const bytes = inputBytes(input);
    const doc = parseJson(bytes, WHAT, SPEEDSCOPE_SCHEMA);
    return readJsonShape(WHAT, SPEEDSCOPE_SCHEMA, () => readSpeedscope(doc, bytes));
  },
  write: writeSpeedscope,
};
