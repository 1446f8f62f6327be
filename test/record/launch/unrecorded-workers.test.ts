/**
 * Worker threads `profpack record` does not record say so (issue 37): one warning line however many workers ran,
 * naming what went unrecorded (CPU, and the heap with --heap); none with --workers, whose agent samples both (a
 * worker whose heap sampler does not start is test/memory/worker-leak.test.ts's), nor when no worker ran.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/environment';
import { scratchDir } from '../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-unrecorded-workers-');

const program = path.join(dir, 'workers.js');
fs.writeFileSync(
  program,
  "const { Worker } = require('node:worker_threads');\n" +
    'const n = Number(process.argv[2]);\n' +
    'let left = n;\n' +
    'for (let k = 0; k < n; k++)\n' +
    "  new Worker('const a = []; for (let i = 0; i < 1e5; i++) a.push({ i });', { eval: true })\n" +
    "    .on('exit', () => { if (--left === 0) console.log('workers done'); });\n",
);

function warnings(flags: string[], workers: number): string[] {
  const out = path.join(dir, `w${flags.join('')}${workers}.tach`);
  const r = spawnSync(
    process.execPath,
    [cli, 'record', ...flags, '-o', out, '--', process.execPath, program, `${workers}`],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  expect(r.status).toBe(0);
  expect(r.stdout).toContain(workers > 0 ? 'workers done' : '');
  return r.stderr.split('\n').filter((l) => l.includes('worker thread'));
}

describe('record and worker threads', () => {
  it('without --workers: one line for two workers, CPU (and heap with --heap) unrecorded', () => {
    const cpu = warnings([], 2);
    expect(cpu).toHaveLength(1);
    expect(cpu[0]).toMatch(/^profpack: worker thread \d+ ran unrecorded \(CPU\): record with --workers/);
    expect(warnings(['--heap'], 2)).toEqual([
      expect.stringMatching(/ran unrecorded \(CPU and heap\): record with --workers to sample both$/),
    ]);
  });

  it('record --inline in its own process: the same one line, without a preload in the workers', () => {
    expect(warnings(['--inline'], 2)).toEqual([
      expect.stringMatching(/^profpack: worker thread \d+ ran unrecorded \(CPU\): record with --workers/),
    ]);
    expect(warnings(['--inline', '--heap'], 1)).toEqual([expect.stringMatching(/ran unrecorded \(CPU and heap\)/)]);
    expect(warnings(['--inline', '--heap'], 0)).toEqual([]);
  });

  it('with --workers: nothing to say, with --heap too; no worker, no line', () => {
    expect(warnings(['--workers'], 2)).toEqual([]);
    expect(warnings(['--workers', '--heap'], 2)).toEqual([]);
    expect(warnings(['--heap'], 0)).toEqual([]);
  });
});
