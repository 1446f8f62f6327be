// `node --expose-gc bench/_trees.mjs BEFORE AFTER [ROUNDS] [CASE-REGEXP]`: the read and write work of
// bench/read.mjs and bench/write.mjs (smaller) for two compiled checkouts in one process, both trees' dist
// loaded side by side, alternated tree by tree within every round (the order flips each round). CPU time
// (process.cpuUsage) per case, so a loaded machine slows both sides alike; reports the median of the
// per-round ratios after/before. The bench runner compares profpack with CPython, not two trees.
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const require = createRequire(import.meta.url);
const [beforeDir, afterDir] = process.argv.slice(2, 4).map((d) => path.resolve(d ?? ''));
if (!process.argv[3]) throw new Error('usage: node --expose-gc bench/_trees.mjs BEFORE AFTER [ROUNDS] [CASE-REGEXP]');
const trees = {
  before: require(path.join(beforeDir, 'dist', 'index.js')),
  after: require(path.join(afterDir, 'dist', 'index.js')),
};
const ROUNDS = Number(process.argv[4] ?? 7);
const here = path.dirname(fileURLToPath(import.meta.url));
const vectors = path.resolve(here, '..', '..', 'shared', 'vectors', 'tachyon');
const fixtures = path.join(here, 'fixtures');
// bench/read.mjs --quick writes these (its synthetic 0.2 M-sample profiles).
const synthDir = path.join(tmpdir(), 'profpack-bench-read');
const files = [
  ['real CPython 13k, none', `${fixtures}/real_cpython_13k_none.bin`],
  ['real CPython 15k, zstd', `${fixtures}/real_cpython_15k_zstd.bin`],
  ['r01_cpu_wall_none', `${vectors}/r01_cpu_wall_none.bin`],
  ['r02_cpu_wall_zstd', `${vectors}/r02_cpu_wall_zstd.bin`],
  ['s20_random_mix_zstd', `${vectors}/s20_random_mix_zstd.bin`],
  ['synthetic 0.2 M, none', path.join(synthDir, 'synthetic_200000_8t_none.bin')],
  ['synthetic 0.2 M, zstd', path.join(synthDir, 'synthetic_200000_8t_zstd.bin')],
];
const dir = mkdtempSync(path.join(tmpdir(), 'profpack-bench-trees-'));
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
};
function readOnce(lib, file, backend) {
  const r = lib.ProfileReader.open(file, { backend });
  let n = 0;
  r.replay({
    collect(_s, ts) {
      n += ts.length;
    },
  });
  r.close();
  return n;
}
// The write bench's shape, smaller: 8 threads, stacks 30-60 deep from 3000 frames, half the stacks unchanged.
const POOL = 3000;
const frames = Array.from({ length: POOL }, (_, i) => ({
  filename: `/srv/app/module_${i % 150}.py`,
  funcname: `func_${i}`,
  location: {
    lineno: 10 + ((i * 7) % 900),
    endLineno: 10 + ((i * 7) % 900) + (i % 3),
    colOffset: i % 40,
    endColOffset: (i % 40) + 5,
  },
  opcode: i % 200,
}));
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
const THREADS = 8,
  CALLS = 3000;
const stacks = [];
for (let c = 0; c < CALLS; c++) {
  const list = [];
  for (let t = 0; t < THREADS; t++) {
    if (c > 0 && rnd() < 0.5) {
      list.push(stacks[c - 1][t]);
      continue;
    }
    const depth = 30 + Math.floor(rnd() * 31);
    list.push(Array.from({ length: depth }, () => frames[Math.floor(rnd() * POOL)]));
  }
  stacks.push(list);
}
function writeOnce(lib, backend, compression, formatVersion) {
  const file = path.join(dir, `w-${backend}-${compression}-${formatVersion}.bin`);
  const w = new lib.ProfileWriter(file, {
    sampleIntervalUs: 1000,
    startTimeUs: 1_000_000,
    compression,
    backend,
    formatVersion,
  });
  for (let c = 0; c < CALLS; c++) {
    const threads = stacks[c].map((frameInfo, t) => ({ threadId: 1000 + t, status: 0, frameInfo }));
    w.writeSample([{ interpreterId: 0, threads }], 1_000_000 + c * 1000);
  }
  w.finalize();
  return statSync(file).size;
}
const cases = [];
const only = process.argv[5] ? new RegExp(process.argv[5]) : null;
for (const [label, file] of files.filter(([, f]) => existsSync(f)))
  for (const b of ['native', 'js']) cases.push([`read ${label}, ${b}`, (lib) => readOnce(lib, file, b)]);
for (const b of ['native', 'js'])
  for (const z of ['zstd', 'none'])
    for (const v of [1, 2]) cases.push([`write v${v} ${z}, ${b}`, (lib) => writeOnce(lib, b, z, v)]);
if (only) cases.splice(0, cases.length, ...cases.filter(([n]) => only.test(n)));
// Same output from both trees, and a warm JIT.
for (const [name, fn] of cases) {
  const a = fn(trees.before),
    b = fn(trees.after);
  if (a !== b) throw new Error(`${name}: before ${a} vs after ${b}`);
  for (let i = 0; i < 2; i++) {
    fn(trees.before);
    fn(trees.after);
  }
}
const reps = Object.fromEntries(
  cases.map(([name, fn]) => {
    const t = cpu();
    fn(trees.after);
    return [name, Math.max(1, Math.ceil(60 / Math.max(cpu() - t, 0.5)))];
  }),
);
const ratios = Object.fromEntries(cases.map(([n]) => [n, []]));
const times = Object.fromEntries(cases.map(([n]) => [n, { before: [], after: [] }]));
const loads = [];
for (let r = 0; r < ROUNDS; r++) {
  loads.push(loadavg()[0].toFixed(1));
  for (const [name, fn] of cases) {
    const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    const got = {};
    for (const t of order) {
      const t0 = cpu();
      for (let i = 0; i < reps[name]; i++) fn(trees[t]);
      got[t] = (cpu() - t0) / reps[name];
      times[name][t].push(got[t]);
    }
    ratios[name].push(got.after / got.before);
  }
  console.error(`round ${r + 1}/${ROUNDS} done`);
}
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`rounds ${ROUNDS}, load average at each round's start: ${loads.join(', ')}`);
console.log('| case | before ms (median) | after ms (median) | after/before, median of per-round ratios |');
console.log('| --- | --- | --- | --- |');
const all = [];
for (const [name] of cases) {
  all.push(...ratios[name]);
  console.log(
    `| ${name} | ${median(times[name].before).toFixed(2)} | ${median(times[name].after).toFixed(2)} | ${median(ratios[name]).toFixed(3)} |`,
  );
}
console.log(`median of all ${all.length} per-round ratios: ${median(all).toFixed(3)}`);
