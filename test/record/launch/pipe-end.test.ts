/**
 * When `profpack record` stops reading the recording pipe: at the recorder's
 * 'end' (the last thing it sends) or the pipe's close, not after a fixed
 * grace. A grandchild that inherits the pipe and outlives the target keeps it
 * open: a target that ends normally is finalized whole at once (its 'end'
 * came), one that is killed is finalized with what came once the pipe has
 * been silent for a while. Either way `profpack record` returns while the
 * grandchild still holds the pipe. Runs the compiled CLI (dist/, `npm run compile`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileReader } from '../../../lib/tachyon/index';
import { SLOWDOWN, repoRoot } from '../../support/environment';
import { isAlive, strayChildren } from '../../support/child';
import { scratchDir } from '../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-pipe-end-');
const grandchildren = strayChildren();

/** A target that starts a grandchild holding fd 3 (the pipe) for 10 minutes, runs ~0.3 s of CPU, then `ends`. */
function target(name: string, ends: string): string {
  const file = path.join(dir, `${name}.js`);
  fs.writeFileSync(
    file,
    `const { spawn } = require('node:child_process');
const fs = require('node:fs');
const g = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'],
  { stdio: ['ignore', 'ignore', 'ignore', 3], detached: true, env: {} });
g.unref();
fs.writeFileSync(${JSON.stringify(path.join(dir, `${name}.pid`))}, String(g.pid));
const start = process.cpuUsage();
let x = 0;
while (process.cpuUsage(start).user < 300000) x += Math.sqrt(x + 1);
${ends}
`,
  );
  return file;
}

function record(name: string, ends: string) {
  const out = path.join(dir, `${name}.tach`);
  // --no-children: the grandchild is not recorded (it would hold its own writer, not the pipe this is about).
  const run = spawnSync(
    process.execPath,
    [cli, 'record', '--no-children', '-o', out, '--', process.execPath, target(name, ends)],
    {
      encoding: 'utf8',
      timeout: 120_000 * SLOWDOWN,
    },
  );
  const pid = Number(fs.readFileSync(path.join(dir, `${name}.pid`), 'utf8'));
  grandchildren.add(pid);
  return { run, out, grandchildAlive: isAlive(pid) };
}

const samples = (file: string): number => {
  const reader = ProfileReader.open(file);
  const n = Number(reader.info.sampleCount);
  reader.close();
  return n;
};

describe('profpack record stops reading the pipe at the recording end, not when the pipe closes', () => {
  it("a target that exits: finalized whole at its 'end', while the grandchild still holds the pipe", () => {
    const { run, out, grandchildAlive } = record('exits', 'process.exitCode = 0;');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^profpack: wrote .*exits\.tach: [\d,]+ samples, 1 thread/m);
    expect(run.stderr).not.toMatch(/ended without stopping/);
    expect(grandchildAlive).toBe(true);
    expect(samples(out)).toBeGreaterThan(0);
  });

  it('a target SIGKILLed: finalized with what came once the pipe is silent, the grandchild still alive', () => {
    // Harvests every 1 s by default: the ~0.3 s of CPU may end before the first; the file is still finalized.
    const { run, out, grandchildAlive } = record('killed', "process.kill(process.pid, 'SIGKILL');");
    expect(run.status, run.stderr).toBe(137);
    expect(run.stderr).toMatch(/the target ended without stopping its recording \(SIGKILL\)/);
    expect(grandchildAlive).toBe(true);
    expect(samples(out)).toBeGreaterThanOrEqual(0);
  });
});
