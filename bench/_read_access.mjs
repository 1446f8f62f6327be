// `npm run bench -- read --access`: how the native reader should get at the
// file's bytes, now that it must survive files that change underneath
// (docs/reliability.md). Same files, same run, rotating rounds:
//   mmap      ProfileReader.open (mapping, fstat checks, SIGBUS guard) + replay
//   snapshot  readFileSync + ProfileReader.fromBuffer (a private copy) + replay
//   pread     the bytes alone, read in 1 MiB windows into one buffer: the floor
//             that a pread-window reader pays before it decodes anything
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { interleave, machine, table, writeResultsSection } from './_harness.mjs';
import { writeSynthetic } from './_synthetic.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const { ProfileReader } = await import(path.join(root, 'dist', 'index.js'));
const vectors = path.resolve(root, '..', 'shared', 'vectors', 'tachyon');

const synthDir = path.join(tmpdir(), 'profpack-bench-read');
mkdirSync(synthDir, { recursive: true });
const synth = path.join(synthDir, 'synthetic_1000000_none.bin');
if (!existsSync(synth)) writeSynthetic(synth, { samples: 1_000_000, threads: 20, zstdLevel: 0, seed: 7 });

const files = [
  ['r01_cpu_wall_none', path.join(vectors, 'r01_cpu_wall_none.bin')],
  ['s20_random_mix_none', path.join(vectors, 's20_random_mix_none.bin')],
  ['r02_cpu_wall_zstd', path.join(vectors, 'r02_cpu_wall_zstd.bin')],
  ['synthetic 1 M, none', synth],
];

const collector = {
  n: 0,
  collect(_s, t) {
    this.n += t.length;
  },
};
function replay(reader) {
  collector.n = 0;
  reader.replay(collector);
  reader.close();
  return collector.n;
}
const window = Buffer.allocUnsafe(1 << 20);
function preadWindows(file) {
  const fd = openSync(file, 'r');
  let at = 0;
  for (let n; (n = readSync(fd, window, 0, window.length, at)) > 0;) at += n;
  closeSync(fd);
  return at;
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const loadBefore = load();
const rows = [];
for (const [label, file] of files) {
  const size = statSync(file).size;
  const once = (() => {
    const t0 = process.hrtime.bigint();
    replay(ProfileReader.open(file, { backend: 'native' }));
    return Number(process.hrtime.bigint() - t0) / 1e9;
  })();
  const reps = Math.max(1, Math.ceil(0.03 / Math.max(once, 1e-5)));
  const repeat = (fn) => () => {
    for (let i = 0; i < reps; i++) fn();
  };
  const m = interleave(
    {
      mmap: repeat(() => replay(ProfileReader.open(file, { backend: 'native' }))),
      snapshot: repeat(() => replay(ProfileReader.fromBuffer(readFileSync(file), { backend: 'native' }))),
      pread: repeat(() => preadWindows(file)),
    },
    { rounds: 9, warmup: 2 },
  );
  const ms = (s) => ((s / reps) * 1e3).toFixed(3);
  rows.push([
    label,
    `${(size / 1e6).toFixed(2)} MB`,
    `${ms(m.mmap)} ms`,
    `${ms(m.snapshot)} ms`,
    `${ms(m.pread)} ms`,
    `${(m.snapshot / m.mmap).toFixed(2)}×`,
  ]);
  console.log(rows.at(-1).join(' | '));
}

const section = [
  '## read: file access (mmap vs snapshot vs pread)',
  '',
  `Command: \`npm run bench -- read --access\` — ${new Date().toISOString()} — ${machine()} — load average ${loadBefore} (before) / ${load()} (after)`,
  '',
  'Native backend, open + replay + close per case; rounds rotate over the three cases (medians of 9). "pread" reads the bytes only (1 MiB windows), without decoding:',
  'a pread-window reader costs at least that plus the decoding that "snapshot" includes.',
  '',
  table(
    [
      'file',
      'size',
      'mmap (open + replay)',
      'snapshot (readFileSync + fromBuffer + replay)',
      'pread windows (bytes only)',
      'snapshot / mmap',
    ],
    rows,
  ),
  '',
].join('\n');
writeResultsSection(section);
console.log('\n' + section);
