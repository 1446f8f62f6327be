// `npm run bench -- cold [--rounds R]`: cold start, issue 18. In a fresh
// process: require('profpack') + ProfileReader.open + the first replay of a
// real ~13k-sample CPython profile, against CPython 3.15 importing
// _remote_debugging + BinaryReader + replay of the same file. Both time
// themselves from just before the import to the end of the replay (the
// interpreters' own start-up is reported apart). Processes alternate; the
// ratio is the median over rounds of CPython ms / profpack ms (>= 1: as fast).
// "all modules" first touches every export, i.e. what `require` cost before
// the entry became lazy (scripts/lazy-entry.mjs).
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table } from './_harness.mjs';
import { cpythonInterpreter } from '../test/support/cpython.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const roundsArg = process.argv.indexOf('--rounds');
const rounds = roundsArg >= 0 ? Number(process.argv[roundsArg + 1]) : 21;
const python = cpythonInterpreter();
const files = [
  path.join(here, 'fixtures', 'real_cpython_13k_none.bin'),
  path.join(here, 'fixtures', 'real_cpython_15k_zstd.bin'),
];

const nodeScript = (touchAll) => `
const t0 = process.hrtime.bigint();
const p = require(${JSON.stringify(root)});
${touchAll ? 'for (const k of Object.keys(p)) void p[k];' : ''}
const reader = p.ProfileReader.open(process.argv[1]);
let n = 0;
reader.replay({ collect(frames, timestamps) { n += timestamps.length; } });
reader.close();
console.log(JSON.stringify({ ms: Number(process.hrtime.bigint() - t0) / 1e6, n }));`;
const pythonScript = `
import json, sys, time
t0 = time.perf_counter()
import _remote_debugging
class Counter:
    n = 0
    def collect(self, stack_frames, timestamps_us=None):
        self.n += len(timestamps_us)
c = Counter()
reader = _remote_debugging.BinaryReader(sys.argv[1])
reader.replay(c)
reader.close()
print(json.dumps({"ms": (time.perf_counter() - t0) * 1e3, "n": c.n}))`;

function timed(cmd, args, env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  return { ...JSON.parse(r.stdout.trim().split('\n').pop()), wall };
}

const cases = {
  'profpack native': (file) => timed(process.execPath, ['-e', nodeScript(false), file], { PROFPACK_BACKEND: 'native' }),
  'profpack JS': (file) => timed(process.execPath, ['-e', nodeScript(false), file], { PROFPACK_BACKEND: 'js' }),
  'profpack native, all modules': (file) =>
    timed(process.execPath, ['-e', nodeScript(true), file], { PROFPACK_BACKEND: 'native' }),
  CPython: (file) => timed(python, ['-c', pythonScript, file], {}),
  // The floors: each interpreter starting and exiting with nothing to do.
  'bare node': () => timed(process.execPath, ['-e', 'console.log(JSON.stringify({ ms: 0, n: null }))'], {}),
  'bare CPython': () => timed(python, ['-c', 'print(\'{"ms": 0, "n": null}\')'], {}),
};

console.log(
  `cold start: ${rounds} alternating rounds per file; load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(machine());
for (const file of files) {
  const names = Object.keys(cases);
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      runs[name].push(cases[name](file));
    }
  }
  const samples = new Set(
    Object.values(runs)
      .flat()
      .map((x) => x.n)
      .filter((n) => n !== null),
  );
  if (samples.size !== 1) throw new Error(`the readers disagree on the sample count: ${[...samples]}`);
  const rows = names.map((name) => {
    const ms = runs[name].map((x) => x.ms);
    const bare = name.startsWith('bare');
    const ratio = median(runs.CPython.map((c, i) => c.ms / ms[i]));
    const wallRatio = median(runs.CPython.map((c, i) => c.wall / runs[name][i].wall));
    return [
      name,
      bare ? '' : median(ms).toFixed(1),
      median(runs[name].map((x) => x.wall)).toFixed(1),
      name === 'CPython' || bare ? '' : ratio.toFixed(2),
      name === 'CPython' ? '' : wallRatio.toFixed(2),
    ];
  });
  console.log(`\n${path.basename(file)} (${[...samples][0]} samples)`);
  console.log(
    table(
      [
        'reader',
        'import + open + replay ms',
        'whole process ms',
        'CPython / this, in-process',
        'CPython / this, whole process',
      ],
      rows,
    ),
  );
}
