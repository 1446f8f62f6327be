/**
 * Issue 37's Buffer/ArrayBuffer leak end to end: a program holding ~50 MB in Buffer.alloc and ArrayBuffer
 * backing stores (outside V8's sampled heap) recorded with the heap, then asked through the compiled CLI. Judged
 * against what the program reports it held, never against time: it runs a fixed number of steps.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { runRecorded as RunRecorded } from '../../lib/record/targets/index';
import { buildForTests } from '../support/build';

const fixtures = path.join(__dirname, '..', 'fixtures', 'heap');
const { build, dir } = buildForTests('profpack-external-');

function cli(...args: string[]): string {
  const r = spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`profpack ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

interface ExternalJson {
  threadId: string;
  samples: number;
  endBytes: number;
  arrayBuffersEndBytes: number;
  growthBytesPerMin: number;
  fit: number;
  suspect: boolean;
}

describe('a Buffer/ArrayBuffer leak', () => {
  const input = path.join(dir, 'buffers.tach');
  let did: { steps: number; heldBytes: number; tempBytes: number };
  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- compiled at run time into a temporary folder
    const { runRecorded } = require(path.join(build.dist, 'record', 'index.js')) as { runRecorded: typeof RunRecorded };
    const report = path.join(dir, 'buffers.json');
    const { code } = await runRecorded([process.execPath, path.join(fixtures, 'buffer-leak.js'), report, '100', '20'], {
      out: input,
      heap: { intervalBytes: 65536 },
      harvestMs: 100,
      stdio: 'pipe',
    });
    expect(code).toBe(0);
    did = JSON.parse(fs.readFileSync(report, 'utf8'));
  }, 180_000);

  it('leaks shows the external line growing, a suspect, its end within 0.7-1.3x of what the program held', () => {
    const report = JSON.parse(cli('leaks', input, '--json')) as { external: ExternalJson[] };
    expect(report.external).toHaveLength(1);
    const [main] = report.external;
    expect(main).toMatchObject({ threadId: '0', suspect: true });
    expect(main!.samples).toBeGreaterThanOrEqual(5);
    expect(main!.growthBytesPerMin).toBeGreaterThan(0);
    const ratio = main!.arrayBuffersEndBytes / did.heldBytes;
    expect({ ratio, ok: ratio > 0.7 && ratio < 1.3 }).toMatchObject({ ok: true });
    expect(cli('leaks', input)).toMatch(/^external \(thread 0\): .* growing, a suspect/m);
  });

  it('info and the heap page show it', () => {
    expect(cli('info', input)).toMatch(/external \(thread 0\): [\d.]+MB at the end/);
    const page = path.join(dir, 'buffers.html');
    cli('flame', input, '--heap', '-o', page);
    expect(fs.readFileSync(page, 'utf8')).toMatch(/external \(Buffers, ArrayBuffers\): [\d.]+MB at the end/);
  });
});
