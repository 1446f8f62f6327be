// `npm run bench -- heap-fixed`: the fixed CPU costs of recording the heap of a short program, which on a 1-2 s
// program are most of `record --heap`'s cost over bare (bench/RESULTS.md, "record --heap on a short program: the
// fixed costs"). Each case runs the program with _cpu_marks.cjs loaded first: "setup" is the process's CPU before
// the program's first module loads (the CLI, the recorder's modules and start), "exit" the CPU of the 'exit'
// listeners (the last poll, the file finalized). Separate processes in interleaved rounds (round 0 dropped);
// medians, and per-round differences to @datadog/pprof's heap profiler and, with BENCH_HEAP_BASELINE_CLI (another
// checkout's dist/cli/main.js), to that checkout's `record --inline` and startRecording in the same round.
// BENCH_ROUNDS (default 15); BENCH_FIXED_PROGRAM: the program and its arguments (default _http_service.cjs 1500).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, rotateRounds, table } from './_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
const program = (process.env.BENCH_FIXED_PROGRAM ?? `${path.join(here, '_http_service.cjs')} 1500`).split(' ');
const baselineCli = process.env.BENCH_HEAP_BASELINE_CLI;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'profpack-heap-fixed-'));
const marks = path.join(tmp, 'marks.jsonl');
const interval = String(512 << 10);
const preload = (file) => ['--require', path.join(here, file)];

// record --heap --no-cpu --inline of `node script`: the program runs in record's own process (marks via NODE_OPTIONS).
const record = (cli) => ({
  command: [
    cli,
    'record',
    '--heap',
    '--no-cpu',
    '--inline',
    '--heap-interval',
    interval,
    '-o',
    path.join(tmp, 'p.tach'),
  ],
  inProcess: true,
});
const embedded = 'profpack startRecording in the program, inline writer';
const inProcess = 'profpack record --heap --no-cpu --inline, in process';
// `baseline`: the row this one is compared with in the baseline columns (the baseline checkout's same case).
const cases = {
  bare: { command: [] },
  '@datadog/pprof heap 512 KiB': { command: preload('_heap_datadog.cjs') },
  [embedded]: { command: preload('_heap_embedded.cjs'), baseline: `${embedded}, baseline` },
  [inProcess]: { ...record(path.join(repo, 'dist', 'cli', 'main.js')), baseline: 'the same, baseline CLI' },
  ...(baselineCli === undefined
    ? {}
    : {
        // The baseline checkout's dist/index.js, embedded the same way (_heap_embedded.cjs reads BENCH_HEAP_DIST).
        [`${embedded}, baseline`]: {
          command: preload('_heap_embedded.cjs'),
          env: { BENCH_HEAP_DIST: path.resolve(path.dirname(baselineCli), '..', 'index.js') },
        },
        'the same, baseline CLI': record(baselineCli),
      }),
};

function runOnce(c) {
  rmSync(marks, { force: true });
  const env = { ...process.env, BENCH_MARK_SCRIPT: path.basename(program[0]), BENCH_MARK_OUT: marks };
  Object.assign(env, {
    BENCH_HEAP_INTERVAL: interval,
    BENCH_HEAP_OUT: path.join(tmp, 'out'),
    BENCH_HEAP_WRITER: 'inline',
    ...c.env,
  });
  const args = c.inProcess
    ? [...c.command, '--', process.execPath, ...program]
    : [...preload('_cpu_marks.cjs'), ...c.command, ...program];
  if (c.inProcess) env.NODE_OPTIONS = `--require ${JSON.stringify(path.join(here, '_cpu_marks.cjs'))}`;
  const run = spawnSync(process.execPath, args, { cwd: repo, encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`${args.join(' ')} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  if (c.inProcess && /a Node process of its own/.test(run.stderr)) throw new Error(`not in process: ${run.stderr}`);
  const m = JSON.parse(readFileSync(marks, 'utf8').trim());
  // The run: what the process did between the program's first line and the first 'exit' listener.
  return { ...m, runMs: m.totalMs - m.setupMs - m.exitListenersMs, load: os.loadavg()[0] };
}

const got = rotateRounds(
  Object.fromEntries(Object.entries(cases).map(([name, c]) => [name, () => runOnce(c)])),
  rounds + 1,
);
for (const name of Object.keys(got)) got[name] = got[name].slice(1);
const loads = Object.values(got).flatMap((ms) => ms.map((m) => m.load));
const ms = (x) => `${x.toFixed(1)} ms`;
const diff = (name, peer, key) =>
  peer === undefined || got[peer] === undefined || name === peer
    ? ''
    : ms(median(got[name].map((m, r) => m[key] - got[peer][r][key])));
const dd = '@datadog/pprof heap 512 KiB';
const rows = Object.keys(got).map((name) => {
  const med = (key) => median(got[name].map((m) => m[key]));
  return [
    name,
    ms(med('setupMs')),
    ms(med('exitListenersMs')),
    ms(med('runMs')),
    ms(med('totalMs')),
    diff(name, dd, 'setupMs'),
    diff(name, dd, 'exitListenersMs'),
    diff(name, dd, 'runMs'),
    diff(name, cases[name].baseline, 'setupMs'),
    diff(name, cases[name].baseline, 'exitListenersMs'),
    diff(name, cases[name].baseline, 'runMs'),
  ];
});
const shape = program.map((a) => path.basename(a)).join(' ');
console.log(`# bench heap-fixed — ${machine()}, ${rounds} rounds (+1 dropped), ${shape}\n`);
const [low, high] = [Math.min(...loads), Math.max(...loads)];
console.log(`load average (1 min): median ${median(loads).toFixed(2)}, ${low.toFixed(2)}-${high.toFixed(2)}\n`);
const header = ['case', 'setup CPU', 'exit CPU', 'run CPU', 'process CPU'];
header.push(
  'setup − Datadog (per round)',
  'exit − Datadog',
  'run − Datadog',
  'setup − baseline',
  'exit − baseline',
  'run − baseline',
);
console.log(table(header, rows));
rmSync(tmp, { recursive: true, force: true });
