// `npm run bench -- heap`: what recording the heap costs (issue 27), in one run,
// against bare Node, `node --heap-prof` and @datadog/pprof's heap profiler
// (heap.start(interval, 64) and a pprof encoded at exit) at the same interval.
//
// Two parts, each in separate processes, in interleaved rounds (round 0 warms
// the file cache and is dropped), ratios as medians of per-round ratios to the
// bare run of the same round (on a shared machine the two ran moments apart):
// - compare: every tool at one interval (BENCH_HEAP_INTERVAL, default: the
//   recorder's default) on each workload, profpack (V8's API sampler, and once
//   the inspector's, lib/record/program/heap/probe.ts) with CPU sampling at 1 ms
//   (its default) and heap only (--no-cpu: V8's CPU profiler never started),
//   and profpack without --heap (the floor of its --heap rows),
//   and the heap sampler alone preloaded in the program (_heap_sampler.cjs: no
//   writer, no CPU sampling, as @datadog/pprof's preload), on each path;
// - parts: where the heap sampler's cost goes, its stages alone in the program
//   (_heap_parts.cjs: loaded, started, the last poll, the timed polls), with the
//   peers and `record --heap --no-cpu` (whose tree CPU less its target's is the
//   CLI's and writer process's own), and the stages' own CPU measured in process;
// - intervals: profpack at each of BENCH_HEAP_INTERVALS (128k,512k,1m,4m), heap
//   only (--no-cpu): sampled allocations per second against the cost.
//
// Workloads: `http`, an HTTP service under a bounded local load
// (_http_service.cjs, JSON parse/stringify per request), and `tsc`,
// TypeScript's compiler type-checking a fixed subset of this repo (--noEmit).
// Measures: CPU (user+sys) of the whole process tree (/usr/bin/time: wait4's
// rusage, which holds every reaped descendant: profpack's CLI, its writer, the
// target), the target's own CPU (process.cpuUsage at exit, _heap_report.cjs),
// wall, peak RSS, the 1-minute load average before each run; for profpack its
// heap events and the bytes of its heap frames on the recording pipe.
// BENCH_ROUNDS (default 5), BENCH_HEAP_PARTS (compare,intervals; parts on demand),
// BENCH_HEAP_WORKLOADS (http,tsc), BENCH_HEAP_REQUESTS (http, default 6000), BENCH_HEAP_ONLY (a regexp of cases).
// BENCH_HEAP_BASELINE_CLI: another checkout's dist/cli/main.js, whose `record --heap --no-cpu` (spawned, and
// `--inline` in process) and whose startRecording embedded run as more cases in the same rounds (before/after a
// change); every part prints "tree - target" (the CLI's own CPU).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { machine, median, table, tscWorkloadArgs } from './_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const cli = path.join(repo, 'dist', 'cli', 'main.js');
const { DEFAULT_HEAP_INTERVAL_BYTES } = createRequire(import.meta.url)(path.join(repo, 'dist', 'record', 'index.js'));
const reportPreload = path.join(here, '_heap_report.cjs');
const datadogPreload = path.join(here, '_heap_datadog.cjs');
const samplerPreload = path.join(here, '_heap_sampler.cjs');
const embeddedPreload = path.join(here, '_heap_embedded.cjs');
const partsPreload = path.join(here, '_heap_parts.cjs');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const interval = Number(process.env.BENCH_HEAP_INTERVAL ?? DEFAULT_HEAP_INTERVAL_BYTES);
const sweep = (process.env.BENCH_HEAP_INTERVALS ?? `${128 << 10},${512 << 10},${1 << 20},${4 << 20}`)
  .split(',')
  .map(Number);
const parts = (process.env.BENCH_HEAP_PARTS ?? 'compare,intervals').split(',');
const workloadNames = (process.env.BENCH_HEAP_WORKLOADS ?? 'http,tsc').split(',');
const baselineCli = process.env.BENCH_HEAP_BASELINE_CLI;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'profpack-bench-heap-'));
if (!existsSync('/usr/bin/time')) throw new Error('bench heap needs /usr/bin/time');
if (!existsSync(path.join(repo, 'node_modules', '@datadog', 'pprof'))) throw new Error('needs @datadog/pprof');

// http: the allocation-heavy service loop; tsc: the real program (_harness.mjs tscWorkloadArgs).
const workloads = {
  http: { args: [path.join(here, '_http_service.cjs'), process.env.BENCH_HEAP_REQUESTS ?? '6000'] },
  tsc: {
    args: tscWorkloadArgs(repo),
  },
  alloc: { args: [path.join(here, '_alloc_service.cjs'), '40000'] },
};

const kib = (n) => (n >= 1 << 20 ? `${n / (1 << 20)} MiB` : `${n / 1024} KiB`);
const target = (w) => [process.execPath, '--require', reportPreload, ...workloads[w].args];

// sampler: lib/record/program/heap/probe.ts's choice, forced (PROFPACK_HEAP_SAMPLER): V8's API or the inspector.
function profpack(
  w,
  { heap, cpuOff = false, n = interval, sampler = 'native', polls, shortLived, inline, inProcess, main = cli },
) {
  const out = path.join(tmp, 'p.tach');
  const flags = heap ? ['--heap', '--heap-interval', String(n)] : [];
  if (polls !== undefined) flags.push('--heap-polls', polls);
  if (shortLived !== undefined) flags.push('--heap-short-lived', shortLived);
  if (cpuOff) flags.push('--no-cpu');
  if (inline) flags.push('--inline');
  // inProcess: `-- node script` with no node flag, which record runs in its own process; the report preload then
  // comes through NODE_OPTIONS (loaded before the CLI: its 'exit' listener runs before the recorder's finalize, so
  // "target CPU" misses that part, which "tree CPU" holds).
  const command = [process.execPath, main, 'record', ...flags, '--out', out, '--'];
  command.push(...(inProcess ? [process.execPath, ...workloads[w].args] : target(w)));
  const env = { ...(heap ? { PROFPACK_HEAP_SAMPLER: sampler } : {}) };
  if (inProcess) env.NODE_OPTIONS = `--require ${JSON.stringify(reportPreload)}`;
  // --inline prints no per-kind heap counts (the program wrote them): its event columns stay empty.
  return { profpack: heap && !inline, file: out, command, env, inProcess };
}

// The heap sampler alone in the program (_heap_sampler.cjs): what --heap costs without `record`'s writer and CPU.
function sampler(node, rest, kind) {
  const env = { BENCH_HEAP_INTERVAL: String(interval), PROFPACK_HEAP_SAMPLER: kind };
  return { env, command: [node, '--require', samplerPreload, ...rest] };
}

// profpack embedded in the program (_heap_embedded.cjs: startRecording({ heap, cpu: false })), as @datadog/pprof is.
// dist: the package entry it loads (default this checkout's; a baseline's for the before/after rows).
function embedded(node, rest, writer, dist = path.join(repo, 'dist', 'index.js')) {
  const file = path.join(tmp, `embedded-${writer}.tach`);
  const env = { BENCH_HEAP_INTERVAL: String(interval), BENCH_HEAP_OUT: file, BENCH_HEAP_WRITER: writer };
  env.BENCH_HEAP_DIST = dist;
  return { file, env, command: [node, '--require', embeddedPreload, ...rest] };
}

function compareCases(w) {
  const dir = path.join(tmp, 'heapprof');
  const [node, ...rest] = target(w);
  const baseline =
    baselineCli === undefined
      ? {}
      : {
          [`profpack --heap --no-cpu ${kib(interval)}, baseline CLI`]: profpack(w, {
            heap: true,
            cpuOff: true,
            main: baselineCli,
          }),
          [`profpack --heap --no-cpu ${kib(interval)}, --inline in process, baseline CLI`]: profpack(w, {
            heap: true,
            cpuOff: true,
            inline: true,
            inProcess: true,
            main: baselineCli,
          }),
          [`profpack startRecording in the program, heap only ${kib(interval)}, inline writer, baseline`]: embedded(
            node,
            rest,
            'inline',
            path.resolve(baselineCli, '..', '..', 'index.js'),
          ),
        };
  return {
    bare: { command: target(w) },
    ...baseline,
    'profpack record (CPU 1 ms, no heap)': profpack(w, { heap: false }),
    [`profpack --heap ${kib(interval)} + CPU 1 ms`]: profpack(w, { heap: true }),
    [`profpack --heap --no-cpu ${kib(interval)}`]: profpack(w, { heap: true, cpuOff: true }),
    // record --inline: the file written in the program, `record` only waits (no writer loaded in its process).
    [`profpack --heap ${kib(interval)} + CPU 1 ms, --inline`]: profpack(w, { heap: true, inline: true }),
    [`profpack --heap --no-cpu ${kib(interval)}, --inline`]: profpack(w, { heap: true, cpuOff: true, inline: true }),
    // record --inline of `node script` with no node flag: the program runs in record's own process.
    [`profpack --heap ${kib(interval)} + CPU 1 ms, --inline in process`]: profpack(w, {
      heap: true,
      inline: true,
      inProcess: true,
    }),
    [`profpack --heap --no-cpu ${kib(interval)}, --inline in process`]: profpack(w, {
      heap: true,
      cpuOff: true,
      inline: true,
      inProcess: true,
    }),
    // The look before each GC that keeps short-lived objects' stacks (the default), left out.
    [`profpack --heap --no-cpu ${kib(interval)}, short-lived counted only`]: profpack(w, {
      heap: true,
      cpuOff: true,
      shortLived: 'count',
    }),
    [`profpack --heap ${kib(interval)} + CPU 1 ms, inspector`]: profpack(w, { heap: true, sampler: 'inspector' }),
    [`profpack heap sampler alone ${kib(interval)}, native`]: sampler(node, rest, 'native'),
    [`profpack heap sampler alone ${kib(interval)}, inspector`]: sampler(node, rest, 'inspector'),
    [`profpack startRecording in the program, heap only ${kib(interval)}, inline writer`]: embedded(
      node,
      rest,
      'inline',
    ),
    [`profpack startRecording in the program, heap only ${kib(interval)}, writer process`]: embedded(
      node,
      rest,
      'process',
    ),
    [`node --heap-prof ${kib(interval)}`]: {
      dir,
      command: [node, '--heap-prof', `--heap-prof-interval=${interval}`, `--heap-prof-dir=${dir}`, ...rest],
    },
    [`@datadog/pprof heap ${kib(interval)}`]: {
      file: path.join(tmp, 'dd.pb.gz'),
      env: { BENCH_HEAP_INTERVAL: String(interval), BENCH_HEAP_OUT: path.join(tmp, 'dd.pb.gz') },
      command: [node, '--require', datadogPreload, ...rest],
    },
  };
}

// The sampler's stages (_heap_parts.cjs), beside bare, the peers and `record --heap --no-cpu`.
function partCases(w) {
  const all = compareCases(w);
  const [node, ...rest] = target(w);
  const stage = (name) => ({
    env: { BENCH_HEAP_INTERVAL: String(interval), BENCH_HEAP_STAGE: name },
    command: [node, '--require', partsPreload, ...rest],
  });
  return {
    bare: all.bare,
    'sampler loaded (module + addon), not started': stage('load'),
    'sampler started, never polled': stage('start'),
    'sampler started, never polled, short-lived counted only': stage('start-count'),
    'sampler started, never polled, no Buffer sampler': stage('start-nobuffers'),
    'sampler started, last poll only': stage('final'),
    'sampler started, timed polls + last (= alone)': stage('timed'),
    [`profpack --heap --no-cpu ${kib(interval)}`]: all[`profpack --heap --no-cpu ${kib(interval)}`],
    [`node --heap-prof ${kib(interval)}`]: all[`node --heap-prof ${kib(interval)}`],
    [`@datadog/pprof heap ${kib(interval)}`]: all[`@datadog/pprof heap ${kib(interval)}`],
  };
}

function intervalCases(w) {
  const out = { bare: { command: target(w) } };
  for (const n of sweep) {
    out[`profpack --heap --no-cpu ${kib(n)}`] = profpack(w, { heap: true, cpuOff: true, n });
  }
  return out;
}

function outputBytes(c) {
  if (c.dir !== undefined) return readdirSync(c.dir).reduce((s, f) => s + statSync(path.join(c.dir, f)).size, 0);
  return c.file !== undefined && existsSync(c.file) ? statSync(c.file).size : undefined;
}

function runOnce(c) {
  const report = path.join(tmp, 'report.jsonl');
  rmSync(report, { force: true });
  if (c.dir !== undefined) rmSync(c.dir, { recursive: true, force: true });
  if (c.file !== undefined) rmSync(c.file, { force: true });
  const load = os.loadavg()[0];
  const env = { ...process.env, ...c.env, BENCH_HEAP_REPORT: report };
  const time = ['-f', 'TIME %e %U %S %M'];
  const run = spawnSync('/usr/bin/time', [...time, ...c.command], { cwd: repo, encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`${c.command.join(' ')} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  if (c.inProcess && /a Node process of its own/.test(run.stderr)) throw new Error(`not in process: ${run.stderr}`);
  const [, wall, user, sys, rssKb] = /TIME (\S+) (\S+) (\S+) (\S+)/.exec(run.stderr);
  const own = JSON.parse(readFileSync(report, 'utf8').trim().split('\n').at(-1));
  const heap = /heap: ([\d,]+) sampled allocations, ([\d,]+) frees, ([\d,]+) short-lived \(([\d,]+) bytes/.exec(
    run.stderr,
  );
  const num = (s) => Number(s.replace(/,/g, ''));
  const parts = /heap parts: (\{.*\})/.exec(run.stderr);
  return {
    parts: parts ? JSON.parse(parts[1]) : undefined,
    load,
    targetCpuMs: own.cpuMs,
    treeCpuMs: (Number(user) + Number(sys)) * 1000,
    wallMs: Number(wall) * 1000,
    rssKb: Number(rssKb),
    outBytes: outputBytes(c),
    allocations: heap ? num(heap[1]) : undefined,
    frees: heap ? num(heap[2]) : undefined,
    shortLived: heap ? num(heap[3]) : undefined,
    pipeBytes: heap ? num(heap[4]) : undefined,
  };
}

// BENCH_HEAP_ONLY: a regular expression; only the cases it matches run (and bare, always).
const only = process.env.BENCH_HEAP_ONLY === undefined ? undefined : new RegExp(process.env.BENCH_HEAP_ONLY);
const chosen = (all) =>
  Object.fromEntries(Object.entries(all).filter(([name]) => name === 'bare' || only === undefined || only.test(name)));

function runRounds(all) {
  const names = Object.keys(all);
  const got = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds + 1; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      const m = runOnce(all[name]);
      if (r > 0) got[name].push(m);
    }
  }
  return got;
}

const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

function report(title, all, got) {
  const names = Object.keys(all);
  const med = (name, key) => median(got[name].map((m) => m[key]));
  const over = (name, key) =>
    name === 'bare' ? '—' : pct(median(got[name].map((m, r) => m[key] / got.bare[r][key] - 1)));
  const extra = (name, key) =>
    name === 'bare' ? '—' : `${median(got[name].map((m, r) => m[key] - got.bare[r][key])).toFixed(0)} ms`;
  const loads = names.flatMap((n) => got[n].map((m) => m.load));
  const rows = names.map((name) => {
    const sampled = all[name].profpack ? med(name, 'allocations') + med(name, 'shortLived') : undefined;
    const events = all[name].profpack ? med(name, 'allocations') + med(name, 'frees') : undefined;
    const cpuSec = med(name, 'targetCpuMs') / 1000;
    const out = med(name, 'outBytes');
    return [
      name,
      `${(med(name, 'treeCpuMs') / 1000).toFixed(2)} s`,
      over(name, 'treeCpuMs'),
      extra(name, 'treeCpuMs'),
      over(name, 'targetCpuMs'),
      over(name, 'wallMs'),
      `${(med(name, 'rssKb') / 1024).toFixed(0)} MB`,
      sampled === undefined ? '' : `${sampled.toFixed(0)} (${(sampled / cpuSec).toFixed(0)}/s)`,
      events === undefined ? '' : `${med(name, 'allocations')} / ${med(name, 'frees')}`,
      events ? `${med(name, 'pipeBytes')} (${(med(name, 'pipeBytes') / events).toFixed(1)})` : '',
      Number.isFinite(out) ? String(out) : '',
    ];
  });
  console.log(`### ${title}\n`);
  console.log(
    `load average (1 min) before the runs: median ${median(loads).toFixed(2)}, ` +
      `${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}\n`,
  );
  const header = ['case', 'tree CPU', 'over bare', 'extra tree CPU', 'target CPU over bare', 'wall over bare'];
  header.push('peak RSS');
  header.push('sampled objects (per s of target CPU)', 'alloc / free events', 'pipe bytes (per event)', 'file bytes');
  console.log(table(header, rows));
  console.log('');
  const measured = names.filter((n) => all[n].profpack || got[n][0].parts !== undefined);
  if (measured.length === 0) return;
  // Medians, in ms of CPU: measured in the target around each stage, and the tree's CPU beyond the target's.
  const part = (name, key) => {
    const xs = got[name].map((m) => m.parts?.[key]).filter((x) => x !== undefined);
    return xs.length === 0 ? '' : median(xs).toFixed(key === 'timedPolls' ? 0 : 1);
  };
  const beyond = (name) => median(got[name].map((m) => m.treeCpuMs - m.targetCpuMs)).toFixed(0);
  const partRows = [...measured, 'bare'].map((n) => [
    n,
    part(n, 'loadMs'),
    part(n, 'timedPolls'),
    part(n, 'timedMs'),
    part(n, 'lastGcMs'),
    part(n, 'lastPollMs'),
    beyond(n),
  ]);
  const partHeader = ['case', 'loading ms', 'timed polls', 'in them ms', 'last GC ms', 'last poll ms'];
  partHeader.push('tree - target ms');
  console.log(table(partHeader, partRows));
  console.log('');
}

const started = new Date().toISOString();
console.log(`# bench heap — ${machine()}, ${rounds} rounds (+1 dropped), medians, ${started}\n`);
for (const w of workloadNames) {
  const shape = workloads[w].args.map((a) => (a.startsWith('/') ? path.basename(a) : a)).join(' ');
  if (parts.includes('compare')) {
    const cases = chosen(compareCases(w));
    report(`${w} (${shape}): every tool at ${kib(interval)}`, cases, runRounds(cases));
  }
  if (parts.includes('parts')) {
    const cases = chosen(partCases(w));
    report(`${w} (${shape}): the heap sampler's stages at ${kib(interval)}`, cases, runRounds(cases));
  }
  if (parts.includes('intervals')) {
    report(`${w} (${shape}): profpack per interval`, intervalCases(w), runRounds(intervalCases(w)));
  }
}
rmSync(tmp, { recursive: true, force: true });
