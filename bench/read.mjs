// `npm run bench -- read [--quick | --access]` (--access: bench/_read_access.mjs): ProfileReader open + replay against
// CPython 3.15.2's own BinaryReader open + replay, on the same files in the
// same run. Like for like: every collector receives resolved stacks (CPython:
// lists of FrameInfo; profpack: frozen arrays of Frame objects) and counts the
// timestamps. Also the peak memory (max RSS over a bare process) of reading.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table } from './_harness.mjs';
import { writeSynthetic } from './_synthetic.mjs';

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
const install = path.resolve(root, '..', 'shared', 'tools', 'cpython315', 'install.sh');
const python = process.env.TACHYON_CPYTHON || spawnSync('bash', [install], { encoding: 'utf8' }).stdout.trim();
if (!python) throw new Error('CPython 3.15 is needed: bash ../shared/tools/cpython315/install.sh');

// The synthetic profile: 1 M samples, 20 threads, depth 30-60, both compressions.
const synthDir = path.join(tmpdir(), 'profpack-bench-read');
mkdirSync(synthDir, { recursive: true });
const synthSamples = quick ? 200_000 : 1_000_000;
const synth = {};
for (const [name, zstdLevel] of [['none', 0], ['zstd', 5]]) {
  const file = path.join(synthDir, `synthetic_${synthSamples}_${name}.bin`);
  if (!existsSync(file)) writeSynthetic(file, { samples: synthSamples, threads: 20, zstdLevel, seed: 7 });
  synth[name] = file;
}

const files = [
  ['r01_cpu_wall_none', path.join(vectors, 'r01_cpu_wall_none.bin')],
  ['r02_cpu_wall_zstd', path.join(vectors, 'r02_cpu_wall_zstd.bin')],
  ['s20_random_mix_none', path.join(vectors, 's20_random_mix_none.bin')],
  ['s20_random_mix_zstd', path.join(vectors, 's20_random_mix_zstd.bin')],
  ['s06_repeat_runs_none', path.join(vectors, 's06_repeat_runs_none.bin')],
  [`synthetic ${synthSamples / 1e6} M, none`, synth.none],
  [`synthetic ${synthSamples / 1e6} M, zstd`, synth.zstd],
];

function replayOnce(file, backendName) {
  const reader = ProfileReader.open(file, { backend: backendName });
  let n = 0;
  reader.replay({
    collect(stackFrames, timestamps) {
      n += timestamps.length;
    },
  });
  reader.close();
  return n;
}

/** Seconds of one CPython open + replay, timed inside a child CPython (warmup, then reps). */
function cpythonOnce(file, reps) {
  const run = spawnSync(python, [path.join(here, '_cpython_replay.py'), '1', String(reps), file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`CPython replay failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Rounds in rotating order over native, JS and CPython; medians of seconds per replay. */
function measure(file, reps, rounds) {
  const cases = {
    native: () => timeReps(() => replayOnce(file, 'native'), reps),
    js: () => timeReps(() => replayOnce(file, 'js'), reps),
    cpython: () => cpythonOnce(file, reps),
  };
  const names = Object.keys(cases);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      // No forced gc() between cases: on this workload a forced full GC makes V8 drop
      // optimized code, and the next case then measures re-optimization (5x slower JS).
      times[name].push(cases[name]());
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n])]));
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
    const until = process.hrtime.bigint() + 300_000_000n;
    do replayOnce(file, b);
    while (process.hrtime.bigint() < until);
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
  results.push({ label, samples, size, cpy, nat, js });
  rows.push([
    label,
    String(samples),
    `${(size / 1e6).toFixed(3)} MB`,
    `${ms(cpy)} ms (${msps(cpy)} M/s)`,
    `${ms(nat)} ms (${msps(nat)} M/s, ${mbps(nat)} MB/s)`,
    `${ms(js)} ms (${msps(js)} M/s, ${mbps(js)} MB/s)`,
    `${(cpy / nat).toFixed(1)}×`,
    `${(cpy / js).toFixed(1)}×`,
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
  for (const [label, file] of [files[0], files[1], files[5], files[6]]) {
    const peak = peakRss(file, backendName);
    memRows.push([label, backendName, `${peak.toFixed(1)} MB`, `${(peak - base).toFixed(1)} MB`, `${(statSync(file).size / 1e6).toFixed(2)} MB`]);
  }
}

const goals = results.map((r) => {
  const natX = r.cpy / r.nat;
  const jsX = r.cpy / r.js;
  if (r.label.startsWith('s06')) return `- ${r.label}: native ${natX.toFixed(1)}×, JS ${jsX.toFixed(1)}× CPython (goal ≥ 1×): ${natX >= 1 ? 'met' : 'NOT met'} (native), ${jsX >= 1 ? 'met' : 'NOT met'} (JS)`;
  return `- ${r.label}: native ${natX.toFixed(1)}× (goal ≥ 10×: ${natX >= 10 ? 'met' : 'NOT met'}), JS ${jsX.toFixed(1)}× (goal ≥ 2×: ${jsX >= 2 ? 'met' : 'NOT met'})`;
});

const NOTES = `Notes: the machine was shared with ~5 other engineers' builds and benchmarks (load average 5-12 on 2 cores), so
single numbers move by 2x between runs; the ratios come from rotating rounds. Native decoding itself is not the
limit on the small files (native and JS differ by 1.3-1.6x there): the shared JS part (CPython-shaped collect()
objects, a bigint list of timestamps, one resolved-frame array per distinct stack) and the open cost dominate, so
native stays near 4-6x CPython rather than 10x. Memory of the 1 M synthetic file: the stack trie (every distinct
stack prefix is a node: ~30 bytes native with its hash slots + 8 bytes JS mirror each, 1.9 M nodes for this random profile) is most of
it; the zstd region (18.6 MB decompressed, above the 16 MiB keep limit) is checked at open and streamed again by
replay in 1 MiB windows, never held whole.`;

const section = [
  '## read',
  '',
  `Command: \`npm run bench -- read${quick ? ' --quick' : ''}\` — ${new Date().toISOString()} — ${machine()}`,
  '',
  `ProfileReader.open(file) + replay(collector) against CPython 3.15.2's \`_remote_debugging.BinaryReader(file)\` + \`replay(collector)\`
(${python}), same files, same run (rounds rotate over native, JS and CPython, the latter timed inside a child CPython; medians of the rounds).
Both collectors receive resolved stacks and count the timestamps. Times include open (CPython decompresses the zstd region at open).
No gc() is forced between cases (a forced full GC made V8 drop optimized code and the next case measured re-optimization).`,
  '',
  table(['file', 'samples', 'size', 'CPython', 'native', 'JS', 'native vs CPython', 'JS vs CPython'], rows),
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

const resultsPath = path.join(here, 'RESULTS.md');
const current = readFileSync(resultsPath, 'utf8');
const start = current.indexOf('\n## read\n');
let next = start < 0 ? -1 : current.indexOf('\n## ', start + 1);
const updated =
  start < 0 ? current.trimEnd() + '\n\n' + section : current.slice(0, start + 1) + section + (next < 0 ? '' : current.slice(next));
writeFileSync(resultsPath, updated.endsWith('\n') ? updated : updated + '\n');
console.log('\n' + section);
