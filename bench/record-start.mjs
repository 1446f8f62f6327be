// `npm run bench -- record-start`: the CPU of `profpack record --heap --no-cpu`'s own process (issue 27: what the
// CLI costs beyond the recorded program), this checkout against another (BENCH_BASELINE_CLI: its dist/cli/main.js),
// in one loop: interleaved rounds (round 0, which fills the file cache and Node's compile cache, dropped), medians.
// The CLI's own CPU is process.cpuUsage() at its exit (_cli_cpu.cjs, preloaded in the CLI only), so the target's
// CPU is not in it; the modules it loaded are counted too.
// Workloads: `empty` (node -e 0: the start alone), `http` (_http_service.cjs 6000) and `tsc` (bench/heap.mjs's).
// BENCH_NODES: Node binaries, comma-separated (default this one); the CLI and its target run on each. Where a Node
// has module.enableCompileCache (>= 22.1), this checkout also runs with NODE_DISABLE_COMPILE_CACHE=1.
// BENCH_ROUNDS (default 7), BENCH_START_WORKLOADS (empty,http,tsc).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, median, table, tscWorkloadArgs } from './_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const cli = path.join(repo, 'dist', 'cli', 'main.js');
const baselineCli = process.env.BENCH_BASELINE_CLI;
const nodes = (process.env.BENCH_NODES ?? process.execPath).split(',');
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const workloadNames = (process.env.BENCH_START_WORKLOADS ?? 'empty,http,tsc').split(',');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'profpack-bench-start-'));
const report = path.join(tmp, 'cli.jsonl');

const workloads = {
  empty: ['-e', '0'],
  http: [path.join(here, '_http_service.cjs'), '6000'],
  tsc: tscWorkloadArgs(repo),
};

function version(node) {
  return spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
}

function hasCompileCache(node) {
  const probe = "process.stdout.write(String(typeof require('node:module').enableCompileCache))";
  return spawnSync(node, ['-e', probe], { encoding: 'utf8' }).stdout === 'function';
}

function cases(node) {
  const v = version(node);
  const run = (main, env = {}) => ({ node, main, env });
  const out = { [`${v}, this checkout`]: run(cli) };
  if (hasCompileCache(node))
    out[`${v}, this checkout, NODE_DISABLE_COMPILE_CACHE=1`] = run(cli, { NODE_DISABLE_COMPILE_CACHE: '1' });
  if (baselineCli !== undefined) out[`${v}, baseline`] = run(baselineCli);
  return out;
}

function runOnce(c, workload) {
  rmSync(report, { force: true });
  const load = os.loadavg()[0];
  const args = ['--require', path.join(here, '_cli_cpu.cjs'), c.main, 'record', '--heap', '--no-cpu'];
  args.push('--out', path.join(tmp, 'p.tach'), '--', c.node, ...workloads[workload]);
  const env = { ...process.env, ...c.env, BENCH_CLI_REPORT: report };
  const r = spawnSync(c.node, args, { cwd: repo, encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return { ...JSON.parse(readFileSync(report, 'utf8').trim()), load };
}

const all = Object.assign({}, ...nodes.map(cases));
const names = Object.keys(all);
console.log(
  `# bench record-start — ${machine()}, ${rounds} rounds (+1 dropped), medians, ${new Date().toISOString()}\n`,
);
for (const w of workloadNames) {
  const got = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds + 1; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      const m = runOnce(all[name], w);
      if (r > 0) got[name].push(m);
    }
  }
  const loads = names.flatMap((n) => got[n].map((m) => m.load));
  console.log(`### ${w}: the CLI process's own CPU, \`record --heap --no-cpu\`\n`);
  console.log(
    `load average (1 min) before the runs: median ${median(loads).toFixed(2)}, ` +
      `${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}\n`,
  );
  // Against the baseline on the same Node: the median of per-round differences (the two ran moments apart).
  const baselineOf = (n) => names.find((b) => b.endsWith(', baseline') && b.split(',')[0] === n.split(',')[0]);
  const vsBaseline = (n) => {
    const b = baselineOf(n);
    if (b === undefined || b === n) return '';
    const d = median(got[n].map((m, r) => m.cpuMs - got[b][r].cpuMs));
    return `${d >= 0 ? '+' : ''}${d.toFixed(0)} ms`;
  };
  const rows = names.map((n) => {
    const cpu = got[n].map((m) => m.cpuMs);
    return [
      n,
      `${median(cpu).toFixed(0)} ms`,
      `${Math.min(...cpu).toFixed(0)}-${Math.max(...cpu).toFixed(0)} ms`,
      vsBaseline(n),
      String(median(got[n].map((m) => m.modules))),
    ];
  });
  console.log(table(['case', 'CLI CPU (median)', 'range', 'vs baseline (per round)', 'modules loaded'], rows));
  console.log('');
}
rmSync(tmp, { recursive: true, force: true });
