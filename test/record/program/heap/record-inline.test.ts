// test tier: slow (three recordings of real programs and a recover, ~35 s)
/**
 * `profpack record --inline` (issue 37, item "Cost"): the file is written in the recorded program by
 * startRecording's inline writer, and `record`'s own process loads no writer. The heap it writes reads as the
 * program's known live set (the truth the program measures itself, as test/memory/estimate-recorded.test.ts), on
 * both heap samplers; a SIGKILLed program's file is not lost silently: `record` says to recover it, and `recover`
 * gives back the heap events flushed before the kill.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHeapTrace } from '../../../../lib/tachyon/index';
import { repoRoot } from '../../../support/environment';
import { childOutput, sleep, strayChildren } from '../../../support/child';
import { scratchDir } from '../../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-record-inline-');
const fixture = path.join(repoRoot, 'test', 'fixtures', 'heap', 'known-live-recorded.js');
const stray = strayChildren();
const INTERVAL = 4096;
const V8_COUNT_ROUNDING = 0.06;

const run = (args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, args, { encoding: 'utf8', cwd: dir, env: { ...process.env, ...env }, timeout: 120_000 });

describe('profpack record --inline', () => {
  it.each(['native', 'inspector'])('writes the heap in the program: the known live set, %s sampler', (sampler) => {
    const file = path.join(dir, `${sampler}.tach`);
    const truthFile = path.join(dir, `${sampler}.json`);
    // The CLI's own modules at its exit: with --inline none of the writer's.
    const modules = path.join(dir, `${sampler}-modules.json`);
    const dump = path.join(dir, 'dump-modules.cjs');
    fs.writeFileSync(
      dump,
      "process.on('exit', () => require('fs').writeFileSync(process.env.MODULES_OUT, " +
        'JSON.stringify(Object.keys(require.cache))));\n',
    );
    const args = ['--require', dump, cli, 'record', '--inline', '--heap', '--heap-interval', String(INTERVAL)];
    args.push('-o', file, '--', process.execPath, '--expose-gc', fixture, truthFile, '4000', '320');
    const rec = run(args, { PROFPACK_HEAP_SAMPLER: sampler, MODULES_OUT: modules });
    expect(rec.status, rec.stderr).toBe(0);
    expect(rec.stderr).toMatch(/events written in the program/);
    const loaded = JSON.parse(fs.readFileSync(modules, 'utf8')) as string[];
    expect(loaded.some((m) => m.includes(`${path.sep}cli${path.sep}`))).toBe(true);
    expect(loaded.filter((m) => /[/\\](writer|tachyon[/\\]write)[/\\]/.test(m))).toEqual([]);

    const { truthBytes } = JSON.parse(fs.readFileSync(truthFile, 'utf8')) as { truthBytes: number };
    const top = run([cli, 'top', file, '--sample-type', 'inuse_space', '--json', '-n', '50']);
    expect(top.status, top.stderr).toBe(0);
    const rows = (JSON.parse(top.stdout) as { rows: { funcname: string; self: number }[] }).rows;
    const kept = rows.find((r) => r.funcname === 'keepArrays');
    expect(kept, top.stdout.slice(0, 2000)).toBeDefined();
    const tolerance = 5 / Math.sqrt(truthBytes / INTERVAL) + V8_COUNT_ROUNDING;
    const ratio = kept!.self / truthBytes;
    expect({ sampler, ratio, ok: Math.abs(ratio - 1) < tolerance }).toMatchObject({ ok: true });
  });

  it('a SIGKILLed program: record says so and recover gives back the heap events flushed before', async () => {
    const target = path.join(dir, 'hoard.js');
    fs.writeFileSync(
      target,
      "console.log('ready ' + process.pid);\nglobalThis.kept = [];\n" +
        'function hoardArrays() { for (let i = 0; i < 50; i++) kept.push(new Array(2000).fill(i)); }\n' +
        '(function loop() { hoardArrays(); if (kept.length > 20000) kept.length = 0; setTimeout(loop, 20); })();\n',
    );
    const out = path.join(dir, 'killed.tach');
    const args = [cli, 'record', '--inline', '--heap', '--no-cpu', '--heap-interval', '32k', '--heap-polls'];
    // A node flag keeps the program in a process of its own (the mode this case is about: record outlives it).
    args.push('harvest', '--harvest-ms', '200', '--flush-ms', '200', '--out', out, '--', process.execPath);
    args.push('--no-deprecation', target);
    const record = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = childOutput(record);
    const pid = Number((await output.when(/ready (\d+)/, 20_000))[1]);
    stray.add(pid);
    await sleep(3000);
    process.kill(pid, 'SIGKILL');
    const code = await new Promise<number | null>((resolve) => record.once('exit', resolve));
    expect(code).toBe(137);
    expect(output.text()).toMatch(/ended without finalizing its file \(SIGKILL, --inline\).*profpack recover/);
    expect(fs.existsSync(`${out}.journal`)).toBe(true);

    const fixed = path.join(dir, 'recovered.tach');
    const rec = run([cli, 'recover', out, fixed]);
    expect(rec.status, rec.stderr).toBe(0);
    let allocations = 0;
    for (const b of openHeapTrace(fixed)!.events()) if (b.kind === 'alloc') allocations += b.ordinals.length;
    // ~100 KB of arrays every 20 ms for 3 s at 32 KiB: thousands sampled; what was flushed is most of them.
    expect(allocations).toBeGreaterThan(100);
  });
});
