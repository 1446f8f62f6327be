// `npm run bench -- heap`: the cost of recording the heap (issue 27), per
// sampling interval, against bare Node, `node --heap-prof` and @datadog/pprof's
// heap profiler at the same interval, in interleaved rounds, on two workloads:
// an allocation-heavy service loop (_alloc_service.cjs, fixed requests) and a
// real program no one here wrote, TypeScript's own compiler (tsc --noEmit on
// four files of lib/). Per case: the target's own CPU time
// (process.cpuUsage at exit, _heap_report.cjs) and the CPU of the whole
// process tree (/usr/bin/time: profpack's writer, --heap-prof's write at
// exit), medians over BENCH_ROUNDS (default 3); for profpack also its heap
// events per second of target CPU and bytes per event on the pipe.
// `profpack record` without --heap is a case too: its CPU sampling (1 ms) is
// the floor under every --heap row. BENCH_HEAP_INTERVALS (bytes, comma-separated)
// BENCH_HEAP_WORKLOADS (alloc,tsc) and BENCH_HEAP_PEERS=0 (profpack only) narrow the run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table } from './_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const cli = path.join(repo, 'dist', 'cli', 'main.js');
const reportPreload = path.join(here, '_heap_report.cjs');
const datadogPreload = path.join(here, '_heap_datadog.cjs');
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const intervals = (process.env.BENCH_HEAP_INTERVALS ?? `${32 * 1024},${128 * 1024},${512 * 1024},${1024 * 1024}`).split(',').map(Number);
const peers = process.env.BENCH_HEAP_PEERS !== '0';
const workloadNames = (process.env.BENCH_HEAP_WORKLOADS ?? 'alloc,tsc').split(',');
const tmp = mkdtempSync(path.join(tmpdir(), 'profpack-bench-heap-'));
const hasDatadog = existsSync(path.join(repo, 'node_modules', '@datadog', 'pprof'));
if (!existsSync('/usr/bin/time')) throw new Error('bench heap needs /usr/bin/time');

// tsc type-checking four of this repo's files: the work is mostly parsing and binding lib.es*.d.ts and @types/node.
const tscFiles = ['record/heap/diff.ts', 'record/heap/limit.ts', 'record/heap/options.ts', 'errors.ts'].map((f) => path.join(repo, 'lib', f));
const workloads = {
  alloc: [path.join(here, '_alloc_service.cjs'), String(Number(process.env.BENCH_HEAP_REQUESTS ?? 40000))],
  tsc: [path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--strict', '--skipLibCheck', '--lib', 'es2023', '--target', 'es2022', '--module', 'commonjs', '--types', 'node', ...tscFiles],
};

function cases(workload) {
  const args = workloads[workload];
  const out = { bare: { command: [process.execPath, '--require', reportPreload, ...args] } };
  out['profpack cpu only'] = { command: [process.execPath, cli, 'record', '--out', path.join(tmp, 'cpu.tach'), '--', process.execPath, '--require', reportPreload, ...args] };
  for (const n of intervals) {
    const k = `${n / 1024} KiB`;
    out[`profpack --heap ${k}`] = { interval: n, profpack: true, command: [process.execPath, cli, 'record', '--heap', '--heap-interval', String(n), '--out', path.join(tmp, 'heap.tach'), '--', process.execPath, '--require', reportPreload, ...args] };
    if (peers) out[`--heap-prof ${k}`] = { interval: n, command: [process.execPath, '--heap-prof', `--heap-prof-interval=${n}`, `--heap-prof-dir=${tmp}`, '--require', reportPreload, ...args] };
    if (!peers) continue;
    if (hasDatadog) out[`@datadog/pprof ${k}`] = { interval: n, env: { BENCH_HEAP_INTERVAL: String(n), BENCH_HEAP_OUT: path.join(tmp, 'dd.pb.gz') }, command: [process.execPath, '--require', datadogPreload, '--require', reportPreload, ...args] };
  }
  return out;
}

function runOnce(c) {
  const report = path.join(tmp, 'report.jsonl');
  rmSync(report, { force: true });
  const run = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', ...c.command], { cwd: repo, encoding: 'utf8', env: { ...process.env, ...c.env, BENCH_HEAP_REPORT: report }, maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`${c.command.join(' ')} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  const [, wall, user, sys, rssKb] = /TIME (\S+) (\S+) (\S+) (\S+)/.exec(run.stderr);
  const target = JSON.parse(readFileSync(report, 'utf8').trim().split('\n').at(-1));
  const heap = /heap: ([\d,]+) sampled allocations, ([\d,]+) frees, ([\d,]+) short-lived \(([\d,]+) bytes on the pipe\)/.exec(run.stderr);
  const num = (s) => Number(s.replace(/,/g, ''));
  return { targetCpuMs: target.cpuMs, targetWallMs: target.wallMs, treeCpuMs: (Number(user) + Number(sys)) * 1000, wallMs: Number(wall) * 1000, rssKb: Number(rssKb), events: heap ? num(heap[1]) + num(heap[2]) : undefined, shortLived: heap ? num(heap[3]) : undefined, pipeBytes: heap ? num(heap[4]) : undefined };
}

console.log(`# bench heap — ${machine()}, ${rounds} rounds, medians\n`);
for (const workload of workloadNames) {
  const all = cases(workload);
  const names = Object.keys(all);
  const got = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds + 1; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      const m = runOnce(all[name]);
      if (r > 0) got[name].push(m); // round 0 warms the file cache
    }
  }
  const med = (name, key) => median(got[name].map((m) => m[key]));
  // On a shared machine a case and bare ran moments apart in the same round: the median of per-round ratios is steadier.
  const over = (name, key) => `${(median(got[name].map((m, r) => m[key] / got.bare[r][key] - 1)) * 100).toFixed(1)} %`;
  const rows = names.map((name) => {
    const c = all[name];
    const events = c.profpack ? med(name, 'events') : undefined;
    const cpuSec = med(name, 'targetCpuMs') / 1000;
    return [
      name,
      `${med(name, 'targetCpuMs').toFixed(0)} ms`,
      name === 'bare' ? '—' : over(name, 'targetCpuMs'),
      name === 'bare' ? '—' : over(name, 'treeCpuMs'),
      name === 'bare' ? '—' : over(name, 'wallMs'),
      `${(med(name, 'rssKb') / 1024).toFixed(0)} MB`,
      events === undefined ? '' : `${events.toFixed(0)} (${(events / cpuSec).toFixed(0)}/s)`,
      events === undefined ? '' : `${med(name, 'shortLived').toFixed(0)}`,
      events ? (med(name, 'pipeBytes') / events).toFixed(1) : '',
    ];
  });
  console.log(`## ${workload}: ${workloads[workload].map((a) => path.basename(a)).join(' ')}\n`);
  console.log(table(['case', 'target CPU', 'target CPU over bare', 'tree CPU over bare', 'wall over bare', 'peak RSS', 'heap events (per s of CPU)', 'short-lived', 'pipe bytes / event'], rows));
  console.log('');
}
rmSync(tmp, { recursive: true, force: true });
