// `npm run bench -- record`: the cost of recording. The embedded CPU-bound
// workload (dist/demo/workload.js, a fixed number of rounds) runs in a child
// process without and with `profpack record`'s preload at a 1 ms interval
// (zstd) — `profpack record`, which writes the file while the target sends it
// harvests — in interleaved rounds; the target reports the wall time of its
// work phase and its own peak RSS, so process start-up and the final write are
// not part of it (they are in the whole-process times). Goal: < 3 % slowdown.
//
// Then issue 18's row: the whole process of a real program, `tsc --noEmit` on
// this repository, bare, under `profpack record` at 1 ms, and under
// `node --cpu-prof --cpu-prof-interval 1000` (V8 writes a .cpuprofile at exit),
// interleaved in the same run (BENCH_TSC_ROUNDS, default 5): wall, CPU (user +
// system of the process and everything it waited for) and peak RSS, from
// /usr/bin/time. Goal: profpack's overhead <= --cpu-prof's.
// BENCH_RECORD_BASE=DIR (a built checkout of another commit) adds its `profpack record` as "before" in the same
// rounds. One more case splits the default mode by process: the same recording with the target under its own
// /usr/bin/time (the preload then comes in through NODE_OPTIONS), so record's own process is the tree minus the target.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table } from './_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '..', 'dist');
const workload = path.join(dist, 'demo', 'workload.js');
const cli = path.join(dist, 'cli', 'main.js');
const rounds = Number(process.env.BENCH_ROUNDS ?? 11);
const work = Number(process.env.BENCH_WORK ?? 200);
const tmp = mkdtempSync(path.join(tmpdir(), 'profpack-record-'));
/** `profpack record` at 1 ms, zstd, writing `out`, of the node command that follows. */
const recordArgs = (out, ...flags) => [
  cli,
  'record',
  '--interval-us',
  '1000',
  '--compression',
  'zstd',
  ...flags,
  '--out',
  out,
  '--',
];
// BENCH_RECORD_PARTS: workload,tsc (default both): the embedded workload's rows, the real program's.
const benchParts = (process.env.BENCH_RECORD_PARTS ?? 'workload,tsc').split(',');

const cases = {
  baseline: { args: [workload, '--rounds', String(work)], env: {} },
  // The real thing: the CLI writes the file, the target's preload sends it harvests over a pipe.
  'record 1 ms zstd': {
    args: [...recordArgs(path.join(tmp, 'r.tach')), process.execPath, workload, '--rounds', String(work)],
    env: {},
    out: path.join(tmp, 'r.tach'),
  },
};
const names = Object.keys(cases);
const work_ms = Object.fromEntries(names.map((n) => [n, []]));
const wall_ms = Object.fromEntries(names.map((n) => [n, []]));
const rss_kb = Object.fromEntries(names.map((n) => [n, []]));
let fileBytes = 0;
for (let r = 0; r < (benchParts.includes('workload') ? rounds + 1 : 0); r++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + r) % names.length];
    const c = cases[name];
    const t0 = process.hrtime.bigint();
    const run = spawnSync(process.execPath, c.args, { env: { ...process.env, ...c.env }, encoding: 'utf8' });
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    if (run.status !== 0) throw new Error(`${name} failed: ${run.stderr}`);
    const { ms, maxRssKb } = JSON.parse(run.stdout.trim().split('\n').at(-1));
    if (r === 0) continue; // warm-up (file cache, CPU frequency)
    work_ms[name].push(ms);
    wall_ms[name].push(wall);
    rss_kb[name].push(maxRssKb);
    if (c.out) fileBytes = statSync(c.out).size;
  }
}
// Flat memory over a long run: peak RSS of one run with 4× the work, with and without recording.
const long = {};
for (const name of benchParts.includes('workload') ? names : []) {
  const c = cases[name];
  const args = c.args.map((a) => (a === String(work) ? String(work * 4) : a));
  const run = spawnSync(process.execPath, args, { env: { ...process.env, ...c.env }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${name} (long) failed: ${run.stderr}`);
  long[name] = JSON.parse(run.stdout.trim().split('\n').at(-1));
}
let tscPerRound = [];
let splitRows = [];
const split = [];
const tscRows = existsSync('/usr/bin/time') && benchParts.includes('tsc') ? realProgram() : null;
rmSync(tmp, { recursive: true, force: true });
const base = median(work_ms.baseline);
const baseWall = median(wall_ms.baseline);
const rows = names.map((n) => [
  n,
  median(work_ms[n]).toFixed(1),
  `${((median(work_ms[n]) / base - 1) * 100).toFixed(2)} %`,
  median(wall_ms[n]).toFixed(1),
  `${((median(wall_ms[n]) / baseWall - 1) * 100).toFixed(2)} %`,
  (median(rss_kb[n]) / 1024).toFixed(1),
]);
const slowdown = (median(work_ms['record 1 ms zstd']) / base - 1) * 100;
if (benchParts.includes('workload'))
  console.log(
    [
      '## record',
      '',
      `\`npm run bench -- record\` (BENCH_ROUNDS=${rounds}, BENCH_WORK=${work} workload rounds per run), ${new Date().toISOString().slice(0, 10)}, ${machine()}.`,
      '',
      table(['case', 'work phase ms (median)', 'slowdown', 'whole process ms', 'slowdown', 'peak RSS MB'], rows),
      '',
      `Peak RSS, recording minus baseline: ${((median(rss_kb['record 1 ms zstd']) - median(rss_kb.baseline)) / 1024).toFixed(1)} MB at 1× work; ${((long['record 1 ms zstd'].maxRssKb - long.baseline.maxRssKb) / 1024).toFixed(1)} MB with 4× the work (one run each: ${(long['record 1 ms zstd'].ms / 1000).toFixed(1)} s recorded, peak ${(long['record 1 ms zstd'].maxRssKb / 1024).toFixed(1)} MB vs ${(long.baseline.maxRssKb / 1024).toFixed(1)} MB).`,
      '',
      `Profile written: ${fileBytes.toLocaleString('en')} bytes. Goal < 3 % slowdown of the work phase: ${slowdown < 3 ? 'met' : 'NOT met'} (${slowdown.toFixed(2)} %).`,
      '',
    ].join('\n'),
  );

/** `tsc --noEmit` on this repository: bare, `profpack record` at 1 ms, `--cpu-prof` at 1 ms; rows of medians and ratios to bare. */
function realProgram() {
  const root = path.resolve(here, '..');
  const tsc = [
    path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '--noEmit',
    '-p',
    path.join(root, 'tsconfig.json'),
  ];
  const profDir = path.join(tmp, 'cpuprof');
  const out = path.join(tmp, 'tsc.tach');
  const targetTime = path.join(tmp, 'target-time.txt');
  const base = process.env.BENCH_RECORD_BASE;
  const baseCli = base === undefined ? undefined : path.join(path.resolve(base), 'dist', 'cli', 'main.js');
  const tscCases = {
    'tsc --noEmit, bare': [process.execPath, ...tsc],
    'profpack record 1 ms zstd': [process.execPath, ...recordArgs(out), process.execPath, ...tsc],
    ...(baseCli === undefined
      ? {}
      : {
          'before: profpack record 1 ms zstd': [
            process.execPath,
            baseCli,
            ...recordArgs(out).slice(1),
            process.execPath,
            ...tsc,
          ],
        }),
    'profpack record 1 ms zstd, target timed alone': [
      process.execPath,
      ...recordArgs(out),
      '/usr/bin/time',
      '-f',
      'TARGET %U %S',
      '-o',
      targetTime,
      process.execPath,
      ...tsc,
    ],
    // `-- node tsc` with no node flag: record runs tsc in its own process (one Node start, not two).
    'profpack record --inline 1 ms zstd, in process': [
      process.execPath,
      ...recordArgs(out, '--inline'),
      process.execPath,
      ...tsc,
    ],
    'node --cpu-prof --cpu-prof-interval 1000': [
      process.execPath,
      '--cpu-prof',
      '--cpu-prof-interval',
      '1000',
      '--cpu-prof-dir',
      profDir,
      ...tsc,
    ],
  };
  const tscRounds = Number(process.env.BENCH_TSC_ROUNDS ?? 5);
  const keys = Object.keys(tscCases);
  const got = Object.fromEntries(keys.map((k) => [k, { wall: [], cpu: [], rss: [] }]));
  const sizes = {};
  for (let r = 0; r < tscRounds + 1; r++) {
    for (let k = 0; k < keys.length; k++) {
      const name = keys[(k + r) % keys.length];
      rmSync(profDir, { recursive: true, force: true });
      const run = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', ...tscCases[name]], { encoding: 'utf8' });
      const m = /TIME (\S+) (\S+) (\S+) (\d+)/.exec(run.stderr);
      if (run.status !== 0 || !m) throw new Error(`${name} failed: ${run.stdout}${run.stderr}`);
      if (name.includes('profpack record')) sizes[name] = statSync(out).size;
      if (name.startsWith('node --cpu-prof')) sizes[name] = statSync(path.join(profDir, readdirSync(profDir)[0])).size;
      if (r === 0) continue; // warm-up (file cache)
      if (name.endsWith('target timed alone')) {
        const t = /TARGET (\S+) (\S+)/.exec(readFileSync(targetTime, 'utf8'));
        if (!t) throw new Error(`${name}: no target time`);
        const target = Number(t[1]) + Number(t[2]);
        split.push({ tree: Number(m[2]) + Number(m[3]), target });
      }
      got[name].wall.push(Number(m[1]));
      got[name].cpu.push(Number(m[2]) + Number(m[3]));
      got[name].rss.push(Number(m[4]) / 1024);
    }
  }
  const bare = got[keys[0]];
  // Each split round's target and record's own process (tree minus target), over the same round's bare run.
  splitRows = split.map((row, i) => [
    `round ${i + 1}`,
    `${row.tree.toFixed(2)} s`,
    `${row.target.toFixed(2)} s (${(row.target / bare.cpu[i]).toFixed(2)}×)`,
    `${(row.tree - row.target).toFixed(2)} s (${((row.tree - row.target) / bare.cpu[i]).toFixed(3)}×)`,
  ]);
  // Each round's CPU over its bare run, per case: the per-round reading of the goals.
  tscPerRound = keys.slice(1).map((name) => [name, ...got[name].cpu.map((v, i) => `${(v / bare.cpu[i]).toFixed(2)}×`)]);
  // Per-round ratios to the bare run of the same round, then their median.
  const ratio = (name, what) => median(got[name][what].map((v, i) => v / bare[what][i]));
  return keys.map((name) => [
    name,
    `${median(got[name].wall).toFixed(2)} s`,
    name === keys[0] ? '1.00×' : `${ratio(name, 'wall').toFixed(2)}×`,
    `${median(got[name].cpu).toFixed(2)} s`,
    name === keys[0] ? '1.00×' : `${ratio(name, 'cpu').toFixed(2)}×`,
    `${median(got[name].rss).toFixed(1)} MB`,
    name === keys[0] ? '' : `${(median(got[name].rss) - median(bare.rss)).toFixed(1)} MB`,
    sizes[name] === undefined ? '' : `${sizes[name].toLocaleString('en')} B`,
  ]);
}

if (tscRows) {
  const wall = (row) => Number(row[2].slice(0, -1));
  const cpu = (row) => Number(row[4].slice(0, -1));
  const ours = tscRows.find((row) => row[0] === 'profpack record 1 ms zstd');
  const inProcess = tscRows.find((row) => row[0].startsWith('profpack record --inline'));
  const v8 = tscRows.find((row) => row[0].startsWith('node --cpu-prof'));
  console.log(
    [
      `Whole process, a real program: \`tsc --noEmit\` on this repository (BENCH_TSC_ROUNDS=${process.env.BENCH_TSC_ROUNDS ?? 5}, interleaved, medians; ratios are medians of per-round ratios to the bare run).`,
      '',
      table(['case', 'wall', 'vs bare', 'CPU', 'vs bare', 'peak RSS', 'over bare', 'profile file'], tscRows),
      '',
      'CPU over bare, round by round:',
      '',
      table(['case', ...tscPerRound[0].slice(1).map((_, i) => `round ${i + 1}`)], tscPerRound),
      '',
      'The default mode by process (the "target timed alone" case; over bare: the same round\'s bare CPU):',
      '',
      table(['round', 'tree CPU', 'target (with the preload)', "record's own process"], splitRows),
      '',
      `Goal: profpack record's overhead <= --cpu-prof's, same run: wall ${wall(ours).toFixed(2)}× vs ${wall(v8).toFixed(2)}× (${wall(ours) <= wall(v8) ? 'met' : 'NOT met'}), CPU ${cpu(ours).toFixed(2)}× vs ${cpu(v8).toFixed(2)}× (${cpu(ours) <= cpu(v8) ? 'met' : 'NOT met'}).`,
      `In process (--inline): wall ${wall(inProcess).toFixed(2)}× (${wall(inProcess) <= wall(v8) ? 'met' : 'NOT met'}), CPU ${cpu(inProcess).toFixed(2)}× (${cpu(inProcess) <= cpu(v8) ? 'met' : 'NOT met'}).`,
      '',
    ].join('\n'),
  );
}
