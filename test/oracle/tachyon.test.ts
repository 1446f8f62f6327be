// test tier: slow (every shared vector and a recording against CPython's reader, ~10 s)
/**
 * The oracle suite, Tachyon inputs (issue 36): every shared vector and a recording written here, read by
 * CPython 3.15's own reader (test/support/cpython_samples.py) and its CollapsedStackCollector, against what
 * profpack prints (info, top, windows) and writes (pprof read by `go tool pprof -raw`, speedscope and .cpuprofile
 * read as their formats define them, speedscope also by its own importer in Chromium, collapsed, Tachyon version 1
 * read back by CPython, version 2 → downgrade). Each comparison is counted; the last test prints the count.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { tachyonAdapter } from '../../lib/formats/tachyon/index';
import { ProfileBuilder, makeFrame } from '../../lib/profile/index';
import { ProfileWriter } from '../../lib/tachyon/index';
import { sandwichList, speedscopeTable } from '../formats/speedscope-app';
import { profpack, profpackOk } from '../support/cli-inprocess';
import { repoRoot, sharedPath } from '../support/environment';
import {
  collapsedTruth,
  comparisonCount,
  failedComparisons,
  cpyLeafKey,
  cpython,
  cpythonTruth,
  cpyThreadKey,
  NO_STACK,
  near,
  pprofLabelValues,
  pprofPeriodUs,
  pprofRaw,
  pprofTruth,
  same,
  sameMap,
  speedscopeTruth,
  ticksFrom,
  type CpuProfileJson,
  type CpyProfile,
  type Truth,
  v8Name,
} from '../support/oracle';
import { scratchDir } from '../support/scratch-dir';
import { launch } from '../view/browser';
import { parsePrinted, topRows, type TopJson } from './printed';

const dir = scratchDir('profpack-oracle-tachyon-');
const vectorDir = sharedPath('vectors', 'tachyon');
/** Paths written per vector stay cheap: larger vectors are read, not converted. */
const MAX_CONVERTED_SAMPLES = 20_000;

/**
 * A recording made here: CPU mode (ticks weigh the interval), REPEAT runs whose ticks are uneven (each keeps its
 * own time), empty stacks, two threads.
 */
function writeRecording(): string {
  const file = path.join(dir, 'recorded-cpu.tach');
  const w = new ProfileWriter(file, {
    sampleIntervalUs: 1000,
    startTimeUs: 5_000_000,
    mode: 'cpu',
    compression: 'none',
  });
  const spin = w.internFrame({ filename: '/app/spin.py', funcname: 'spin', lineno: 3 });
  const main = w.internFrame({ filename: '/app/spin.py', funcname: 'main', lineno: 9 });
  const io = w.internFrame({ filename: '/app/io.py', funcname: 'wait_io', lineno: 5 });
  let t = 5_001_000;
  for (let i = 0; i < 300; i++) {
    // Uneven gaps: 1 ms, then 7 ms every tenth tick (the sampler fell behind while the loop ran on).
    t += i % 10 === 9 ? 7000 : 1000;
    w.writeStack(1, 0, t, 0, i % 50 === 49 ? [] : [spin, main]);
    if (i % 3 === 0) w.writeStack(2, 0, t + 300, 0, [io, main]);
  }
  w.finalize();
  return file;
}

/**
 * A real recording: `profpack record` (the built CLI, dist/: `npm test` compiles it first) of a Node program that
 * spins in `spin` for 300 ms of CPU.
 */
function recordNode(): string {
  const script = path.join(dir, 'spin.js');
  writeFileSync(
    script,
    // 300 ms of the process's CPU, not of the wall clock: as many samples in spin on a loaded machine.
    'function spin(ms) { const end = process.cpuUsage().user + ms * 1000; let x = 0;\n' +
      '  while (process.cpuUsage().user < end) for (let i = 0; i < 200000; i++) x += Math.sqrt(x + 1); return x; }\n' +
      'spin(300);\n',
  );
  const file = path.join(dir, 'recorded-node.tach');
  const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
  execFileSync(process.execPath, [cli, 'record', '-o', file, '--', process.execPath, script], { stdio: 'pipe' });
  return file;
}

const vectors = readdirSync(vectorDir)
  .filter((f) => f.endsWith('.bin'))
  .map((f) => path.join(vectorDir, f));
let recorded = '';
let recordedNode = '';
let cpy = new Map<string, CpyProfile>();
/** Every file CPython accepts, with its truth. */
const accepted: { file: string; name: string; p: CpyProfile; truth: Truth; byName: Truth }[] = [];

beforeAll(async () => {
  recorded = writeRecording();
  recordedNode = recordNode();
  cpy = await cpython([...vectors, recorded, recordedNode]);
  for (const [file, p] of cpy)
    if (p.error === null && p.info !== null)
      accepted.push({
        file,
        name: path.basename(file),
        p,
        truth: cpythonTruth(p),
        byName: cpythonTruth(p, false),
      });
  expect(accepted.length).toBeGreaterThan(40);
}, 120_000);

/**
 * CPython's reading holds a time or a weight no 64-bit field can hold (a tick at or past 2^63 ns, s13's ticks near
 * 2^63 µs; a wall value at or past 2^63 ns): an output may refuse it with a code rather than write a wrong number.
 */
function unstorable(p: CpyProfile, truth: Truth): boolean {
  const limit = 2 ** 63;
  const times = [...truth.times!.values()].flat();
  const values = [...truth.self.get(timedType(p))!.values(), truth.total.get(timedType(p))!];
  return times.some((t) => Math.abs(t) * 1000 >= limit) || values.some((v) => v >= limit);
}

const outputs = new Map<string, Promise<string | null>>();
/**
 * `convert FILE ARGS -o DIR/NAME+SUFFIX`, once per output (tests share them). null: the file is `unstorable` and
 * profpack refused it with a code (exit 2, `ERR_…`) and left no output; any other failure throws.
 */
function output(file: string, name: string, suffix: string, ...args: string[]): Promise<string | null> {
  const out = path.join(dir, name + suffix);
  let hit = outputs.get(out);
  if (hit === undefined) {
    const a = accepted.find((x) => x.file === file);
    const mayRefuse = a !== undefined && unstorable(a.p, a.truth);
    hit = mayRefuse ? convertOrRefuse(['convert', '-q', file, ...args, '-o', out], out) : convertOk(args, file, out);
    outputs.set(out, hit);
  }
  return hit;
}

async function convertOk(args: string[], file: string, out: string): Promise<string> {
  await profpackOk(['convert', '-q', file, ...args, '-o', out]);
  return out;
}

/** `profpack ARGS` writing `out`: `out`, or null after a coded refusal that left no file. */
async function convertOrRefuse(args: string[], out: string): Promise<string | null> {
  const r = await profpack(args);
  if (r.status === 0) return out;
  const what = `${path.basename(out)}: refused`;
  same(r.status, 2, `${what}: exit status (${r.stderr.trim()})`);
  same(/^profpack: ERR_[A-Z0-9_]+: /.test(r.stderr), true, `${what} with a code (${r.stderr.trim()})`);
  same(existsSync(out), false, `${what}: no output left`);
  return null;
}

/** The accepted files but zstd twins and big-endian copies (the same samples; checked apart). */
function plainOnes(): typeof accepted {
  return accepted.filter((a) => !a.name.includes('_zstd') && !a.name.startsWith('c01_'));
}

async function top(file: string, ...extra: string[]): Promise<TopJson> {
  return JSON.parse(await profpackOk(['top', '--json', '-n', '0', ...extra, file])) as TopJson;
}

function timedType(p: CpyProfile): string {
  return p.info!.mode === 1 || p.info!.mode === 2 ? 'cpu/nanoseconds' : 'wall/nanoseconds';
}

/** `fn` over `items`, two at a time (the machine has two cores). */
async function inPairs<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 2)
    out.push(...(await Promise.all(items.slice(i, i + 2).map((item) => fn(item)))));
  return out;
}

/** Sorted copy. */
const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/** All of a reading's ticks as sorted `thread time leaf-stack` strings (a multiset of samples). */
function tickKeys(p: CpyProfile): string[] {
  const out: string[] = [];
  for (const r of p.runs) {
    const stack = p.stacks[r.stack]!.map((f) => `${f.funcname}@${f.filename}:${f.lineno}`).join('<');
    for (const t of r.times) out.push(`${cpyThreadKey(r)} ${t} ${stack}`);
  }
  return out.sort();
}

describe('refused vectors: CPython refuses, profpack refuses with a code', () => {
  it('every vector CPython cannot read is a coded error in profpack top', async () => {
    let refused = 0;
    for (const [file, p] of cpy) {
      if (p.error === null) continue;
      refused++;
      const r = await profpack(['top', file]);
      same(r.status, 2, `${path.basename(file)}: top exit status (CPython: ${p.error})`);
      expect(r.stderr).toMatch(/^profpack: ERR_[A-Z0-9_]+: /);
    }
    expect(refused).toBeGreaterThan(20);
  });
});

describe('read: top and info against CPython', () => {
  it('each accepted file: sample count, threads, per-function self counts and time weights', async () => {
    for (const { file, name, p, truth } of plainOnes()) {
      const counts = await top(file);
      same(counts.total, truth.total.get('samples/count'), `${name}: top total samples`);
      sameMap(topRows(counts), truth.self.get('samples/count')!, `${name}: top self samples per function`);
      const type = timedType(p);
      const timed = await top(file, '--sample-type', type);
      near(timed.total, truth.total.get(type)!, 1, `${name}: top total ${type}`);
      sameMap(topRows(timed), truth.self.get(type)!, `${name}: top self ${type} per function`, 1);
      const info = await profpackOk(['info', file]);
      same(Number(/^samples:\s+(\d+)/m.exec(info)?.[1]), p.info!.sample_count, `${name}: info samples`);
      same(Number(/^threads:\s+(\d+)/m.exec(info)?.[1]), p.info!.thread_count, `${name}: info threads`);
      const seen = new Set(p.runs.map(cpyThreadKey)).size;
      const seenLine = /(\d+) threads seen/.exec(info);
      if (seenLine !== null) same(Number(seenLine[1]), seen, `${name}: info threads seen`);
    }
  }, 60_000);

  it('zstd twins and big-endian copies: the same samples per function as CPython reads', async () => {
    for (const { file, name, truth } of accepted.filter((a) => !plainOnes().includes(a))) {
      const counts = await top(file);
      same(counts.total, truth.total.get('samples/count'), `${name}: top total samples`);
      sameMap(topRows(counts), truth.self.get('samples/count')!, `${name}: top self samples per function`);
    }
  }, 60_000);

  it('printed top rows parse back to the JSON numbers (counts exactly, times within printing rounding)', async () => {
    for (const { file, name, p } of plainOnes().filter((a) => a.p.runs.length > 0)) {
      for (const type of ['samples/count', timedType(p)]) {
        const json = await top(file, '--sample-type', type);
        const text = await profpackOk(['top', '-n', '0', '--sample-type', type, file]);
        const printed = parsePrinted(text);
        same(printed.rows.length, json.rows.length, `${name}: ${type} printed rows`);
        printed.rows.forEach((row, i) => {
          const want = json.rows[i]!;
          if (type === 'samples/count') same(row.self, want.self, `${name}: printed self of ${want.key}`);
          // Significant digits: at least three, so 230.15 ms is never 23 ms.
          else
            near(row.self, want.self, Math.max(1, Math.abs(want.self) * 0.005), `${name}: printed self of ${want.key}`);
        });
        if (type === 'samples/count') same(printed.total, json.total, `${name}: printed total`);
        else near(printed.total, json.total, json.total * 0.005, `${name}: printed ${type} total`);
      }
    }
  }, 60_000);
});

describe('CPython’s own collectors: the profiler’s frames hidden as CPython hides them', () => {
  /** `name file` as profpack's rows key a function (CPython names an unnamed one ''). */
  const fnKey = (f: { funcname: string; filename: string }): string =>
    `${f.funcname === '' ? '(anonymous)' : f.funcname} ${f.filename}`;

  it('every accepted file: top’s self and total per function equal CollapsedStackCollector’s counts', async () => {
    let hiding = 0;
    for (const { file, name, p, truth } of accepted) {
      const self = new Map<string, number>();
      const total = new Map<string, number>();
      let counted = 0;
      for (const { stack, count } of p.collapsed) {
        counted += count;
        const leaf = stack.at(-1)!;
        self.set(fnKey(leaf), (self.get(fnKey(leaf)) ?? 0) + count);
        for (const k of new Set(stack.map(fnKey))) total.set(k, (total.get(k) ?? 0) + count);
      }
      // CPython's collectors drop a stack left empty; profpack keeps it as the (no stack) row (docs/formats.md).
      const all = truth.total.get('samples/count')!;
      if (all > counted) self.set(NO_STACK, all - counted);
      const json = await top(file);
      same(json.total, all, `${name}: top total samples (CPython's reader)`);
      sameMap(topRows(json), self, `${name}: top self per function (CPython's CollapsedStackCollector)`);
      const totals = new Map<string, number>();
      for (const r of json.rows)
        if (r.key !== NO_STACK && r.funcname !== NO_STACK) totals.set(`${r.funcname} ${r.filename}`, r.total);
      sameMap(totals, total, `${name}: top total per function (CPython's CollapsedStackCollector)`);
      if (p.shown.some((s, i) => s.length !== p.stacks[i]!.length)) hiding++;
    }
    // r01/r02 are `profiling.sampling run` recordings: their stacks hold _sync_coordinator.py frames.
    expect(hiding).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('collapsed output: every stack, function by function, is one CollapsedStackCollector counted', async () => {
    for (const { file, name, p } of plainOnes().filter((a) => a.p.info!.sample_count <= MAX_CONVERTED_SAMPLES)) {
      const out = await output(file, name, '.collapsed', '--sample-type', 'samples/count');
      if (out === null) continue;
      const want = new Map<string, number>();
      for (const { stack, count } of p.collapsed) {
        const key = stack.map((f) => (f.funcname === '' ? '(anonymous)' : f.funcname)).join(';');
        want.set(key, (want.get(key) ?? 0) + count);
      }
      const got = new Map<string, number>();
      for (const line of readFileSync(out, 'utf8').split('\n')) {
        if (line === '') continue;
        const space = line.lastIndexOf(' ');
        const frames = line
          .slice(0, space)
          .split(';')
          .filter((f) => !/^thread \([^()]*\)$/.test(f));
        if (frames.length === 0 || frames[0] === '') continue; // an empty stack: counted above as (no stack)
        const key = frames.map((f) => f.replace(/ \([^()]*\)$/, '')).join(';');
        got.set(key, (got.get(key) ?? 0) + Number(line.slice(space + 1)));
      }
      sameMap(got, want, `${name} → collapsed: stacks (CPython's CollapsedStackCollector)`);
    }
  }, 60_000);
});

describe('windows: --from/--to count what CPython times say and partition the whole', () => {
  it('three adjacent windows: each equals CPython’s count in [from, to), and they sum to the whole', async () => {
    for (const { file, name, p, truth } of plainOnes().filter((a) => a.p.runs.length > 0)) {
      const start = p.info!.start_time_us;
      const all = [...truth.times!.values()].flat();
      const last = Math.max(...all);
      const spanMs = (last - start) / 1000;
      const cuts = [-1e300, spanMs / 3, (2 * spanMs) / 3, 1e300];
      let sum = 0;
      for (let w = 0; w < 3; w++) {
        const got = await top(file, '--from', String(cuts[w]), '--to', String(cuts[w + 1]));
        const lo = start + cuts[w]! * 1000;
        const hi = start + cuts[w + 1]! * 1000;
        same(got.total, all.filter((t) => t >= lo && t < hi).length, `${name}: samples in window ${w}`);
        sum += got.total;
      }
      same(sum, all.length, `${name}: windows sum to the whole`);
    }
  }, 60_000);
});

describe('convert: each output read by its own oracle', () => {
  // zstd twins are read above; big-endian copies hold the same samples (their outputs must be the same bytes).
  const converted = () => plainOnes().filter((a) => a.p.info!.sample_count <= MAX_CONVERTED_SAMPLES);

  it('pprof: go tool pprof -raw totals, self per function, and every tick’s timestamp', async () => {
    const written = await Promise.all(
      converted().map(async (a) => ({ ...a, out: await output(a.file, a.name, '.pb.gz') })),
    );
    const files = written.filter((a) => a.out !== null);
    const raws = await inPairs(files, (a) => pprofRaw(a.out!));
    files.forEach(({ name, p, byName }, k) => {
      const raw = raws[k]!;
      const got = pprofTruth(raw);
      for (const type of ['samples/count', timedType(p)]) {
        near(got.total.get(type) ?? NaN, byName.total.get(type)!, 1, `${name} → pprof: go total ${type}`);
        sameMap(got.self.get(type) ?? new Map(), byName.self.get(type)!, `${name} → pprof: go self ${type}`, 1);
      }
      // A Sample of c ticks at t: ticks t, t + period, … (docs/formats.md, pprof write).
      const step = pprofPeriodUs(raw);
      same(step, p.info!.sample_interval_us, `${name} → pprof: period in µs`);
      const times = pprofLabelValues(raw, 'timestamp_us', raw.types.indexOf('samples/count'), step);
      same(sorted(times), sorted([...byName.times!.values()].flat()), `${name} → pprof: timestamp_us of every tick`);
    });
  }, 60_000);

  it('the same samples big-endian convert to the same bytes', async () => {
    const twins = accepted.filter((a) => a.name.startsWith('c01_') && a.name.endsWith('_none.bin'));
    for (const { file, name } of twins) {
      const code = /^c01_big_endian_(s\d\d)_/.exec(name)![1]!;
      const base = accepted.find((a) => a.name.startsWith(`${code}_`) && a.name.endsWith('_none.bin'))!;
      const plain = base.name;
      for (const [suffix, ...args] of [['.pb.gz'], ['.v1.tach']]) {
        const mine = await output(file, name, suffix!, ...args);
        const theirs = await output(base.file, base.name, suffix!, ...args);
        same(mine === null, theirs === null, `${name} ≡ ${plain}: ${suffix} refused alike`);
        if (mine !== null && theirs !== null)
          same(Buffer.compare(readFileSync(mine), readFileSync(theirs)), 0, `${name} ≡ ${plain}: ${suffix} bytes`);
      }
    }
  }, 60_000);

  it('speedscope: valid against its schema; self per frame as the importer weighs it', async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(
      JSON.parse(readFileSync(sharedPath('data', 'outside', 'speedscope-1.25.0-file-format-schema.json'), 'utf8')),
    );
    for (const { file, name, p, byName } of converted().filter((a) => a.p.runs.length > 0)) {
      const type = timedType(p);
      const out = await output(file, name, '.speedscope.json', '--sample-type', type);
      if (out === null) continue;
      const json = JSON.parse(readFileSync(out, 'utf8'));
      same(validate(json), true, `${name} → speedscope: schema (${ajv.errorsText(validate.errors)})`);
      const got = speedscopeTruth(json);
      sameMap(
        got.self.get('value/nanoseconds') ?? new Map(),
        byName.self.get(type)!,
        `${name} → speedscope: self ${type}`,
        1,
      );
    }
  }, 60_000);

  it('speedscope’s own importer (1.25.0 in Chromium): the first thread’s self per function and total', async () => {
    // A bounded set (a page per file, about ten seconds each on a loaded machine): threads interleaved in wall
    // mode (weights are the gaps), and CPU mode with CPython's profiler frames hidden (r01).
    const picked = plainOnes().filter((a) => /^(s02|r01)_/.test(a.name));
    same(picked.length, 2, 'speedscope importer: files picked');
    const browser = await launch();
    const work = path.join(dir, 'speedscope-app');
    mkdirSync(work, { recursive: true });
    try {
      for (const { file, name, p } of picked) {
        const type = timedType(p);
        const out = (await output(file, name, '.speedscope.json', '--sample-type', type))!;
        const json = JSON.parse(readFileSync(out, 'utf8')) as { profiles: { name: string }[] };
        // speedscope opens the first profile: `thread ID`, CPython's thread.
        const thread = /^thread (\S+)/.exec(json.profiles[0]!.name)![1]!;
        const { table, log } = await speedscopeTable(browser, work, out);
        same(
          log.filter((l) => /^(error|pageerror|dialog)/.test(l)),
          [],
          `${name} → speedscope app: errors`,
        );
        const want = new Map<string, number>();
        let total = 0;
        const gapsOf = cpythonTruth({ ...p, runs: p.runs.filter((r) => cpyThreadKey(r) === thread) }, false);
        for (const [fn, v] of gapsOf.self.get(type)!) {
          total += v;
          // speedscope lists an empty stack under no function.
          if (fn !== NO_STACK) want.set(fn, v / 1e6);
        }
        same(want.size > 0, true, `${name} → speedscope app: functions to compare`);
        const got = new Map<string, number>();
        for (const [fn, , self] of sandwichList(table)) if (self > 0) got.set(fn, (got.get(fn) ?? 0) + self);
        // The table prints ms with about three significant digits.
        for (const [fn, ms] of want)
          near(got.get(fn) ?? 0, ms, Math.max(0.01, ms * 0.005), `${name} → speedscope app: self of ${fn}`);
        same(
          [...got.keys()].filter((fn) => !want.has(fn)),
          [],
          `${name} → speedscope app: functions CPython does not show`,
        );
        const top = Math.max(...sandwichList(table).map(([, t]) => t));
        const stacked = total - (gapsOf.self.get(type)!.get(NO_STACK) ?? 0);
        near(top, stacked / 1e6, Math.max(0.01, (stacked / 1e6) * 0.005), `${name} → speedscope app: root total`);
      }
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('collapsed: self per leaf frame equals CPython’s tick counts', async () => {
    for (const { file, name, byName } of converted()) {
      const out = await output(file, name, '.collapsed', '--sample-type', 'samples/count');
      if (out === null) continue;
      const got = collapsedTruth(readFileSync(out, 'utf8'));
      sameMap(got.self.get('value')!, byName.self.get('samples/count')!, `${name} → collapsed: self samples`);
    }
  }, 60_000);

  it('.cpuprofile: the busiest thread’s tick times, no negative timeDeltas, self counts per function', async () => {
    for (const { file, name, p } of converted().filter((a) => a.p.runs.length > 0)) {
      const ticks = new Map<string, number>();
      for (const r of p.runs) ticks.set(cpyThreadKey(r), (ticks.get(cpyThreadKey(r)) ?? 0) + r.times.length);
      const busiest = [...ticks].sort((a, b) => b[1] - a[1])[0]![0];
      const out = await output(file, name, '.cpuprofile', '--thread', busiest);
      if (out === null) continue;
      const json = JSON.parse(readFileSync(out, 'utf8')) as CpuProfileJson;
      same(json.timeDeltas!.filter((d) => d < 0).length, 0, `${name} → cpuprofile: negative timeDeltas`);
      const runs = p.runs.filter((r) => cpyThreadKey(r) === busiest);
      let t = json.startTime;
      const times = json.timeDeltas!.map((d) => (t += d));
      const byId = new Map(json.nodes.map((n) => [n.id, n.callFrame.functionName]));
      // CPU mode: the time off the CPU between ticks is V8's "(idle)" (no tick of CPython's).
      const ticked = json.samples!.map((id) => byId.get(id) !== '(idle)');
      same(
        sorted(times.filter((_, i) => ticked[i])),
        sorted(runs.flatMap((r) => r.times)),
        `${name} → cpuprofile: thread ${busiest} tick times`,
      );
      const got = new Map<string, number>();
      const weighed = new Map<string, number>();
      json.samples!.forEach((id, i) => {
        if (!ticked[i]) return;
        const fn = byId.get(id)!;
        const key = fn === '(root)' ? NO_STACK : v8Name(fn);
        got.set(key, (got.get(key) ?? 0) + 1);
        // As DevTools and speedscope weigh a sample: the gap to the next one, the last to endTime.
        const gap = (i + 1 < times.length ? times[i + 1]! : json.endTime) - times[i]!;
        weighed.set(key, (weighed.get(key) ?? 0) + gap);
      });
      if (timedType(p) === 'cpu/nanoseconds') {
        // Each CPU-mode tick is one interval on the CPU, or less when the next tick came sooner.
        const interval = p.info!.sample_interval_us;
        const ticks = runs
          .flatMap((r) => r.times.map((time) => ({ time, leaf: cpyLeafKey(p, r.stack, false) })))
          .sort((a, b) => a.time - b.time);
        const onCpu = new Map<string, number>();
        ticks.forEach(({ time, leaf }, i) => {
          const gap = i + 1 < ticks.length ? Math.min(interval, ticks[i + 1]!.time - time) : interval;
          onCpu.set(leaf, (onCpu.get(leaf) ?? 0) + gap);
        });
        sameMap(weighed, onCpu, `${name} → cpuprofile: CPU time per function as DevTools weighs it (µs)`, 1e-6);
      }
      const want = new Map<string, number>();
      for (const r of runs) {
        const leaf = cpyLeafKey(p, r.stack, false);
        want.set(leaf, (want.get(leaf) ?? 0) + r.times.length);
      }
      sameMap(got, want, `${name} → cpuprofile: self samples of thread ${busiest}`);
    }
  }, 60_000);

  it('Tachyon version 1 read back by CPython: the same (thread, time, stack) ticks; version 2 → downgrade ≡ convert to 1', async () => {
    const written: { name: string; p: CpyProfile; v1: string | null; down: string | null }[] = [];
    for (const { file, name, p } of converted()) {
      const v1 = await output(file, name, '.v1.tach');
      const v2 = await output(file, name, '.v2.tach', '--tachyon-version', '2');
      let down: string | null = null;
      if (v2 !== null) {
        down = path.join(dir, `${name}.down.tach`);
        await profpackOk(['downgrade', v2, down]);
        const v2v1 = (await output(v2, name, '.v2v1.tach', '--tachyon-version', '1'))!;
        same(
          Buffer.compare(readFileSync(down), readFileSync(v2v1)),
          0,
          `${name}: downgrade ≡ convert --tachyon-version 1 (bytes)`,
        );
      }
      written.push({ name, p, v1, down });
    }
    const back = await cpython(written.flatMap((w) => [w.v1, w.down]).filter((f) => f !== null));
    for (const { name, p, v1, down } of written) {
      const want = tickKeys(p);
      for (const [label, f] of [
        ['convert to 1', v1],
        ['2 → downgrade', down],
      ] as const) {
        if (f === null) continue;
        const got = back.get(f)!;
        same(got.error, null, `${name} → ${label}: CPython reads it`);
        same(got.info?.sample_count, p.info!.sample_count, `${name} → ${label}: CPython sample_count`);
        same(tickKeys(got), want, `${name} → ${label}: CPython's (thread, time, stack) ticks`);
      }
    }
  }, 60_000);

  it('A → B → top: pprof and Tachyon 2 outputs read back to CPython’s per-function totals per type', async () => {
    for (const { file, name, p, byName } of converted()) {
      const outs = [await output(file, name, '.pb.gz'), await output(file, name, '.v2.tach', '--tachyon-version', '2')];
      for (const out of outs.filter((o) => o !== null)) {
        for (const type of ['samples/count', timedType(p)]) {
          const got = await top(out, '--sample-type', type);
          const self = new Map<string, number>();
          for (const r of got.rows) {
            const fn = r.funcname === '' ? '(anonymous)' : r.funcname;
            self.set(fn, (self.get(fn) ?? 0) + r.self);
          }
          near(got.total, byName.total.get(type)!, 1, `${path.basename(out)}: top total ${type}`);
          sameMap(self, byName.self.get(type)!, `${path.basename(out)}: top self ${type}`, 1);
        }
      }
    }
  }, 60_000);
});

describe('diff of two Tachyon files against CPython’s readings', () => {
  it('diff BASE NEW: totals and the self change per function', async () => {
    const pairs = [
      ['s01_single_thread_none.bin', 's02_threads_interleaved_none.bin'],
      ['s14_empty_stacks_none.bin', 's07_push_pop_none.bin'],
      // r01 holds CPython's profiler frames: hidden on both sides of the diff.
      ['s01_single_thread_none.bin', 'r01_cpu_wall_none.bin'],
    ];
    for (const [b, n] of pairs) {
      const base = accepted.find((a) => a.name === b)!;
      const next = accepted.find((a) => a.name === n)!;
      const json = JSON.parse(
        await profpackOk(['diff', '--json', '-n', '0', '--sample-type', 'samples/count', base.file, next.file]),
      ) as { baseTotal: number; newTotal: number; rows: { key: string; funcname: string; selfDelta: number }[] };
      same(json.baseTotal, base.truth.total.get('samples/count'), `diff ${b} ${n}: base total`);
      same(json.newTotal, next.truth.total.get('samples/count'), `diff ${b} ${n}: new total`);
      const want = new Map(next.truth.self.get('samples/count'));
      for (const [k, v] of base.truth.self.get('samples/count')!) want.set(k, (want.get(k) ?? 0) - v);
      const got = new Map<string, number>();
      for (const r of json.rows) {
        const key = r.key === NO_STACK || r.funcname === NO_STACK ? NO_STACK : r.key;
        got.set(key, (got.get(key) ?? 0) + r.selfDelta);
      }
      sameMap(got, want, `diff ${b} ${n}: self change per function`);
    }
  }, 60_000);
});

describe('Parquet export, read by DuckDB’s own Parquet reader', () => {
  it('per profile: samples, value per leaf function, each tick’s time, start ≤ end', async () => {
    const picked = plainOnes().filter((a) => /^(s06|s14|r01|s02)_/.test(a.name) || a.file === recorded);
    const datadog = sharedPath('data', 'outside', 'datadog-pprof-5.20.0-wall-labels.pb.gz');
    const out = path.join(dir, 'parquet');
    const exported = await profpack(['export', ...picked.map((a) => a.file), datadog, '-o', out]);
    same(exported.status, 0, `export: exit status (${exported.stderr.trim()})`);
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    const rows = async (query: string) =>
      (await sql.runAndReadAll(query.replaceAll('$', out + '/'))).getRowObjectsJson() as Record<string, unknown>[];
    const profiles = await rows(`select profile_id::varchar id, path, start_us::double s, end_us::double e,
      duration_s d, sample_interval_us::double i from '$profiles.parquet'`);
    // The summary line counts the samples table's rows: records (a REPEAT run is one), so it says records.
    const [rowCount] = await rows(`select count(*)::double n from '$samples.parquet'`);
    const printed = /: ([\d,]+) records from (\d+) files/.exec(exported.stderr);
    same(
      printed === null ? null : Number(printed[1]!.replaceAll(',', '')),
      Number(rowCount!.n),
      'export: records printed',
    );
    same(printed?.[2], String(picked.length + 1), 'export: files printed');
    // merge prints samples: CPython's tick counts of the same files.
    const merged = await profpack(['merge', ...picked.map((a) => a.file), '-o', path.join(dir, 'merged.tach')]);
    const mergedSamples = /: ([\d,]+) samples from/.exec(merged.stderr)?.[1]?.replaceAll(',', '');
    same(
      Number(mergedSamples),
      picked.reduce((n, a) => n + a.p.info!.sample_count, 0),
      'merge: samples printed',
    );
    for (const prof of profiles) {
      const name = path.basename(String(prof.path));
      same(Number(prof.s) <= Number(prof.e), true, `${name} → parquet profiles: start_us ${prof.s} ≤ end_us ${prof.e}`);
      near(Number(prof.d), (Number(prof.e) - Number(prof.s)) / 1e6, 1e-6, `${name} → parquet profiles: duration_s`);
      const id = String(prof.id);
      const leaves = await rows(`select coalesce(f.funcname, '${NO_STACK}') fn, sum(s.value)::double v
        from '$samples.parquet' s left join '$stacks.parquet' k on k.stack_id = s.stack_id and k.depth = 0
        left join '$frames.parquet' f on f.frame_id = k.frame_id where s.profile_id::varchar = '${id}' group by 1`);
      const got = new Map(leaves.map((r) => [String(r.fn), Number(r.v)]));
      if (prof.path === datadog) {
        const truth = pprofTruth(await pprofRaw(datadog));
        same(Number(prof.d) > 0, true, `${name} → parquet profiles: duration_s > 0`);
        // `value` is the default type's (is_default in sample_types, else the first).
        const [dflt] = await rows(`select type || '/' || unit t from '$sample_types.parquet'
          where profile_id::varchar = '${id}' order by is_default desc, type_index limit 1`);
        sameMap(got, truth.self.get(String(dflt!.t))!, `${name} → parquet: ${String(dflt!.t)} per leaf function`);
        continue;
      }
      const a = accepted.find((x) => x.file === prof.path)!;
      // The fleet tables keep every frame as recorded, CPython's profiler frames too (docs/formats.md).
      const recorded = cpythonTruth(a.p, false, false);
      sameMap(got, recorded.self.get('samples/count')!, `${name} → parquet: value per leaf function`);
      // Each tick at its own time: a row of value c is c ticks one sample_interval_us apart from its time
      // (docs/fleet.md, samples); they must be CPython's ticks.
      same(Number(prof.i), a.p.info!.sample_interval_us, `${name} → parquet profiles: sample_interval_us`);
      const times = await rows(`select timestamp_us::double t, value::double v from '$samples.parquet'
        where profile_id::varchar = '${id}'`);
      const expanded = times.flatMap((r) => ticksFrom(Number(r.t), Number(r.v), Number(prof.i)));
      const ticks = [...a.truth.times!.values()].flat();
      same(sorted(expanded), sorted(ticks), `${name} → parquet: every tick's time`);
      // end_us: the later of CPython's last tick and the start plus the duration its stats block states (µs).
      const stated = (a.p.info as { duration_sec?: number | null }).duration_sec;
      const lastTick = ticks.reduce((m, t) => Math.max(m, t), -Infinity);
      const statedEnd = stated ? a.p.info!.start_time_us + Math.round(stated * 1e6) : -Infinity;
      same(Number(prof.e), Math.max(lastTick, statedEnd), `${name} → parquet profiles: end_us`);
    }
    sql.closeSync();
  }, 60_000);

  it('a record of 500 ticks last (version 2): end_us and duration_s reach its last tick, as CPython times it', async () => {
    // A version-2 record counts ticks one interval apart from its time; downgraded, CPython reads each tick.
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'samples', unit: 'count' }],
      defaultSampleType: 0,
      startTimeUs: 1_000_000n,
      sampleIntervalUs: 1000n,
    });
    const loop = b.stacks.internOutermostFirst([b.internFrame(makeFrame('loop', '/app/loop.py', 2, 0))]);
    const thread = b.internThread(1n);
    b.add(loop, thread, 1_001_000, 0, [1]);
    b.add(loop, thread, 1_002_500, 0, [500]);
    const file = path.join(dir, 'busy-run.v2.tach');
    tachyonAdapter.write!(b, { path: file, write: () => {} }, { compression: 'none', version: 2 });
    const down = path.join(dir, 'busy-run.down.tach');
    await profpackOk(['downgrade', file, down]);
    const p = (await cpython([down])).get(down)!;
    const lastTick = p.runs.flatMap((r) => r.times).reduce((m, t) => Math.max(m, t), -Infinity);
    same(p.info!.sample_count, 501, 'busy-run.down.tach: CPython reads 501 ticks');
    const out = path.join(dir, 'parquet-busy');
    await profpackOk(['export', file, '-o', out]);
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    const [prof] = (
      await sql.runAndReadAll(`select end_us::double e, duration_s d from '${out}/profiles.parquet'`)
    ).getRowObjectsJson() as { e: number; d: number }[];
    sql.closeSync();
    same(Number(prof!.e), lastTick, 'busy-run.v2.tach → parquet profiles: end_us is the last tick');
    near(Number(prof!.d), (lastTick - 1_000_000) / 1e6, 1e-9, 'busy-run.v2.tach → parquet: duration_s');
  }, 60_000);
});

it('the Node recording: its hot function is spin, its script a path (not a file: URL)', async () => {
  const p = cpy.get(recordedNode)!;
  same(p.error, null, 'recorded-node.tach: CPython reads it');
  const json = await top(recordedNode);
  same(json.rows[0]?.funcname, 'spin', 'recorded-node.tach: top first function');
  same(
    json.rows.filter((r) => r.filename.startsWith('file:')).map((r) => r.filename),
    [],
    'recorded-node.tach: file: URLs in top',
  );
});

it('the recording made here: CPython reads its 400 ticks, two threads', () => {
  const p = cpy.get(recorded)!;
  same(p.error, null, 'recorded-cpu.tach: CPython reads it');
  same(p.info?.sample_count, 400, 'recorded-cpu.tach: sample_count');
  same(new Set(p.runs.map(cpyThreadKey)).size, 2, 'recorded-cpu.tach: threads');
});

it('convert prints the samples CPython reads, REPEAT runs and all, whatever the output', async () => {
  const file = sharedPath('vectors', 'tachyon', 's06_repeat_runs_none.bin');
  const p = (await cpython([file])).get(file)!;
  for (const suffix of ['.pb.gz', '.speedscope.json', '.collapsed', '.cpuprofile', '.v2.tach', '.v1.tach']) {
    const out = path.join(dir, `s06-summary${suffix}`);
    const version = suffix === '.v2.tach' ? ['--tachyon-version', '2'] : [];
    const done = await profpack(['convert', file, ...version, '-o', out]);
    same(done.status, 0, `s06 → ${suffix}: written (${done.stderr.trim()})`);
    const printed = /, ([\d,]+) samples/.exec(done.stdout + done.stderr)?.[1]?.replaceAll(',', '');
    same(Number(printed), p.info!.sample_count, `s06 → ${suffix}: samples printed`);
  }
});

it('a REPEAT run at irregular gaps: a record per tick, counted against --max-samples by speedscope, not by streamed pprof', async () => {
  // One stack, ticks 1.3 and 1.7 ms apart at a 1 ms interval: one REPEAT run whose ticks are no interval apart.
  const file = path.join(dir, 'irregular-run.tach');
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000, compression: 'none' });
  const loop = w.internFrame({ filename: '/app/loop.py', funcname: 'loop', lineno: 2 });
  let t = 1_000_000;
  for (let i = 0; i < 40; i++) w.writeStack(1, 0, (t += i % 2 === 0 ? 1300 : 1700), 0, [loop]);
  w.finalize();
  const p = (await cpython([file])).get(file)!;
  // The writer's first tick is a full record, the other 39 one REPEAT run.
  same(
    p.runs.map((r) => r.times.length),
    [1, 39],
    'irregular-run.tach: CPython replays a tick, then a run of 39',
  );
  const ticks = p.info!.sample_count;
  for (const suffix of ['.pb.gz', '.speedscope.json']) {
    const out = path.join(dir, `irregular-run${suffix}`);
    const done = await profpack(['convert', file, '--max-samples', String(ticks), '-o', out]);
    same(done.status, 0, `→ ${suffix} --max-samples ${ticks}: written (${done.stderr.trim()})`);
    // The summary line (on stderr: stdout may be the output).
    const printed = done.stdout + done.stderr;
    same(Number(/, ([\d,]+) samples/.exec(printed)?.[1]?.replaceAll(',', '')), ticks, `→ ${suffix}: samples printed`);
    const over = await profpack(['convert', file, '--max-samples', String(ticks - 1), '-o', `${out}.over${suffix}`]);
    // pprof streams its records (memory per distinct stack), so the limit is for outputs that hold them all.
    const holds = suffix !== '.pb.gz';
    same(over.status, holds ? 2 : 0, `→ ${suffix} --max-samples ${ticks - 1}: ${holds ? 'refused' : 'written'}`);
    same(/ERR_CONVERT_TOO_MANY_SAMPLES/.test(over.stderr), holds, `→ ${suffix}: ERR_CONVERT_TOO_MANY_SAMPLES`);
  }
});

describe('the closing count', () => {
  it('prints how many comparisons this file made', () => {
    expect(comparisonCount()).toBeGreaterThan(1000);
    const failed = failedComparisons();
    process.stdout.write(
      `oracle suite (Tachyon inputs): ${comparisonCount()} comparisons against CPython, go tool pprof, ` +
        `the formats' own definitions; ${failed.length} failed\n` +
        failed.map((f) => `  ${f}\n`).join(''),
    );
  });
});
