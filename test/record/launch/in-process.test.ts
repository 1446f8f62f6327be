// test tier: slow (a dozen recordings of small programs, ~30 s)
/**
 * `profpack record --inline -- node script.js` runs the script in record's own process (lib/record/launch/
 * in-process.ts). Judged by the program's own truth: the pid it prints is record's (no second Node), its argv,
 * require.main, stdout, exit code, uncaught exception and signal are what plain `node script.js` gives, and the file
 * read back holds its known work (a named busy function's samples against the CPU time it measured itself, a known
 * live set on both heap samplers). Node flags before the script send it to a process of its own, as before.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHeapTrace, ProfileReader } from '../../../lib/tachyon/index';
import { repoRoot } from '../../support/environment';
import { childOutput, strayChildren } from '../../support/child';
import { scratchDir } from '../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-record-in-process-');
const stray = strayChildren();

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
}

/** `profpack record --inline [flags] -o OUT -- node ARGS` and the same program under plain node. */
function recordAndBare(
  out: string,
  flags: string[],
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { rec: SpawnSyncReturns<string>; bare: SpawnSyncReturns<string> } {
  const options = { encoding: 'utf8' as const, cwd: dir, env: { ...process.env, ...env }, timeout: 120_000 };
  const rec = spawnSync(process.execPath, [cli, 'record', '--inline', ...flags, '-o', out, '--', 'node', ...args], {
    ...options,
    env: { ...options.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  const bare = spawnSync(process.execPath, args, options);
  return { rec, bare };
}

/** The program's truth: one JSON line on stdout. */
const truthOf = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

/** Each sample's frames (innermost first) by name and file, and the file's sampling interval. */
function samplesOf(file: string): { stacks: { funcname: string; filename: string }[][]; intervalUs: number } {
  const reader = ProfileReader.open(file);
  try {
    const frames = reader.frames;
    const stacks = [...reader.samples()].map((s) =>
      s.stack.map((k) => ({ funcname: frames[k]?.funcname ?? '', filename: frames[k]?.filename ?? '' })),
    );
    return { stacks, intervalUs: Number(reader.info.sampleIntervalUs) };
  } finally {
    reader.close();
  }
}

// Busy until it has had BUSY_US of CPU (however loaded the machine), measured by the program itself.
const BUSY_US = 400_000;
const busyBody =
  `function busyLoop() { const t0 = process.cpuUsage(); let x = 0;\n` +
  `  while (process.cpuUsage(t0).user < ${BUSY_US}) for (let i = 0; i < 2e5; i++) x += i % 7;\n` +
  `  const u = process.cpuUsage(t0); return { x, cpuUs: u.user + u.system }; }\n`;

describe('record --inline runs node script.js in its own process', () => {
  it('a CommonJS program: one process, its argv, require.main, stdout, and its busy function in the file', () => {
    const app = script(
      'busy.cjs',
      busyBody +
        'const exitCodeAtStart = process.exitCode;\nconst { cpuUs } = busyLoop();\n' +
        'console.log(JSON.stringify({ pid: process.pid, argv: process.argv, main: require.main === module, ' +
        'exitCodeAtStart: exitCodeAtStart ?? null, cpuUs }));\n',
    );
    const out = path.join(dir, 'busy.tach');
    const { rec, bare } = recordAndBare(out, [], [app, 'alpha', '--beta']);
    expect(rec.status, rec.stderr).toBe(0);
    const truth = truthOf(rec.stdout);
    // One Node process: the program's pid is record's.
    expect(truth.pid).toBe(rec.pid);
    expect({ ...truth, pid: 0, cpuUs: 0 }).toEqual({ ...truthOf(bare.stdout), pid: 0, cpuUs: 0 });
    expect(truth.argv).toEqual([process.execPath, app, 'alpha', '--beta']);
    expect(truth.main).toBe(true);
    expect(rec.stdout.trim().split('\n')).toHaveLength(1);
    expect(rec.stderr).toMatch(/^profpack: wrote .*busy\.tach: [\d,]+ samples, 1 thread \([\d,]+ bytes\)\n$/);

    const { stacks, intervalUs } = samplesOf(out);
    const busy = stacks.filter((s) => s.some((f) => f.funcname === 'busyLoop' && f.filename === app)).length;
    // V8 samples the thread when it runs: judged against the CPU time the loop measured, a fifth of the ideal
    // count is a safe floor on a loaded machine, and it is most of the program's samples.
    expect(busy).toBeGreaterThan((truth.cpuUs as number) / intervalUs / 5);
    expect(busy).toBeGreaterThan(stacks.length / 2);
    // The CLI's modules ran before the sampler started, and returned: none of their frames is in the profile.
    const cliFrames = stacks.flat().filter((f) => /[/\\](lib|dist)[/\\]cli[/\\]|commander/.test(f.filename));
    expect(cliFrames).toEqual([]);
  });

  it('an ES module with top-level await: its URL is argv[1], its exit code is kept', () => {
    const app = script(
      'esm.mjs',
      "import { fileURLToPath } from 'node:url';\n" +
        'await new Promise((resolve) => setTimeout(resolve, 20));\n' +
        'const self = fileURLToPath(import.meta.url) === process.argv[1];\n' +
        'console.log(JSON.stringify({ pid: process.pid, self, args: process.argv.slice(2), cjs: typeof require }));\n' +
        'process.exitCode = 4;\n',
    );
    const { rec, bare } = recordAndBare(path.join(dir, 'esm.tach'), [], [app, 'x']);
    expect(rec.status, rec.stderr).toBe(4);
    expect(bare.status).toBe(4);
    expect(truthOf(rec.stdout)).toEqual({ ...truthOf(bare.stdout), pid: rec.pid });
    expect(truthOf(rec.stdout)).toMatchObject({ self: true, args: ['x'], cjs: 'undefined' });
    expect(rec.stderr).toMatch(/profpack: wrote .*esm\.tach/);
  });

  it('a throwing program: Node reports its error and it exits 1, the file final', () => {
    const app = script('throws.js', "function boom() { throw new Error('kaboom'); }\nboom();\n");
    const out = path.join(dir, 'throws.tach');
    const { rec, bare } = recordAndBare(out, [], [app]);
    expect([rec.status, bare.status]).toEqual([1, 1]);
    // Node's own report of the uncaught error, up to its stack's last frames (Node's runner is called differently).
    const report = bare.stderr.slice(0, bare.stderr.indexOf('    at Module._load'));
    // Node reports it after the process's 'exit' listeners, where record's summary is said: that comes first.
    const summary = /^profpack: wrote .*throws\.tach: [\d,]+ samples?, 1 thread \([\d,]+ bytes\)\n/;
    expect(rec.stderr).toMatch(summary);
    expect(rec.stderr.replace(summary, '').startsWith(report), rec.stderr).toBe(true);
    expect(fs.existsSync(`${out}.journal`)).toBe(false);
    // Finalized: it opens as a whole file.
    ProfileReader.open(out).close();
  });

  it('process.exit(3) from a timer: exit 3, summary printed, the file final', () => {
    const app = script('exits.js', busyBody + 'setTimeout(() => { busyLoop(); process.exit(3); }, 5);\n');
    const out = path.join(dir, 'exits.tach');
    const { rec } = recordAndBare(out, [], [app]);
    expect(rec.status, rec.stderr).toBe(3);
    expect(rec.stderr).toMatch(/profpack: wrote .*exits\.tach/);
    expect(fs.existsSync(`${out}.journal`)).toBe(false);
    expect(samplesOf(out).stacks.some((s) => s.some((f) => f.funcname === 'busyLoop'))).toBe(true);
  });

  it('SIGTERM it does not handle: the process ends by the signal, after the file is finalized', () => {
    const app = script(
      'term.js',
      busyBody + "busyLoop();\nprocess.kill(process.pid, 'SIGTERM');\nsetTimeout(() => {}, 5000);\n",
    );
    const out = path.join(dir, 'term.tach');
    const { rec, bare } = recordAndBare(out, [], [app]);
    expect([rec.signal, bare.signal]).toEqual(['SIGTERM', 'SIGTERM']);
    expect(rec.stderr).toMatch(/profpack: wrote .*term\.tach/);
    expect(samplesOf(out).stacks.some((s) => s.some((f) => f.funcname === 'busyLoop'))).toBe(true);
  });

  it('node flags before the script: the program runs in a process of its own, with one line saying why', () => {
    const app = script('pid.js', 'console.log(JSON.stringify({ pid: process.pid, gc: typeof gc }));\n');
    const { rec } = recordAndBare(path.join(dir, 'flags.tach'), [], ['--expose-gc', app]);
    expect(rec.status, rec.stderr).toBe(0);
    const truth = truthOf(rec.stdout);
    expect(truth.gc).toBe('function');
    expect(truth.pid).not.toBe(rec.pid);
    expect(rec.stderr).toMatch(/^profpack: --inline: the program runs in a Node process of its own: node flags/);
    expect(rec.stderr).toMatch(/profpack: wrote .*flags\.tach/);
  });

  it('a recording that cannot start (its file cannot be made): one coded line, exit 2, the program not run', () => {
    const app = script('never.js', "console.log('ran');\n");
    const { rec } = recordAndBare(path.join(dir, 'missing', 'x.tach'), [], [app]);
    expect(rec.status).toBe(2);
    expect(rec.stdout).toBe('');
    expect(rec.stderr).toMatch(/^profpack: ERR_TACHYON_WRITE_IO: .*missing[/\\]x\.tach: ENOENT/);
  });

  // The known live set (as test/fixtures/heap/known-live-recorded.js, whose --expose-gc would send it to a process
  // of its own): the program takes gc from V8 itself.
  const INTERVAL = 4096;
  const live = script(
    'live.js',
    "const v8 = require('node:v8');\nv8.setFlagsFromString('--expose-gc');\n" +
      "const gc = require('node:vm').runInNewContext('gc');\nglobalThis.kept = [];\n" +
      'function keepArrays() { for (let i = 0; i < 4000; i++) globalThis.kept.push(new Array(320).fill(i + 0.5)); }\n' +
      'gc();\nconst before = v8.getHeapStatistics().used_heap_size;\nkeepArrays();\ngc();\n' +
      'console.log(JSON.stringify({ pid: process.pid, truthBytes: v8.getHeapStatistics().used_heap_size - before }));\n' +
      'setTimeout(() => {}, 400);\n',
  );
  it.each(['native', 'inspector'])('--heap: the known live set at its site, %s sampler', (sampler) => {
    const out = path.join(dir, `live-${sampler}.tach`);
    const flags = ['--heap', '--heap-interval', String(INTERVAL)];
    const { rec } = recordAndBare(out, flags, [live], { PROFPACK_HEAP_SAMPLER: sampler });
    expect(rec.status, rec.stderr).toBe(0);
    const { pid, truthBytes } = truthOf(rec.stdout) as { pid: number; truthBytes: number };
    expect(pid).toBe(rec.pid);
    expect(rec.stderr).toMatch(/events written in the program/);
    const top = spawnSync(process.execPath, [cli, 'top', out, '--sample-type', 'inuse_space', '--json', '-n', '50'], {
      encoding: 'utf8',
    });
    expect(top.status, top.stderr).toBe(0);
    const rows = (JSON.parse(top.stdout) as { rows: { funcname: string; self: number }[] }).rows;
    const kept = rows.find((r) => r.funcname === 'keepArrays');
    expect(kept, top.stdout.slice(0, 2000)).toBeDefined();
    // A count of V8's samples at INTERVAL bytes: five standard deviations, and V8's own rounding of counts.
    const ratio = kept!.self / truthBytes;
    expect({ sampler, ratio, ok: Math.abs(ratio - 1) < 5 / Math.sqrt(truthBytes / INTERVAL) + 0.06 }).toMatchObject({
      ok: true,
    });
  });

  it('a SIGKILL is of record itself: nothing reports, the journal is kept, recover gives back what was flushed', async () => {
    const app = script(
      'hoard.js',
      "console.log('ready ' + process.pid);\nglobalThis.kept = [];\n" +
        'function hoardArrays() { for (let i = 0; i < 50; i++) kept.push(new Array(2000).fill(i)); }\n' +
        "let loops = 0;\n(function loop() { hoardArrays(); if (++loops === 40) console.log('enough');\n" +
        '  if (kept.length > 20000) kept.length = 0; setTimeout(loop, 20); })();\n',
    );
    const out = path.join(dir, 'killed.tach');
    const args = [cli, 'record', '--inline', '--heap', '--no-cpu', '--heap-interval', '32k', '--heap-polls'];
    args.push('harvest', '--harvest-ms', '200', '--flush-ms', '200', '-o', out, '--', process.execPath, app);
    const record = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    stray.add(record.pid!);
    const output = childOutput(record);
    const pid = Number((await output.when(/ready (\d+)/, 20_000))[1]);
    expect(pid).toBe(record.pid);
    // 2,000 arrays of 16 KB hoarded (~1,000 sampled at 32 KiB) however loaded the machine, then several flushes
    // (200 ms) reach the journal.
    await output.when(/enough/, 90_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    process.kill(pid, 'SIGKILL');
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => record.once('exit', (_c, s) => resolve(s)));
    expect(signal).toBe('SIGKILL');
    expect(output.text()).not.toMatch(/profpack:/);
    expect(fs.existsSync(`${out}.journal`)).toBe(true);
    const fixed = path.join(dir, 'recovered.tach');
    const rec = spawnSync(process.execPath, [cli, 'recover', out, fixed], { encoding: 'utf8' });
    expect(rec.status, rec.stderr).toBe(0);
    let allocations = 0;
    for (const b of openHeapTrace(fixed)!.events()) if (b.kind === 'alloc') allocations += b.ordinals.length;
    // At least 40 loops of ~800 KB at 32 KiB: thousands sampled; what was flushed is most of them.
    expect(allocations).toBeGreaterThan(100);
  });
});
