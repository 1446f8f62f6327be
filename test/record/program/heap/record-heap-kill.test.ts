/**
 * `profpack record --heap` SIGKILLed (issue 27, docs/reliability.md): its
 * writer flushes the version-2 file and its journal every --flush-ms as a
 * CPU-only recording does, so `profpack recover` rebuilds the heap events of
 * the polls before the last flush, and `top --sample-type alloc_space` names
 * the allocating function.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHeapTrace, ProfileReader } from '../../../../lib/tachyon/index';
import { repoRoot } from '../../../support/environment';
import { childOutput, sleep, strayChildren } from '../../../support/child';
import { scratchDir } from '../../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-record-heap-kill-');
const stray = strayChildren();

describe('profpack record --heap under SIGKILL', () => {
  it('recover gives back the heap events before the last flush; top names the allocating function', async () => {
    const target = path.join(dir, 'hoard.js');
    fs.writeFileSync(
      target,
      "console.log('ready ' + process.pid);\nglobalThis.kept = [];\n" +
        'function hoardArrays() { for (let i = 0; i < 50; i++) kept.push(new Array(2000).fill(i)); }\n' +
        '(function loop() { hoardArrays(); if (kept.length > 20000) kept.length = 0; setTimeout(loop, 20); })();\n',
    );
    const out = path.join(dir, 'killed.tach');
    const record = spawn(
      process.execPath,
      [
        cli,
        'record',
        '--heap',
        '--heap-interval',
        '32k',
        // A poll at every harvest (paced polls may wait seconds): the kill then falls between polls.
        '--heap-polls',
        'harvest',
        '--out',
        out,
        '--harvest-ms',
        '200',
        '--flush-ms',
        '200',
        '--',
        process.execPath,
        target,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = Number((await childOutput(record).when(/ready (\d+)/, 20_000))[1]);
    stray.add(pid);
    await sleep(5000);
    // Heap event times are the target's monotonic clock plus its epoch offset, taken from its
    // performance.timeOrigin: that can stand some ms off this process's Date.now() (seen: 10 ms under load).
    const CLOCK_SKEW_US = 250_000;
    const killedAtUs = Date.now() * 1000;
    record.kill('SIGKILL');
    await new Promise((resolve) => record.once('exit', resolve));
    process.kill(pid, 'SIGKILL');
    expect(fs.existsSync(`${out}.journal`)).toBe(true);

    const fixed = path.join(dir, 'recovered.tach');
    const run = spawnSync(process.execPath, [cli, 'recover', out, fixed], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(ProfileReader.open(fixed).info.version).toBe(2);
    const trace = openHeapTrace(fixed)!;
    let allocations = 0;
    let firstUs = Infinity;
    let lastUs = 0;
    for (const b of trace.events()) {
      if (b.kind !== 'alloc') continue;
      allocations += b.ordinals.length;
      firstUs = Math.min(firstUs, b.timeUs);
      lastUs = Math.max(lastUs, b.timeUs);
    }
    expect(allocations).toBeGreaterThan(10);
    // One harvest (200 ms) and one flush (200 ms) at most, with room for a loaded machine.
    // Polls over seconds came back, the last within one harvest (200 ms) and one flush (200 ms) of the kill,
    // with room for a loaded machine (2 shared cores: a harvest of the heap profile can take a second there).
    expect(lastUs - firstUs).toBeGreaterThan(1_000_000);
    expect(lastUs).toBeLessThan(killedAtUs + CLOCK_SKEW_US);
    expect(killedAtUs - lastUs).toBeLessThan(3_500_000);
    const top = spawnSync(process.execPath, [cli, 'top', '--sample-type', 'alloc_space', '--json', fixed], {
      encoding: 'utf8',
    });
    expect(top.status).toBe(0);
    const rows = (JSON.parse(top.stdout) as { rows: { funcname: string }[] }).rows;
    expect(rows[0]!.funcname).toBe('hoardArrays');
  }, 60_000);
});
