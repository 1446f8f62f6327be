// `npm run bench -- read [--quick | --access]` (--access: bench/_read_access.mjs): ProfileReader open + replay against
// CPython 3.15.2's own BinaryReader open + replay, on the same files in the
// same run. Like for like: every collector receives resolved stacks (CPython:
// lists of FrameInfo; profpack: frozen arrays of Frame objects) and counts the
// timestamps. Also the peak memory (max RSS over a bare process) of reading.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, rotateRounds, table, writeResultsSection } from './_harness.mjs';
import { writeSynthetic } from './_synthetic.mjs';
import { cpythonInterpreter } from '../test/support/cpython.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
if (process.argv.includes('--access')) {
  await import('./_read_access.mjs');
  process.exit(0);
}
const quick = process.argv.includes('--quick');
const { ProfileReader } = await import(path.join(root, 'dist', 'index.js'));
const { backend } = await import(path.join(root, 'dist', 'backend.js'));
if (backend.name !== 'native') throw new Error(`the native addon did not load: ${backend.reason}`);

const vectors = path.resolve(root, '..', 'shared', 'vectors', 'tachyon');
const python = cpythonInterpreter();

// The synthetic profile: issue 18's 1 M-sample shape (8 threads, 3,000 frames,
// stacks 30-60 deep, ~70 % of records repeats or small pops/pushes), both compressions.
const synthDir = path.join(tmpdir(), 'profpack-bench-read');
mkdirSync(synthDir, { recursive: true });
const synthSamples = quick ? 200_000 : 1_000_000;
const synth = {};
for (const [name, zstdLevel] of [
  ['none', 0],
  ['zstd', 5],
]) {
  const file = path.join(synthDir, `synthetic_${synthSamples}_8t_${name}.bin`);
  if (!existsSync(file)) writeSynthetic(file, { samples: synthSamples, threads: 8, zstdLevel, seed: 7 });
  synth[name] = file;
}

const files = [
  ['real CPython 13k, none', path.join(here, 'fixtures', 'real_cpython_13k_none.bin')],
  ['real CPython 15k, zstd', path.join(here, 'fixtures', 'real_cpython_15k_zstd.bin')],
  ['r01_cpu_wall_none', path.join(vectors, 'r01_cpu_wall_none.bin')],
  ['r02_cpu_wall_zstd', path.join(vectors, 'r02_cpu_wall_zstd.bin')],
  ['s20_random_mix_none', path.join(vectors, 's20_random_mix_none.bin')],
  ['s20_random_mix_zstd', path.join(vectors, 's20_random_mix_zstd.bin')],
  ['s06_repeat_runs_none', path.join(vectors, 's06_repeat_runs_none.bin')],
  [`synthetic ${synthSamples / 1e6} M, none`, synth.none],
  [`synthetic ${synthSamples / 1e6} M, zstd`, synth.zstd],
];

/** One open + replay; `typed`: replay's `timestamps: 'typed'` option (a BigUint64Array view per call, no bigint per timestamp). */
function replayOnce(file, backendName, typed = false) {
  const reader = ProfileReader.open(file, { backend: backendName });
  let n = 0;
  reader.replay(
    {
      collect(stackFrames, timestamps) {
        n += timestamps.length;
      },
    },
    typed ? { timestamps: 'typed' } : {},
  );
  reader.close();
  return n;
}

/** Seconds of one CPython open + replay, timed inside a child CPython (warmup, then reps). */
function cpythonOnce(file, reps) {
  const run = spawnSync(python, [path.join(here, '_cpython_replay.py'), '1', String(reps), file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`CPython replay failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Rounds in rotating order over native, JS (each with both timestamp shapes) and CPython; medians of seconds per replay, and of per-round ratios to CPython. */
function measure(file, reps, rounds) {
  const cases = {
    native: () => timeReps(() => replayOnce(file, 'native'), reps),
    js: () => timeReps(() => replayOnce(file, 'js'), reps),
    nativeTyped: () => timeReps(() => replayOnce(file, 'native', true), reps),
    jsTyped: () => timeReps(() => replayOnce(file, 'js', true), reps),
    cpython: () => cpythonOnce(file, reps),
  };
  const names = Object.keys(cases);
  // No forced gc() between cases: on this workload a forced full GC makes V8 drop
  // optimized code, and the next case then measures re-optimization (5x slower JS).
  const times = rotateRounds(cases, rounds);
  const medians = Object.fromEntries(names.map((n) => [n, median(times[n])]));
  medians.ratio = Object.fromEntries(names.map((n) => [n, median(times.cpython.map((c, r) => c / times[n][r]))]));
  return medians;
}

function timeReps(fn, reps) {
  fn(); // warm
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e9 / reps;
}

const rows = [];
const results = [];
for (const [label, file] of files) {
  const size = statSync(file).size;
  const samples = replayOnce(file, 'native');
  if (replayOnce(file, 'js') !== samples) throw new Error(`${label}: the backends disagree`);
  // Repeat the small files inside one timed case, so each case lasts ~10+ ms.
  // Warm the JIT on both backends (~0.3 s each) before timing anything.
  for (const b of ['native', 'js']) {
    for (const typed of [false, true]) {
      const until = process.hrtime.bigint() + 300_000_000n;
      do replayOnce(file, b, typed);
      while (process.hrtime.bigint() < until);
    }
  }
  const once = timeReps(() => replayOnce(file, 'native'), 3);
  const reps = Math.max(1, Math.ceil(0.05 / Math.max(once, 1e-5)));
  const big = samples > 500_000;
  const rounds = quick ? 3 : big ? 5 : 9;
  const m = measure(file, reps, rounds);
  const cpy = m.cpython;
  const nat = m.native;
  const js = m.js;
  const ms = (s) => (s * 1e3).toFixed(s < 0.01 ? 3 : 1);
  const msps = (s) => (samples / s / 1e6).toFixed(2);
  const mbps = (s) => (size / s / 1e6).toFixed(1);
  const x = m.ratio;
  results.push({ label, samples, size, x });
  rows.push([
    label,
    String(samples),
    `${(size / 1e6).toFixed(3)} MB`,
    `${ms(cpy)} ms (${msps(cpy)} M/s)`,
    `${ms(nat)} ms (${msps(nat)} M/s, ${mbps(nat)} MB/s)`,
    `${ms(js)} ms (${msps(js)} M/s, ${mbps(js)} MB/s)`,
    `${ms(m.nativeTyped)} ms`,
    `${ms(m.jsTyped)} ms`,
    `${x.native.toFixed(1)}× / ${x.nativeTyped.toFixed(1)}×`,
    `${x.js.toFixed(1)}× / ${x.jsTyped.toFixed(1)}×`,
  ]);
  console.log(rows[rows.length - 1].join(' | '));
}

// Peak memory: max RSS of a process that opens and replays one file, minus a
// process that only loads the library.
function peakRss(file, backendName) {
  const script = `
    const { ProfileReader } = require(${JSON.stringify(path.join(root, 'dist', 'index.js'))});
    if (${JSON.stringify(file)}) {
      const r = ProfileReader.open(${JSON.stringify(file)}, { backend: ${JSON.stringify(backendName)} });
      let n = 0;
      r.replay({ collect(s, t) { n += t.length; } });
      r.close();
    }
    const hwm = require('fs').readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\\s+(\\d+)/);
    console.log(hwm ? hwm[1] : process.resourceUsage().maxRSS);`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return Number(run.stdout.trim()) / 1024;
}
const memRows = [];
for (const backendName of ['native', 'js']) {
  const base = peakRss('', backendName);
  for (const [label, file] of files.filter(([label]) => label.startsWith('real') || label.startsWith('synthetic'))) {
    const peak = peakRss(file, backendName);
    memRows.push([
      label,
      backendName,
      `${peak.toFixed(1)} MB`,
      `${(peak - base).toFixed(1)} MB`,
      `${(statSync(file).size / 1e6).toFixed(2)} MB`,
    ]);
  }
}
// The same for CPython: its reader's process against a bare CPython.
function cpythonPeakRss(file) {
  const script = `
import sys, _remote_debugging
if sys.argv[1]:
    class C:
        def collect(self, s, timestamps_us=None): pass
    r = _remote_debugging.BinaryReader(sys.argv[1]); r.replay(C()); r.close()
import re
print(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))`;
  const run = spawnSync(python, ['-c', script, file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return Number(run.stdout.trim()) / 1024;
}
{
  const base = cpythonPeakRss('');
  for (const [label, file] of files.filter(([label]) => label.startsWith('real') || label.startsWith('synthetic'))) {
    const peak = cpythonPeakRss(file);
    memRows.push([
      label,
      'CPython',
      `${peak.toFixed(1)} MB`,
      `${(peak - base).toFixed(1)} MB`,
      `${(statSync(file).size / 1e6).toFixed(2)} MB`,
    ]);
  }
}

const goals = results.map(({ label, x }) => {
  const v = (ratio, goal) => `${ratio.toFixed(1)}× ${ratio >= goal ? 'met' : 'NOT met'}`;
  if (label.startsWith('s06'))
    return `- ${label} (goal ≥ 1×): native ${v(x.native, 1)}, typed ${v(x.nativeTyped, 1)}; JS ${v(x.js, 1)}, typed ${v(x.jsTyped, 1)}`;
  return `- ${label}: native (goal ≥ 10×) ${v(x.native, 10)}, typed ${v(x.nativeTyped, 10)}; JS (goal ≥ 5×) ${v(x.js, 5)}, typed ${v(x.jsTyped, 5)}`;
});

const NOTES = `Load average at the end of the run: ${os
  .loadavg()
  .map((x) => x.toFixed(2))
  .join(' ')}.
Notes (issue 18, second pass): load average 5.9 at the start, 6.9 at the end (2 cores shared with two other engineers
and an emulated test run); ratios are per-round. Changes in this pass: replay's \`timestamps: 'typed'\` option; the
Tachyon entry defers the writer, downgrade, recover and v2 file API (36 modules for a first replay, was 52); a file
up to 256 KiB is copied once at open; replay's stack caches 1024/512 -> 128/64 entries; the trie bound 256 k -> 64 k
nodes; files from 8 MiB mapped without MAP_POPULATE, decoded pages released every 2 MiB; the zstd open check through
a 1 MiB scratch.
- Real CPython profiles (13k/15k samples): CPython-shaped default 1.0x / 1.2x native, 0.9x / 1.0x JS; typed 2.8x /
  3.2x native, 1.6x / 1.4x JS (goal 10x / 5x: NOT met). Where the default's time goes (perf, 3,000 open+replay cycles
  of the 13k file): 30 % in the JS loop that makes one bigint per timestamp (13,054 per replay, ~7 ns each: ~90 us,
  more than the whole 10x budget of ~55 us at this run's CPython time), the record decoder 8 %, malloc/free 6 %.
  That cost is the collector shape (a bigint[] per call), which is why the typed option exists. With typed (inspector
  cpuprofile, 3,000 cycles) what is left is fixed per open and per replay: open 37 % (string and frame tables 15 %,
  header/footer/stats 5 %, the file copy 6 %, open/fstat 3 %), replay 49 % (native decode 16 %, delivery 10 %,
  decoder setup and teardown 11 %, the file-change fstat 2 %), close 5 %. Each is a few microseconds of syscalls,
  N-API crossings and small allocations; at ~0.2 ms per open+replay against CPython's 0.55 ms, 10x would need the
  whole open+replay in ~55 us, below what open + fstat + mmap + munmap + close alone cost on this VM under load.
- Synthetic 1 M: native 8.6x / 8.1x (typed 10.5x: met on none), JS 7.0x / 7.0x (goal 5x: met). Was 7.1x / 5.9x
  native and 6.4x / 4.8x JS.
- Peak RSS over bare, 1 M samples: native +26.7 / +48.7 MB, JS +42.1 / +40.3 MB against CPython +11.8 / +21.1 MB:
  2.3x / 2.3x native, 3.6x / 1.9x JS (goal <= 2x: NOT met, met for JS zstd; was +78 / +89 MB, 6.5x / 4.2x). Found with
  /proc/self/status (RssAnon, RssFile) and process.memoryUsage() sampled during a replay, and --trace-gc: the
  mapping added the whole file (MAP_POPULATE: +18 MB of RssFile; now released behind the decoder, -15 MB); the V8
  young generation grew to its maximum because the 1024/512-entry caches kept objects alive across scavenges (-16 MB
  with 128/64, same speed); the 256 k-node trie and its JS mirror (-20 MB at 64 k, same speed); the zstd open check's
  16 MiB scratch (-12 MB at open). What remains (native, none): V8's young generation still grows with the
  allocation of one frame array per new stack (heapTotal 7 -> 23 MB; \`node --max-semi-space-size=1\`, which a library
  cannot set, gives +12 MB, i.e. CPython's figure), the trie (~3 MB) and output buffers (~1.4 MB). zstd adds the open
  check's decompressed slices (up to keepDecompressedLimit = 16 MiB, kept until the region proves larger) and 1 MiB
  input copies while streaming; the JS twin reads the whole file into memory (+18.5 MB on none).`;

const section = [
  '## read',
  '',
  `Command: \`npm run bench -- read${quick ? ' --quick' : ''}\` — ${new Date().toISOString()} — ${machine()}`,
  '',
  `ProfileReader.open(file) + replay(collector) against CPython 3.15.2's \`_remote_debugging.BinaryReader(file)\` + \`replay(collector)\`
(${python}), same files, same run (rounds rotate over native, JS and CPython, the latter timed inside a child CPython; medians of the rounds).
Both collectors receive resolved stacks and count the timestamps. Times include open (CPython decompresses the zstd region at open).
No gc() is forced between cases (a forced full GC made V8 drop optimized code and the next case measured re-optimization).
"typed" = \`replay(collector, { timestamps: 'typed' })\` (a BigUint64Array view per collect() call instead of a new bigint[]).
Ratios are medians of per-round ratios (CPython seconds / profpack seconds, same round).`,
  '',
  table(
    [
      'file',
      'samples',
      'size',
      'CPython',
      'native',
      'JS',
      'native typed',
      'JS typed',
      'native vs CPython (default / typed)',
      'JS vs CPython (default / typed)',
    ],
    rows,
  ),
  '',
  ...goals,
  '',
  'Peak memory (max RSS of a process that opens and replays the file; "over bare" subtracts a process that only loads profpack):',
  '',
  table(['file', 'backend', 'max RSS', 'over bare', 'file size'], memRows),
  '',
  NOTES,
  '',
].join('\n');

writeResultsSection(section);
console.log('\n' + section);
