// test tier: slow (the compiled CLI on recorded and large inputs, ~32 s)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CpuProfile } from '../../lib/v8/index';
import { openProfile, readProfile } from '../../lib/formats/index';
import { aggregate } from '../../lib/query/aggregate';
import { NodeStatus } from '../../lib/profile/index';
import { TickList, samplesOf } from '../support/model';
import { startRecording } from '../../lib/record/start/index';
import { Worker } from 'node:worker_threads';
import { compileBuild, type Build } from '../support/build';

let build: Build;
let work: string;
let cpuprofile: string;

function cli(...args: string[]) {
  return cliEnv({}, ...args);
}

function cliEnv(env: NodeJS.ProcessEnv, ...args: string[]) {
  const run = spawnSync(process.execPath, [build.cli, ...args], {
    encoding: 'utf8',
    cwd: work,
    env: { ...process.env, ...env },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(() => {
  build = compileBuild();
  work = mkdtempSync(path.join(tmpdir(), 'profpack-cli-work-'));
  // A real V8 profile of the embedded workload, written by Node's own --cpu-prof.
  const run = spawnSync(
    process.execPath,
    [
      '--cpu-prof',
      '--cpu-prof-dir',
      work,
      '--cpu-prof-interval',
      '500',
      path.join(build.dist, 'demo', 'workload.js'),
      '400',
    ],
    { encoding: 'utf8' },
  );
  expect(run.status).toBe(0);
  cpuprofile = path.join(
    work,
    readdirSync(work).find((f) => f.endsWith('.cpuprofile'))!,
  );
});

afterAll(() => {
  build?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a real .cpuprofile from node --cpu-prof', () => {
  it('reads to one sample per V8 sample, stacks equal to the node path below (root)', () => {
    const raw = JSON.parse(readFileSync(cpuprofile, 'utf8')) as CpuProfile;
    const model = readProfile(readFileSync(cpuprofile));
    const records = [...samplesOf(model)];
    expect(records).toHaveLength(raw.samples.length);
    const parent = new Map<number, number>();
    for (const n of raw.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const byId = new Map(raw.nodes.map((n) => [n.id, n]));
    let t = raw.startTime;
    raw.samples.forEach((id, i) => {
      t += raw.timeDeltas[i]!;
      const names: string[] = [];
      for (let cur: number | undefined = id; cur !== undefined && parent.has(cur); cur = parent.get(cur))
        names.push(byId.get(cur)!.callFrame.functionName);
      const s = records[i]!;
      expect(Array.from(s.stack, (f) => model.frames[f]!.funcname)).toEqual(names);
      expect(s.timestampUs).toBe(BigInt(t));
    });
    expect(
      model.frames.some(
        (f) => f.funcname === 'parseFactor' && f.filename.endsWith('workload.js') && f.lineno !== null && f.lineno > 1,
      ),
    ).toBe(true);
  });

  it('converts to pprof, speedscope and collapsed, and top agrees on all of them', () => {
    // The .cpuprofile's default type is wall time (each sample weighs its gap); every output keeps it.
    const expected = aggregate(readProfile(readFileSync(cpuprofile)), { sort: 'total', limit: 10 }).rows.map((r) => [
      r.funcname,
      r.self,
      r.total,
    ]);
    for (const out of ['p.pb.gz', 'p.speedscope.json', 'p.collapsed', 'p2.cpuprofile']) {
      const r = cli('convert', cpuprofile, '-o', out);
      expect(r.stderr).toMatch(/samples \(samples\/count, wall\/nanoseconds\)\n$/);
      expect(r.code).toBe(0);
      const src = openProfile(path.join(work, out));
      const rows = aggregate(src, { sort: 'total', limit: 10 }).rows.map((row) => [row.funcname, row.self, row.total]);
      // collapsed keeps function + file + line labels only: same counts.
      expect(rows).toEqual(expected);
      const top = cli('top', out, '--total', '-n', '10', '--json');
      expect(top.code).toBe(0);
      expect(
        (JSON.parse(top.stdout) as { rows: { funcname: string; self: number; total: number }[] }).rows.map((row) => [
          row.funcname,
          row.self,
          row.total,
        ]),
      ).toEqual(expected);
    }
  });

  it('top prints a table, filters by status and window', () => {
    const all = cli('top', cpuprofile);
    expect(all.code).toBe(0);
    expect(all.stdout.split('\n')[0]).toMatch(/^\s*self\s+self%\s+total\s+total%\s+function$/);
    const idle = JSON.parse(cli('top', cpuprofile, '--status', 'idle', '--json').stdout) as {
      samples: number;
      rows: { funcname: string }[];
    };
    for (const row of idle.rows) expect(['(idle)']).toContain(row.funcname);
    const early = JSON.parse(cli('top', cpuprofile, '--from', '0', '--to', '50', '--json').stdout) as {
      samples: number;
      scanned: number;
    };
    expect(early.samples).toBeLessThan(early.scanned);
  });
});

describe('progress', () => {
  it('draws a progress bar on stderr for inputs over 10 MB, none for small ones', () => {
    const lines: string[] = [];
    for (let i = 0; i < 130_000; i++)
      lines.push(
        `main (app.js:1);handler${i % 5000} (routes/handlers.js:${i % 700});render (views/template.js:${i}) 1`,
      );
    const big = path.join(work, 'big.collapsed');
    writeFileSync(big, lines.join('\n') + '\n');
    const r = cliEnv({ PROFPACK_PROGRESS: '1' }, 'convert', big, '-o', 'big.pb.gz');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/converting \[#+\] 100% 130,000\/130,000 samples/);
    const small = cliEnv({ PROFPACK_PROGRESS: '1' }, 'convert', cpuprofile, '-o', 'small.pb.gz');
    expect(small.stderr).not.toContain('converting [');
  });
});

describe('CLI errors', () => {
  it('bad input: exit 2, one line naming the ProfpackError code, no stack trace', () => {
    writeFileSync(path.join(work, 'garbage.bin'), 'this is not a profile\n');
    for (const args of [
      ['top', 'garbage.bin'],
      ['convert', 'garbage.bin', '-o', 'x.pb.gz'],
      ['top', 'missing-file.tach'],
    ]) {
      const r = cli(...args);
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(cli('top', 'garbage.bin').stderr).toMatch(/^profpack: ERR_CONVERT_UNKNOWN_FORMAT: /);
    writeFileSync(path.join(work, 'broken.cpuprofile'), '{"nodes": [');
    expect(cli('top', 'broken.cpuprofile').stderr).toMatch(/^profpack: ERR_CONVERT_BAD_INPUT: /);
  });

  it('usage errors exit 2; --help exits 0 for every command', () => {
    expect(cli('convert', cpuprofile, '--to', 'bogus', '-o', 'x').code).toBe(2);
    expect(cli('top', cpuprofile, '--by', 'planet').code).toBe(2);
    expect(cli('convert', cpuprofile, '-o', 'x.unknown').code).toBe(2);
    for (const command of ['convert', 'top', 'record']) {
      const r = cli(command, '--help');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: profpack ${command}`);
    }
  });
});

describe('recording worker threads', () => {
  it('a worker running the agent is written as its own thread, with its own stacks', async () => {
    const sink = new TickList();
    const channel = `profpack-test-${process.pid}`;
    const recording = startRecording({ sink, workers: true, channel, harvestMs: 50, handleExit: false });
    const agent = JSON.stringify(path.join(build.dist, 'record', 'index.js'));
    const code = [
      `require(${agent}).startWorkerAgent({ channel: ${JSON.stringify(channel)}, harvestMs: 50, intervalUs: 1000 });`,
      // CPU time, not wall time: the floor below holds on a loaded machine.
      'function profpackWorkerSpin(ms) { const end = process.cpuUsage().user + ms * 1000; let x = 0; while (process.cpuUsage().user < end) for (let i = 0; i < 1000; i++) x += Math.sqrt(x + i); return x; }',
      'profpackWorkerSpin(300);',
    ].join('\n');
    const worker = new Worker(code, { eval: true });
    const workerThreadId = BigInt(worker.threadId);
    await new Promise((resolve) => worker.on('exit', resolve));
    // The worker posts its last chunk on exit; BroadcastChannel delivers it on a later turn.
    for (let i = 0; i < 50 && !sink.sampleList.some((s) => s.threadId === workerThreadId); i++)
      await new Promise((r) => setTimeout(r, 20));
    const summary = recording.stop();
    expect(summary.threads).toBe(2);
    // Every frame of the function: V8's hot lines make the leaf one frame per line.
    const spin = new Set(sink.frames.flatMap((f, k) => (f.funcname === 'profpackWorkerSpin' ? [k] : [])));
    expect(spin.size).toBeGreaterThan(0);
    const inWorker = sink.sampleList.filter((s) => s.threadId === workerThreadId);
    expect(inWorker.filter((s) => Array.from(s.stack).some((f) => spin.has(f))).length).toBeGreaterThan(20);
    for (const s of inWorker) expect(s.status & NodeStatus.MainThread).toBe(0);
    for (const s of sink.sampleList.filter((x) => x.threadId === 0n)) {
      expect(s.status & NodeStatus.MainThread).toBe(NodeStatus.MainThread);
      expect(Array.from(s.stack).some((f) => spin.has(f))).toBe(false);
    }
  });
});
