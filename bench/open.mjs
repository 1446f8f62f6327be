// `npm run bench -- open [--base DIR]`: ProfileReader.open + close of uncompressed
// synthetic profiles of ~1 MB and ~100 MB (bench/_synthetic.mjs), per backend:
// CPU ms per open (process.cpuUsage, medians of interleaved rounds) and the bytes
// read by read(2)/pread(2) (/proc/self/io rchar; a mapping's page faults are not
// counted). Issue 39: open is O(header), so the native open is flat in the file's
// size. --base DIR loads another checkout's dist (e.g. /work/main) in the same
// process and interleaves it, for a before/after in the same rounds.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table, writeResultsSection } from './_harness.mjs';
import { writeSynthetic } from './_synthetic.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const baseAt = process.argv.indexOf('--base');
const builds = { this: (await import(path.join(root, 'dist', 'index.js'))).ProfileReader };
if (baseAt > 0) builds.base = (await import(path.resolve(process.argv[baseAt + 1], 'dist', 'index.js'))).ProfileReader;

const dir = path.join(tmpdir(), 'profpack-bench-open');
mkdirSync(dir, { recursive: true });
const files = {};
// ~18.5 bytes per sample in this shape.
for (const [name, samples] of [
  ['1 MB', 55_000],
  ['100 MB', 5_500_000],
]) {
  const file = path.join(dir, `synthetic_${samples}_none.bin`);
  if (!existsSync(file)) writeSynthetic(file, { samples, threads: 8, zstdLevel: 0, seed: 7 });
  files[name] = file;
}

const rchar = () => {
  try {
    return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'latin1'))[1]);
  } catch {
    return NaN;
  }
};

const cases = [];
for (const [build, Reader] of Object.entries(builds))
  for (const backend of ['native', 'js'])
    for (const [size, file] of Object.entries(files))
      cases.push({ build, backend, size, file, Reader, cpu: [], read: [] });

const rounds = 9;
const reps = 3;
for (let r = 0; r < rounds + 1; r++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(k + r) % cases.length];
    globalThis.gc?.();
    const before = rchar();
    const t = process.cpuUsage();
    for (let i = 0; i < reps; i++) c.Reader.open(c.file, { backend: c.backend }).close();
    const used = process.cpuUsage(t);
    const read = (rchar() - before) / reps;
    if (r > 0) {
      c.cpu.push((used.user + used.system) / 1000 / reps);
      c.read.push(read);
    }
  }
}

const load = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');
const rows = cases.map((c) => [
  c.build === 'this' ? 'this branch' : `base (${process.argv[baseAt + 1]})`,
  c.backend,
  `${c.size} (${(statSync(c.file).size / 1e6).toFixed(1)} MB)`,
  median(c.cpu).toFixed(2),
  (median(c.read) / 1024).toFixed(1),
]);
const out = table(['build', 'backend', 'file', 'CPU ms per open', 'KiB read per open'], rows);
console.log(out);
writeResultsSection(
  `## open: O(header) (issue 39)\n\n\`npm run bench -- open${baseAt > 0 ? ` --base ${process.argv[baseAt + 1]}` : ''}\`, ${machine()}, load average at the end ${load}; ` +
    `uncompressed synthetic profiles (8 threads), open + close, ${rounds} interleaved rounds of ${reps}, medians of CPU time ` +
    `and of bytes read by read/pread (rchar). The JS twin reads the whole file by design (it holds it); the native ` +
    `reader maps it and reads header, tables and footer.\n\n${out}\n`,
);
