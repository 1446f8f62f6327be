// `npm run bench -- convert [--rounds N] [--samples N] [--only TEXT] [--base DIR] [--dir DIR]`: whole processes on
// 1 M-sample files made from the real Node stack streams (node_tsc and
// node_terser of ../shared/data/stacks, played in turn until N samples), in
// interleaved rounds, per-round median ratios, with each process's peak RSS
// (GNU time). Goals (issue 26):
//   Tachyon → collapsed, → pprof     ≥ 5× CPython 3.15's `replay --collapsed`, in less memory
//   .cpuprofile → pprof, pprof → collapsed   ≥ 2× a straight pprof-format script (bench/_pprof_script.mjs);
//   also .cpuprofile → pprof --aggregate, the script's own shape (one Sample per distinct stack, no times)
//   top on the 1 M-sample pprof       ≥ 2× `go tool pprof -top`
// --only runs the rows whose work contains TEXT; --base DIR also runs another checkout's CLI
// (e.g. /work/main) in the same rounds, for a before/after; --dir keeps the inputs elsewhere.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table } from './_harness.mjs';
import { loadStream } from './_streams.mjs';
import { cpythonInterpreter } from '../test/support/cpython.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const ROUNDS = Number(option('rounds', '5'));
const SAMPLES = Number(option('samples', '1000000'));
const only = option('only', '');
const base = option('base', '');
const dir = option('dir', path.join(os.tmpdir(), 'profpack-bench-convert'));
mkdirSync(dir, { recursive: true });
const python = cpythonInterpreter();
const cli = path.join(root, 'dist', 'cli', 'main.js');
const pp = await import(path.join(root, 'dist', 'index.js'));

// The inputs: a Tachyon file written by ProfileWriter, and the pprof/.cpuprofile pair of streams-1m.mjs.
const tach = path.join(dir, `streams-${SAMPLES}.tach`);
// Needed by the rows --only keeps (the test was backwards: --only 'Tachyon → pprof' left the input unwritten).
if (!existsSync(tach) && ['Tachyon → collapsed', 'Tachyon → pprof'].some((what) => what.includes(only))) {
  const writer = new pp.ProfileWriter(tach, { sampleIntervalUs: 1000n, startTimeUs: 1_000_000n, compression: 'zstd' });
  let written = 0;
  let clock = 1_000_000;
  while (written < SAMPLES) {
    for (const name of ['node_tsc', 'node_terser']) {
      const stream = loadStream(name);
      const ids = stream.frames.map((f) =>
        writer.internFrame({
          ...f,
          lineno: f.lineno,
          endLineno: null,
          column: f.column,
          endColumn: null,
          opcode: null,
        }),
      );
      const base = stream.samples[0]?.timestampUs ?? 0;
      for (const s of stream.samples) {
        if (written >= SAMPLES) break;
        writer.writeStack(
          s.threadId,
          s.interpreterId,
          BigInt(clock + s.timestampUs - base),
          s.status,
          s.stack.map((f) => ids[f]),
        );
        written++;
      }
      clock += (stream.samples.at(-1)?.timestampUs ?? base) - base + 1000;
    }
  }
  writer.finalize();
}
// streams-1m.mjs names its files by --samples (1m, 250000, ...).
const label = SAMPLES % 1_000_000 === 0 ? `${SAMPLES / 1_000_000}m` : String(SAMPLES);
const pprof = path.join(dir, `streams-${label}.pb.gz`);
const cpuprofile = path.join(dir, `streams-${label}.cpuprofile`);
if (!existsSync(pprof) || !existsSync(cpuprofile))
  spawnSync(
    process.execPath,
    [path.join(here, 'fixtures', 'streams-1m.mjs'), '--samples', String(SAMPLES), '--out', dir],
    { stdio: 'inherit' },
  );

/** One process: CPU seconds (user + system: a shared machine's waits are not counted) and peak RSS (MB), by GNU time. */
function timed(argv) {
  const run = spawnSync('/usr/bin/time', ['-f', 'TIME %U %S %M', ...argv], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const m = /TIME (\S+) (\S+) (\d+)\s*$/.exec(run.stderr);
  if (run.status !== 0 || m === null)
    throw new Error(`${argv.join(' ')} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  return { s: Number(m[1]) + Number(m[2]), mb: Number(m[3]) / 1024 };
}

const out = (name) => path.join(dir, name);
const go = spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0;
const comparisons = [
  {
    what: 'Tachyon → collapsed',
    ours: [process.execPath, cli, 'convert', tach, '-o', out('a.folded'), '-q'],
    peer: [python, '-m', 'profiling.sampling', 'replay', '--collapsed', '-o', out('py.txt'), tach],
    peerName: 'CPython replay --collapsed',
    goal: 5,
  },
  {
    what: 'Tachyon → pprof',
    ours: [process.execPath, cli, 'convert', tach, '-o', out('a.pb.gz'), '-q'],
    peer: [python, '-m', 'profiling.sampling', 'replay', '--collapsed', '-o', out('py.txt'), tach],
    peerName: 'CPython replay --collapsed',
    goal: 5,
  },
  {
    what: '.cpuprofile → pprof',
    ours: [process.execPath, cli, 'convert', cpuprofile, '-o', out('b.pb.gz'), '-q'],
    peer: [process.execPath, path.join(here, '_pprof_script.mjs'), 'cpuprofile-to-pprof', cpuprofile, out('s.pb.gz')],
    peerName: 'pprof-format script',
    goal: 2,
  },
  {
    // The script's shape: one Sample per distinct stack, no times (convert --aggregate).
    what: '.cpuprofile → pprof --aggregate',
    ours: [process.execPath, cli, 'convert', cpuprofile, '-o', out('b-agg.pb.gz'), '-q', '--aggregate'],
    peer: [process.execPath, path.join(here, '_pprof_script.mjs'), 'cpuprofile-to-pprof', cpuprofile, out('s.pb.gz')],
    peerName: 'pprof-format script',
    goal: 2,
  },
  {
    what: 'pprof → collapsed',
    ours: [process.execPath, cli, 'convert', pprof, '-o', out('c.folded'), '-q'],
    peer: [process.execPath, path.join(here, '_pprof_script.mjs'), 'pprof-to-collapsed', pprof, out('s.folded')],
    peerName: 'pprof-format script',
    goal: 2,
  },
  ...(go
    ? [
        {
          what: 'top on the pprof',
          ours: [process.execPath, cli, 'top', pprof, '-n', '10'],
          peer: ['go', 'tool', 'pprof', '-top', pprof],
          peerName: 'go tool pprof -top',
          goal: 2,
        },
      ]
    : []),
];

const rows = [];
for (const c of comparisons.filter((x) => x.what.includes(only))) {
  const ratios = [];
  const ours = [];
  const peers = [];
  const bases = [];
  const baseArgv =
    c.ours[0] === process.execPath ? [c.ours[0], path.join(base, 'dist', 'cli', 'main.js'), ...c.ours.slice(2)] : null;
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so a slow moment falls on both alike.
    const pair = r % 2 === 0 ? [timed(c.ours), timed(c.peer)] : [timed(c.peer), timed(c.ours)].reverse();
    ours.push(pair[0]);
    peers.push(pair[1]);
    ratios.push(pair[1].s / pair[0].s);
    if (base && baseArgv) bases.push(timed(baseArgv));
  }
  const ratio = median(ratios);
  if (bases.length > 0)
    rows.push([
      `${c.what} (base: ${base})`,
      c.peerName,
      `${median(bases.map((x) => x.s)).toFixed(2)} s / ${Math.max(...bases.map((x) => x.mb)).toFixed(0)} MB`,
      '',
      `${median(peers.map((p, i) => p.s / bases[i].s)).toFixed(2)}×`,
      `${c.goal}×`,
      '',
    ]);
  rows.push([
    c.what,
    c.peerName,
    `${median(ours.map((x) => x.s)).toFixed(2)} s / ${Math.max(...ours.map((x) => x.mb)).toFixed(0)} MB`,
    `${median(peers.map((x) => x.s)).toFixed(2)} s / ${Math.max(...peers.map((x) => x.mb)).toFixed(0)} MB`,
    `${ratio.toFixed(2)}×`,
    `${c.goal}×`,
    ratio >= c.goal ? 'met' : 'missed',
  ]);
  console.error(`${c.what}: ${ratio.toFixed(2)}×`);
}
rmSync(out('py.txt'), { force: true });
console.log(
  `\nconvert, ${SAMPLES.toLocaleString('en')} samples (real node_tsc + node_terser streams), ${ROUNDS} interleaved rounds; ${machine()}; load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
console.log(
  table(
    [
      'work',
      'peer',
      'profpack (median CPU s / peak RSS)',
      'peer (median CPU s / peak RSS)',
      'speed ratio (median per round)',
      'goal',
      '',
    ],
    rows,
  ),
);
