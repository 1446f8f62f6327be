/**
 * `profpack record` under faults: killed by SIGKILL it loses at most about
 * one flush interval (`profpack recover` rebuilds the file from its journal)
 * and its target outlives it but stops sampling; a target that ignores
 * SIGTERM gets SIGKILL after --kill-after.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileReader, recover } from '../../../lib/tachyon/index';
import { repoRoot } from '../../support/environment';
import { childOutput, isAlive, sleep, strayChildren, type ChildOutput } from '../../support/child';
import { scratchDir } from '../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-record-faults-');
const stray = strayChildren();

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
}

/** `profpack record --out <name>.tach <flags> -- node <name>.js` with `body` as the script, once it prints "ready <pid>". */
async function recordTarget(
  name: string,
  body: string,
  flags: string[],
): Promise<{ out: string; record: ChildProcess; io: ChildOutput; pid: number }> {
  const target = script(`${name}.js`, body);
  const out = path.join(dir, `${name}.tach`);
  const record = spawn(process.execPath, [cli, 'record', '--out', out, ...flags, '--', process.execPath, target], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const io = childOutput(record);
  const pid = Number((await io.when(/ready (\d+)/, 20_000))[1]);
  stray.add(pid);
  return { out, record, io, pid };
}

describe('profpack record under faults', () => {
  it('SIGKILLed, it loses at most about one flush interval; its target outlives it and stops sampling', async () => {
    const { out, record, io, pid } = await recordTarget(
      'killed',
      "console.log('ready ' + process.pid);\nconst end = Date.now() + 60000;\nfunction spin() { let x = 0; for (let i = 0; i < 1e6; i++) x += i; return x; }\n(function loop() { spin(); if (Date.now() < end) setImmediate(loop); })();\n",
      ['--harvest-ms', '200', '--flush-ms', '200'],
    );
    await sleep(2000);
    const killedAtUs = process.hrtime.bigint() / 1000n;
    record.kill('SIGKILL');
    await new Promise((resolve) => record.once('exit', resolve));
    // The target notices at its next harvest that nobody writes its samples any more.
    await io.when(/recording's writer is gone/, 10_000);
    expect(isAlive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');

    expect(() => ProfileReader.open(out)).toThrow();
    const fixed = path.join(dir, 'killed-recovered.tach');
    const result = recover(out, fixed);
    expect(result.source).toBe('journal');
    expect(result.samples).toBeGreaterThan(100);
    const reader = ProfileReader.open(fixed);
    let last = 0n;
    for (const s of reader.samples()) if (s.timestampUs > last) last = s.timestampUs;
    reader.close();
    // One harvest (200 ms) and one flush (200 ms) at most, with room for a loaded machine.
    expect(killedAtUs - last).toBeLessThan(1_500_000n);
  });

  it('a target that ignores SIGTERM gets SIGKILL after --kill-after; the file is finalized', async () => {
    const { out, record, io, pid } = await recordTarget(
      'stubborn',
      "process.on('SIGTERM', () => console.log('ignoring SIGTERM'));\nconsole.log('ready ' + process.pid);\nsetInterval(() => { let x = 0; for (let i = 0; i < 1e5; i++) x += i; }, 5);\n",
      ['--harvest-ms', '200', '--kill-after', '1'],
    );
    await sleep(500);
    const sentAt = Date.now();
    const exited = new Promise<number | null>((resolve) => record.once('exit', (code) => resolve(code)));
    record.kill('SIGTERM');
    const timeout = sleep(15_000).then(() => 'timeout' as const);
    const code = await Promise.race([exited, timeout]);
    if (code === 'timeout') record.kill('SIGKILL');
    expect(code).toBe(137);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(900);
    expect(io.text()).toContain('ignoring SIGTERM');
    expect(isAlive(pid)).toBe(false);
    const reader = ProfileReader.open(out);
    expect([...reader.samples()].length).toBeGreaterThan(0);
    reader.close();
  });

  it('bad --kill-after and --flush-ms are usage errors (exit 2, one line)', () => {
    for (const flag of [
      ['--kill-after', 'soon'],
      ['--flush-ms', '0'],
    ]) {
      const run = spawnSync(
        process.execPath,
        [cli, 'record', '--out', path.join(dir, 'x.tach'), ...flag, '--', process.execPath, '-e', '0'],
        { encoding: 'utf8' },
      );
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/^profpack: ERR_INVALID_ARGUMENT: .*\n$/);
    }
  });
});
