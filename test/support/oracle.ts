/**
 * Independent readings of profiles for the oracle suite (test/oracle): each function here reads a file
 * with a tool or a rule that is not profpack's code, and reduces it to what the suite compares
 * (per-type totals, per-function self values, per-thread sample times).
 *
 * - Tachyon: CPython 3.15's own BinaryReader (cpython_samples.py, one interpreter per batch, streamed);
 * - pprof: `go tool pprof -raw -symbolize=none` (values per sample, locations, labels; names as the proto
 *   holds them), and pprof-format's decode for the samples -raw leaves out (empty stacks) and the period;
 * - .cpuprofile: the source JSON as V8 defines it (nodes, samples, timeDeltas, positionTicks);
 * - speedscope: the file format as speedscope's schema and importer define it (sampled and evented);
 * - collapsed: one `frame;frame;leaf value` line per stack.
 *
 * Tool outputs are cached per file content in a temporary directory, so a second run (or the other
 * backend) asks CPython and Go nothing again. Every comparison goes through `same`, which counts it.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { expect } from 'vitest';
import { cpythonInterpreter } from './cpython.mjs';
import { goBinary } from './outside-tools';

const run = promisify(execFile);

/** Tool outputs by content: survives between runs and between the two backends' runs. */
const cacheDir = path.join(tmpdir(), `profpack-oracle-cache-${process.getuid?.() ?? 0}`);
mkdirSync(cacheDir, { recursive: true });

function contentKey(tool: string, files: string[]): string {
  const h = createHash('sha1').update(tool);
  for (const f of files) h.update('\0').update(readFileSync(f));
  return path.join(cacheDir, `${tool}-${h.digest('hex')}.txt`);
}

/**
 * Write then rename: the cache is shared by every test process of this user (two workers, other checkouts), and a
 * reader that found the key must never read half an output.
 */
function storeCached(key: string, text: string): void {
  const partial = `${key}.${process.pid}.tmp`;
  writeFileSync(partial, text);
  renameSync(partial, key);
}

async function cached(tool: string, files: string[], produce: () => Promise<string>): Promise<string> {
  const key = contentKey(tool, files);
  if (existsSync(key)) return readFileSync(key, 'utf8');
  const text = await produce();
  storeCached(key, text);
  return text;
}

// ---- counting comparisons --------------------------------------------------------------------------

let comparisons = 0;
const failures: string[] = [];
/** Comparisons made so far in this test file (the suite prints it once). */
export function comparisonCount(): number {
  return comparisons;
}
/** The `what` of every comparison that failed so far, one line each (the closing note lists them). */
export function failedComparisons(): string[] {
  return failures;
}

/*
 * Comparisons are soft (expect.soft): a test goes on through its fixtures after a mismatch, so one run lists
 * every wrong number, and still fails.
 */
function check(ok: boolean, actual: unknown, expected: unknown, what: string): void {
  comparisons++;
  if (ok) return;
  const line = `${what}: got ${short(actual)}, want ${short(expected)}${firstDifference(actual, expected)}`;
  failures.push(line);
  // The line, not a diff of the values: vitest's diff of two 10^4-element arrays takes seconds.
  expect.soft(false, line).toBe(true);
}

/** Where two arrays first differ, for the failure line. */
function firstDifference(a: unknown, e: unknown): string {
  if (!Array.isArray(a) || !Array.isArray(e)) return '';
  let k = 0;
  while (k < a.length && k < e.length && isDeepStrictEqual(a[k], e[k])) k++;
  return ` (lengths ${a.length}/${e.length}; first difference at [${k}]: ${short(a[k])} vs ${short(e[k])})`;
}

function short(v: unknown): string {
  const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)) ?? String(v);
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** actual deep-equals expected, counted; `what` names the fixture, path and number. */
export function same(actual: unknown, expected: unknown, what: string): void {
  check(isDeepStrictEqual(actual, expected), actual, expected, what);
}

/** Within `tolerance`, or within 1e-9 of the value (doubles past 2^53 are not exact), counted. */
export function near(actual: number, expected: number, tolerance: number, what: string): void {
  check(close(actual, expected, tolerance), actual, expected, what);
}

function close(a: number, e: number, tolerance: number): boolean {
  return Math.abs(a - e) <= Math.max(tolerance, Math.abs(e) * 1e-9);
}

/** Every key of both maps has the same value (within `tolerance`); one comparison per key. */
export function sameMap(actual: Map<string, number>, expected: Map<string, number>, what: string, tolerance = 0): void {
  for (const k of new Set([...actual.keys(), ...expected.keys()])) {
    const a = actual.get(k) ?? 0;
    const e = expected.get(k) ?? 0;
    check(close(a, e, tolerance), a, e, `${what} [${k}]`);
  }
}

// ---- the reduced form every oracle gives -----------------------------------------------------------

/** What an oracle says of one profile, per value column (`type/unit`). */
export interface Truth {
  /** Per column: the sum over all samples. */
  total: Map<string, number>;
  /** Per column: value by leaf function name ('(no stack)' for an empty stack). */
  self: Map<string, Map<string, number>>;
  /** Per thread key: the sample times in µs, in source order (only where the source has times). */
  times?: Map<string, number[]>;
}

export const NO_STACK = '(no stack)';

function addTo(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

function column(truth: Truth, type: string): { self: Map<string, number> } {
  let self = truth.self.get(type);
  if (self === undefined) {
    self = new Map();
    truth.self.set(type, self);
    truth.total.set(type, 0);
  }
  return { self };
}

function add(truth: Truth, type: string, leaf: string, value: number): void {
  addTo(column(truth, type).self, leaf, value);
  truth.total.set(type, truth.total.get(type)! + value);
}

// ---- CPython -----------------------------------------------------------------------------------------

export interface CpyFrame {
  funcname: string;
  filename: string;
  lineno: number | null;
}

export interface CpyRun {
  thread: string;
  interp: number;
  stack: number;
  status: number;
  times: number[];
}

export interface CpyProfile {
  file: string;
  info: {
    start_time_us: number;
    sample_interval_us: number;
    sample_count: number;
    thread_count: number;
    mode: number | null;
  } | null;
  error: string | null;
  /** Innermost frame first, as CPython hands them to collect(). */
  stacks: CpyFrame[][];
  /**
   * The same stacks as CPython's collectors show them: without the frames `filter_internal_frames` drops
   * (the sampling profiler's own, `_sync_coordinator.py`).
   */
  shown: CpyFrame[][];
  /**
   * What CPython's own CollapsedStackCollector (`replay --collapsed`) counted, fed the same replay: per
   * (stack outermost first, thread) its ticks. Stacks left empty by the filter are not counted.
   */
  collapsed: { stack: CpyFrame[]; thread: string; count: number }[];
  /** One entry per collect() thread: a REPEAT run is one entry with its ticks' times. */
  runs: CpyRun[];
}

/** CPython's reading of each file (one interpreter for the batch, outputs cached per file). */
export async function cpython(files: string[]): Promise<Map<string, CpyProfile>> {
  const out = new Map<string, CpyProfile>();
  const missing: string[] = [];
  for (const f of files) {
    const key = cpythonKey(f);
    if (existsSync(key)) out.set(f, parseCpython(readFileSync(key, 'utf8'), f));
    else missing.push(f);
  }
  if (missing.length > 0) {
    const { stdout } = await run(cpythonInterpreter(), [cpythonScript, ...missing], { maxBuffer: 1 << 30 });
    // Split the stream per file and cache each file's part.
    let start = 0;
    for (const f of missing) {
      const endMark = `{"end":${JSON.stringify(f)}`;
      const end = stdout.indexOf('\n', stdout.indexOf(endMark, start));
      const part = stdout.slice(start, end + 1);
      storeCached(cpythonKey(f), part);
      out.set(f, parseCpython(part, f));
      start = end + 1;
    }
  }
  return out;
}

const cpythonScript = path.join(__dirname, 'cpython_samples.py');
/** The cached reading of `file`, keyed by the script too (a changed script reads again). */
const cpythonKey = (file: string): string => contentKey('cpython', [cpythonScript, file]);

function parseCpython(text: string, file: string): CpyProfile {
  const p: CpyProfile = { file, info: null, error: null, stacks: [], shown: [], runs: [], collapsed: [] };
  const frame = ([funcname, filename, lineno]: [string, string, number | null]): CpyFrame => ({
    funcname,
    filename,
    lineno,
  });
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const o = JSON.parse(line) as Record<string, unknown>;
    if ('ts' in o)
      p.runs.push({
        thread: o.t as string,
        interp: o.i as number,
        stack: o.s as number,
        status: o.st as number,
        times: (o.ts as (number | string)[]).map(Number),
      });
    else if ('k' in o) {
      const frames = (o.f as [string, string, number | null][]).map(frame);
      const hidden = new Set(o.h as number[]);
      p.stacks[o.k as number] = frames;
      p.shown[o.k as number] = frames.filter((_, i) => !hidden.has(i));
    } else if ('collapsed' in o)
      p.collapsed = (o.collapsed as [[string, number, string][], string, number][]).map(([tree, thread, count]) => ({
        stack: tree.map(([filename, lineno, funcname]) => frame([funcname, filename, lineno])),
        thread,
        count,
      }));
    else if ('file' in o) p.info = o.info as CpyProfile['info'];
    else if ('end' in o) p.error = o.error as string | null;
  }
  return p;
}

/** Tachyon's thread key as profpack prints it: `ID` or `ID@INTERPRETER`. */
export function cpyThreadKey(r: { thread: string; interp: number }): string {
  return r.interp === 0 ? r.thread : `${r.thread}@${r.interp}`;
}

/**
 * The leaf's `funcname filename` (profpack's `top` key), or '(no stack)', of the stack as CPython's collectors
 * show it (profpack's views and outputs hide the profiler's frames too; a stack of those only is empty).
 */
export function cpyLeafKey(p: CpyProfile, stack: number, withFile = true, shown = true): string {
  const leaf = (shown ? p.shown : p.stacks)[stack]![0];
  if (leaf === undefined) return NO_STACK;
  // Outputs name a function by its name alone, and an unnamed one '(anonymous)' (as V8 and the views do).
  // Rows and outputs name an unnamed function '(anonymous)' (docs/formats.md "Rows", rowName), as V8 and the views do;
  // CPython's reader gives ''.
  const name = leaf.funcname === '' ? '(anonymous)' : leaf.funcname;
  return withFile ? `${name} ${leaf.filename}` : name;
}

const MODE_CPU = 1;
const MODE_GIL = 2;

/**
 * The truth of a CPython reading, by the conventions of docs/formats.md: `samples/count` counts ticks; a
 * wall-mode tick weighs the gap to its thread's next tick (the last one the nominal interval), a CPU- or
 * GIL-mode tick the nominal interval; an empty stack is a sample like any other. Leaves are those of the
 * stacks CPython's collectors show (`shown`), or of the stacks as recorded (`shown` false: the fleet tables).
 */
export function cpythonTruth(p: CpyProfile, withFile = true, shown = true): Truth {
  const truth: Truth = { total: new Map(), self: new Map(), times: new Map() };
  const interval = p.info!.sample_interval_us;
  const timed = p.info!.mode === MODE_CPU || p.info!.mode === MODE_GIL ? 'cpu/nanoseconds' : 'wall/nanoseconds';
  column(truth, 'samples/count');
  column(truth, timed);
  // Per thread: ticks in replay order, to weigh each by the gap to the next.
  const ticks = new Map<string, { leaf: string; time: number }[]>();
  for (const r of p.runs) {
    const key = cpyThreadKey(r);
    const leaf = cpyLeafKey(p, r.stack, withFile, shown);
    let list = ticks.get(key);
    if (list === undefined) ticks.set(key, (list = []));
    for (const t of r.times) list.push({ leaf, time: t });
    add(truth, 'samples/count', leaf, r.times.length);
  }
  for (const [key, list] of ticks) {
    truth.times!.set(
      key,
      list.map((t) => t.time),
    );
    list.forEach((t, i) => {
      const gapUs =
        timed === 'cpu/nanoseconds' || i + 1 === list.length ? interval : Math.max(0, list[i + 1]!.time - t.time);
      add(truth, timed, t.leaf, gapUs * 1000);
    });
  }
  return truth;
}

// ---- go tool pprof -raw -------------------------------------------------------------------------------

export interface RawSample {
  values: number[];
  /** Leaf function name (the first line of the first location), '(no stack)' when none. */
  leaf: string;
  labels: string;
}

export interface PprofRaw {
  /** The lines before `Samples:` (PeriodType, Period, Time, Duration). */
  header: string;
  types: string[];
  samples: RawSample[];
  /** The proto's period and its unit (`PeriodType`), 0 and '' when none. */
  period: { value: number; unit: string };
  /**
   * Every Sample of the proto as pprof-format decodes it: its values and numeric labels. Go merges Samples of
   * equal stack and labels (two ticks at one time become one of count 2), so per-Sample times come from here.
   */
  protoSamples: { values: number[]; num: Map<string, number> }[];
}

/** `go tool pprof ARGS`, stdout (no binary lookups: a Go profile names the build's temporary executable). */
export async function goPprof(args: string[]): Promise<string> {
  const env = { ...process.env, PPROF_BINARY_PATH: '/nonexistent', PPROF_TMPDIR: '/nonexistent' };
  const { stdout } = await run(goBinary(), ['tool', 'pprof', ...args], {
    env,
    maxBuffer: 1 << 28,
    encoding: 'buffer',
  });
  return stdout.toString('latin1');
}

/** A proto int64 field as Go reads it (pprof-format hands a varint past 2^63 back unsigned). */
function int64(v: number | bigint): number {
  return Number(BigInt.asIntN(64, BigInt(v)));
}

/** A pprof file's proto as pprof-format decodes it (gzipped or not). */
function decodePprof(file: string): Profile {
  const bytes = readFileSync(file);
  return Profile.decode(bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes);
}

/**
 * The samples without locations, as pprof-format decodes them (values negated for a diff base), labels in -raw's
 * `key:[value unit]` form. Go 1.19's `-raw` does not list them, though `-top` counts them in its total.
 */
function emptyStackSamples(p: Profile, sign: number): RawSample[] {
  const str = (i: unknown): string => p.stringTable.strings[Number(i)] ?? '';
  return p.sample
    .filter((s) => s.locationId.length === 0)
    .map((s) => ({
      values: s.value.map((v) => sign * int64(v)),
      leaf: NO_STACK,
      labels: s.label
        .map((l) => {
          const unit = str(l.numUnit);
          const value = Number(l.str) !== 0 ? str(l.str) : `${int64(l.num)}${unit === '' ? '' : ` ${unit}`}`;
          return `${str(l.key)}:[${value}]`;
        })
        .join(' '),
    }));
}

/**
 * `go tool pprof -raw -symbolize=none [-diff_base=BASE] FILE`, read whole: per sample its values, leaf function
 * and label lines (with a base, its samples come negated, marked pprof::base). `-symbolize=none` keeps the
 * proto's names: the default demangler shortens C++-looking ones (`<module>` → ''). Samples without locations,
 * which -raw omits, come from the proto itself.
 */
export async function pprofRaw(file: string, diffBase?: string): Promise<PprofRaw> {
  const base = diffBase === undefined ? [] : [`-diff_base=${diffBase}`];
  const text = Buffer.from(
    await cached('pprof-raw-nosym', [...(diffBase === undefined ? [] : [diffBase]), file], () =>
      goPprof(['-raw', '-symbolize=none', ...base, file]),
    ),
    'latin1',
  ).toString('utf8');
  const lines = text.split('\n');
  let i = lines.indexOf('Samples:');
  if (i < 0) throw new Error(`go tool pprof -raw ${file}: no Samples: line`);
  const types = lines[i + 1]!.trim()
    .split(/\s+/)
    .map((t) => t.replace(/\[dflt\]$/, ''));
  const raw: { values: number[]; locs: number[]; labels: string }[] = [];
  const sampleLine = /^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$/;
  for (i += 2; i < lines.length && lines[i] !== 'Locations'; i++) {
    const m = sampleLine.exec(lines[i]!);
    if (m !== null) {
      raw.push({
        values: m[1]!.trim().split(/\s+/).map(Number),
        locs: m[2]!.trim() === '' ? [] : m[2]!.trim().split(/\s+/).map(Number),
        labels: '',
      });
    } else if (raw.length > 0 && lines[i]!.trim() !== '') raw.at(-1)!.labels += lines[i]!.trim() + '\n';
  }
  const names = new Map<number, string>();
  // `     3: 0x0 M=1 NAME FILE:LINE s=START(SYSTEM_NAME)`; inlined callers follow on indented lines without an id;
  // a name or file holding a newline continues on an unindented line. NAME and FILE are split at the last space,
  // or before a `<…>` file (`<frozen importlib._bootstrap>`).
  const locs: string[] = [];
  for (i++; i < lines.length && lines[i] !== 'Mappings'; i++) {
    if (/^\s/.test(lines[i]!) || locs.length === 0) locs.push(lines[i]!);
    else locs[locs.length - 1] += '\n' + lines[i]!;
  }
  const locLine = /^\s+(\d+): 0x[0-9a-f]+(?: M=\d+)? ([^]*):-?\d+ s=-?\d+(?:\([^]*\))?$/;
  for (const line of locs) {
    const m = locLine.exec(line);
    if (m === null) continue;
    const body = m[2]!;
    const angle = /^([^]*) <[^<>]*>$/.exec(body);
    names.set(Number(m[1]), angle !== null ? angle[1]! : body.slice(0, Math.max(0, body.lastIndexOf(' '))));
  }
  const samples: RawSample[] = raw.map((s) => ({
    values: s.values,
    leaf: s.locs.length === 0 ? NO_STACK : (names.get(s.locs[0]!) ?? `?${s.locs[0]}`),
    labels: s.labels,
  }));
  const proto = decodePprof(file);
  // Only where -raw left them out (a later Go that lists them is not counted twice).
  if (!raw.some((s) => s.locs.length === 0)) {
    samples.push(...emptyStackSamples(proto, 1));
    if (diffBase !== undefined) samples.push(...emptyStackSamples(decodePprof(diffBase), -1));
  }
  const periodUnit =
    proto.periodType === undefined ? '' : (proto.stringTable.strings[Number(proto.periodType.unit)] ?? '');
  return {
    header: lines.slice(0, lines.indexOf('Samples:')).join('\n'),
    types,
    samples,
    period: { value: Number(proto.period), unit: periodUnit },
    protoSamples: proto.sample.map((x) => ({
      values: x.value.map(int64),
      num: new Map(
        x.label
          .filter((l) => Number(l.str) === 0)
          .map((l) => [proto.stringTable.strings[Number(l.key)]!, int64(l.num)]),
      ),
    })),
  };
}

export function pprofTruth(raw: PprofRaw): Truth {
  const truth: Truth = { total: new Map(), self: new Map() };
  for (const t of raw.types) column(truth, t);
  for (const s of raw.samples) raw.types.forEach((t, k) => add(truth, t, s.leaf, s.values[k]!));
  return truth;
}

/**
 * A time label's values per Sample of the proto, one per tick: a Sample whose column `weightColumn` is c stands for
 * c ticks `step` apart from its time (docs/formats.md, pprof write).
 */
export function pprofLabelValues(raw: PprofRaw, key: string, weightColumn: number, step: number): number[] {
  const out: number[] = [];
  for (const s of raw.protoSamples) {
    const t = s.num.get(key);
    if (t !== undefined) out.push(...ticksFrom(t, s.values[weightColumn]!, step));
  }
  return out;
}

/** The times of c ticks one `step` apart from `time` (a record's ticks, docs/formats.md "Times"). */
export function ticksFrom(time: number, c: number, step: number): number[] {
  return Array.from({ length: c }, (_, k) => time + k * step);
}

/** Nanoseconds per unit of a pprof time unit. */
const NS_PER: Record<string, number> = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9 };

/** The profile's period in µs (its ticks' spacing); NaN when its unit is not a time. */
export function pprofPeriodUs(raw: PprofRaw): number {
  return (raw.period.value * (NS_PER[raw.period.unit] ?? NaN)) / 1000;
}

// ---- .cpuprofile (V8's own fields) ---------------------------------------------------------------------

export interface CpuProfileJson {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
    positionTicks?: { line: number; ticks: number }[];
  }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
  timestamps?: number[];
}

/** A V8 function name as the views print it: '' is '(anonymous)'. */
export function v8Name(name: string): string {
  return name === '' ? '(anonymous)' : name;
}

/**
 * samples/count per leaf function from `samples`, the sample times (startTime + running sum of timeDeltas, or
 * Node ≤ 10's `timestamps`), and wall/nanoseconds by the gap to the next sample (the last: the previous gap).
 */
export function cpuprofileTruth(json: CpuProfileJson): Truth & { lineTicks: Map<string, number> } {
  const truth: Truth & { lineTicks: Map<string, number> } = {
    total: new Map(),
    self: new Map(),
    times: new Map(),
    lineTicks: new Map(),
  };
  const byId = new Map(json.nodes.map((n) => [n.id, n]));
  const samples = json.samples ?? [];
  const times: number[] = [];
  if (json.timeDeltas !== undefined) {
    let t = json.startTime;
    for (const d of json.timeDeltas) times.push((t += d));
  } else times.push(...(json.timestamps ?? []));
  truth.times!.set('main', times);
  column(truth, 'samples/count');
  column(truth, 'wall/nanoseconds');
  samples.forEach((id, i) => {
    const name = v8Name(byId.get(id)!.callFrame.functionName);
    add(truth, 'samples/count', name, 1);
    const gap = i + 1 < samples.length ? times[i + 1]! - times[i]! : i > 0 ? times[i]! - times[i - 1]! : 0;
    add(truth, 'wall/nanoseconds', name, Math.max(0, gap) * 1000);
  });
  // positionTicks: the hot lines (1-based), as DevTools shows them, each node's capped at its samples; samples
  // beyond its ticks have no line from V8 and count at the function's own line (callFrame.lineNumber, 0-based).
  const perNode = new Map<number, number>();
  for (const id of samples) perNode.set(id, (perNode.get(id) ?? 0) + 1);
  for (const n of json.nodes) {
    if (n.positionTicks === undefined || n.positionTicks.length === 0) continue;
    let left = perNode.get(n.id) ?? 0;
    for (const p of n.positionTicks) {
      const used = Math.min(left, p.ticks);
      left -= used;
      addTo(truth.lineTicks, `${v8Name(n.callFrame.functionName)}:${p.line}`, used);
    }
    if (left > 0) addTo(truth.lineTicks, `${v8Name(n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`, left);
  }
  return truth;
}

// ---- speedscope -----------------------------------------------------------------------------------------

interface SpeedscopeFile {
  shared: { frames: { name: string; file?: string; line?: number }[] };
  profiles: (
    | { type: 'sampled'; name: string; unit: string; samples: number[][]; weights: number[] }
    | { type: 'evented'; name: string; unit: string; events: { type: 'O' | 'C'; at: number; frame: number }[] }
  )[];
}

/** Self value per frame name over every profile, as speedscope's importer weighs them; per profile its unit. */
export function speedscopeTruth(json: SpeedscopeFile): Truth & { units: string[] } {
  const truth: Truth & { units: string[] } = { total: new Map(), self: new Map(), units: [] };
  const frames = json.shared.frames;
  for (const p of json.profiles) {
    truth.units.push(p.unit);
    const type = `value/${p.unit}`;
    column(truth, type);
    if (p.type === 'sampled') {
      p.samples.forEach((stack, i) => {
        const leaf = stack.length === 0 ? NO_STACK : frames[stack.at(-1)!]!.name;
        add(truth, type, leaf, p.weights[i]!);
      });
    } else {
      // Evented: the open frame on top of the stack owns the time until the next event.
      const open: number[] = [];
      let last = p.events[0]?.at ?? 0;
      for (const e of p.events) {
        if (open.length > 0) add(truth, type, frames[open.at(-1)!]!.name, e.at - last);
        last = e.at;
        if (e.type === 'O') open.push(e.frame);
        else open.pop();
      }
    }
  }
  return truth;
}

// ---- collapsed ---------------------------------------------------------------------------------------------

/** `a;b;leaf N` lines: N per leaf frame, the frame's name without a ` (file:line)` suffix. */
export function collapsedTruth(text: string): Truth {
  const truth: Truth = { total: new Map(), self: new Map() };
  column(truth, 'value');
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const space = line.lastIndexOf(' ');
    // A leading `thread (ID)` frame names the thread (profpack and py-spy --threads), not a function.
    const stack = line.slice(0, space).replace(/^thread \([^()]*\)(;|$)/, '');
    const leaf = stack.slice(stack.lastIndexOf(';') + 1).replace(/ \([^()]*\)$/, '');
    add(truth, 'value', leaf === '' ? NO_STACK : leaf, Number(line.slice(space + 1)));
  }
  return truth;
}
