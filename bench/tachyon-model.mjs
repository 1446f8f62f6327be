// Issue 26's claim for the Tachyon adapter: reading a 1 M-sample Tachyon file
// into the profile model and out as collapsed stacks, as whole processes,
// against CPython 3.15's `python -m profiling.sampling replay --collapsed` on
// the same file. Interleaved rounds; CPU seconds (user + sys) and peak RSS
// from /usr/bin/time, since the machine is shared (wall time is printed too).
// Usage: node bench/tachyon-model.mjs [rounds]   (after npm run compile; BENCH_FILES=cpython_written picks files)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSynthetic } from './_synthetic.mjs';
import { cpythonInterpreter } from '../test/support/cpython.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const python = cpythonInterpreter();
const rounds = Number(process.argv[2] ?? 3);

const dir = path.join(tmpdir(), 'profpack-bench-tachyon-model');
mkdirSync(dir, { recursive: true });
const files = [];
for (const [name, zstdLevel] of [
  ['none', 0],
  ['zstd', 5],
]) {
  const file = path.join(dir, `synthetic_1000000_8t_${name}.bin`);
  if (!existsSync(file)) writeSynthetic(file, { samples: 1_000_000, threads: 8, zstdLevel, seed: 7 });
  files.push(file);
}
// A file CPython 3.15's own BinaryWriter wrote: 8 threads × 125,000 ticks, 70 % unchanged stacks, zstd.
const written = path.join(dir, 'cpython_written_1m_zstd.bin');
if (!existsSync(written))
  spawnSync(python, [path.join(here, 'cpython_write.py'), '--synthetic', '8', '125000', '70', '7', '1', written], {
    stdio: 'inherit',
  });
files.push(written);
const only = process.env.BENCH_FILES?.split(',');

// The profpack side: adapter read → per-stack totals → collapsed lines, streamed in chunks.
const child = path.join(dir, 'to-collapsed.cjs');
writeFileSync(
  child,
  `const fs = require('node:fs');
const { tachyonAdapter } = require(${JSON.stringify(path.join(root, 'dist', 'formats', 'tachyon', 'index.js'))});
const { frameLabel } = require(${JSON.stringify(path.join(root, 'dist', 'profile', 'index.js'))});
const src = tachyonAdapter.read({ path: process.argv[2] }, {});
const totals = new Float64Array(1 << 16);
let t = totals;
for (const b of src.batches()) {
  if (t.length < src.stacks.size) { const n = new Float64Array(src.stacks.size * 2); n.set(t); t = n; }
  const v = b.values[0];
  for (let i = 0; i < b.length; i++) t[b.stack[i]] += v[i];
}
const fd = fs.openSync(process.argv[3], 'w');
const names = src.frames.map(frameLabel);
let out = '';
const buf = { buffer: new Uint32Array(256) };
for (let s = 1; s < src.stacks.size; s++) {
  if (t[s] === 0) continue;
  const d = src.stacks.frames(s, buf);
  let line = names[buf.buffer[d - 1]];
  for (let k = d - 2; k >= 0; k--) line += ';' + names[buf.buffer[k]];
  out += line + ' ' + t[s] + '\\n';
  if (out.length > 1 << 20) { fs.writeSync(fd, out); out = ''; }
}
fs.writeSync(fd, out);
fs.closeSync(fd);
`,
);

function timed(argv) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', ...argv], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${r.stderr}`);
  const [wall, user, sys, rssKb] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
  return { wall, cpu: user + sys, rssMb: rssKb / 1024 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const file of files.filter((f) => !only || only.some((o) => f.includes(o)))) {
  const runs = { profpack: [], cpython: [] };
  for (let r = 0; r < rounds; r++) {
    for (const backendName of ['native'])
      runs.profpack.push(
        timed(['env', `PROFPACK_BACKEND=${backendName}`, process.execPath, child, file, path.join(dir, 'out.folded')]),
      );
    runs.cpython.push(
      timed([
        python,
        '-m',
        'profiling.sampling',
        'replay',
        '--collapsed',
        '-o',
        path.join(dir, 'cpython.folded'),
        file,
      ]),
    );
  }
  const m = (k, f) => median(runs[k].map((x) => x[f]));
  console.log(
    `${path.basename(file)}: profpack cpu ${m('profpack', 'cpu').toFixed(2)} s (wall ${m('profpack', 'wall').toFixed(2)}, ${m('profpack', 'rssMb').toFixed(0)} MB) | ` +
      `CPython cpu ${m('cpython', 'cpu').toFixed(2)} s (wall ${m('cpython', 'wall').toFixed(2)}, ${m('cpython', 'rssMb').toFixed(0)} MB) | ` +
      `CPU ratio ${(m('cpython', 'cpu') / m('profpack', 'cpu')).toFixed(1)}x, rounds ${rounds}`,
  );
}
