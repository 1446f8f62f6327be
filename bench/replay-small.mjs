// `npm run bench -- replay-small [--before DIR] [--rounds N] [--ms N]`: open + replay + close of small real CPython
// profiles, in CPU time, against CPython 3.15's own BinaryReader in the same rounds. Every case is a separate
// process (bench/_replay_cycle.cjs, bench/_cpython_replay_cpu.py) run in rotating order; ratios are medians of
// per-round ratios. --before DIR: a clean build of an earlier commit (its dist/) measured in the same rounds.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, rotateRounds, table, writeResultsSection } from './_harness.mjs';
import { cpythonInterpreter } from '../test/support/cpython.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
};
const before = arg('--before', null);
const rounds = Number(arg('--rounds', '7'));
const ms = Number(arg('--ms', '500'));
const python = cpythonInterpreter();
const files = [
  ['real CPython 13k, none', path.join(here, 'fixtures', 'real_cpython_13k_none.bin')],
  ['real CPython 15k, zstd', path.join(here, 'fixtures', 'real_cpython_15k_zstd.bin')],
  ['s06_repeat_runs_none', path.join(root, '..', 'shared', 'vectors', 'tachyon', 's06_repeat_runs_none.bin')],
];
const builds = [['after', path.join(root, 'dist')], ...(before ? [['before', path.join(before, 'dist')]] : [])];

function profpack(dist, file, backendName, shape) {
  const script = path.join(here, '_replay_cycle.cjs');
  const run = spawnSync(process.execPath, [script, dist, file, backendName, shape, String(ms)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout).us;
}
function cpython(file) {
  const run = spawnSync(python, [path.join(here, '_cpython_replay_cpu.py'), file, String(ms)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout).us;
}

const loads = [os.loadavg()[0]];
const rows = [];
for (const [label, file] of files) {
  const cases = { CPython: () => cpython(file) };
  for (const [build, dist] of builds)
    for (const backendName of ['native', 'js'])
      for (const shape of ['array', 'typed'])
        cases[`${build} ${backendName} ${shape}`] = () => profpack(dist, file, backendName, shape);
  const names = Object.keys(cases);
  const times = rotateRounds(cases, rounds, () => loads.push(os.loadavg()[0]));
  for (const name of names) {
    const ratio = median(times.CPython.map((c, r) => c / times[name][r]));
    const row = [label, name, `${median(times[name]).toFixed(1)} µs`, name === 'CPython' ? '' : `${ratio.toFixed(2)}×`];
    rows.push(row);
    console.log(row.join(' | '));
  }
}
const section = [
  '## replay-small',
  '',
  `Command: \`npm run bench -- replay-small${before ? ' --before DIR' : ''} --rounds ${rounds} --ms ${ms}\` — ` +
    `${new Date().toISOString()} — ${machine()}`,
  '',
  `CPU µs (user + system) per open + replay + close, each case a separate process, ${rounds} rounds in rotating ` +
    `order; "× CPython" is the median of per-round ratios (CPython CPU / this CPU). Load average (1 min) over the ` +
    `run: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}.`,
  '',
  table(['file', 'case', 'CPU per cycle (median)', '× CPython'], rows),
  '',
].join('\n');
if (process.argv.includes('--write')) writeResultsSection(section);
console.log('\n' + section);
