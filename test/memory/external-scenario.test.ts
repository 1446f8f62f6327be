// test tier: slow (a Buffer leak recorded on both samplers, then the CLI, ~36 s)
/**
 * Issue 37's Buffer/ArrayBuffer leak end to end: a program holding ~50 MB in Buffer.alloc and ArrayBuffer
 * backing stores (outside V8's sampled heap) recorded with the heap, then asked through the compiled CLI. Judged
 * against what the program reports it held, never against time: it runs a fixed number of steps.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { runRecorded as RunRecorded } from '../../lib/record/launch/index';
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

interface SuspectJson {
  funcname: string;
  external: boolean;
  liveBytes: number;
  growthBytesPerMin: number;
  leaf: string | null;
}

/**
 * The same program, its Buffer and ArrayBuffer stores sampled by the recorder (lib/record/program/heap/external.ts) on both
 * heap samplers: the function that holds them is the first suspect, an external site, within 0.7-1.3x of the bytes
 * the program says it kept; top, flame and info say the stores are external.
 */
describe.each(['native', 'inspector'] as const)(
  'Buffer and ArrayBuffer stores sampled (%s heap sampler)',
  (sampler) => {
    const input = path.join(dir, `buffers-${sampler}.tach`);
    let did: { steps: number; heldBytes: number; tempBytes: number };
    let elapsedMs = 0;
    beforeAll(async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- compiled at run time into a temporary folder
      const { runRecorded } = require(path.join(build.dist, 'record', 'index.js')) as {
        runRecorded: typeof RunRecorded;
      };
      const report = path.join(dir, `buffers-${sampler}.json`);
      const before = process.env.PROFPACK_HEAP_SAMPLER;
      process.env.PROFPACK_HEAP_SAMPLER = sampler;
      const started = Date.now();
      try {
        const { code } = await runRecorded(
          [process.execPath, path.join(fixtures, 'buffer-leak.js'), report, '100', '20'],
          { out: input, heap: { intervalBytes: 65536 }, harvestMs: 100, stdio: 'pipe' },
        );
        expect(code).toBe(0);
      } finally {
        if (before === undefined) delete process.env.PROFPACK_HEAP_SAMPLER;
        else process.env.PROFPACK_HEAP_SAMPLER = before;
      }
      elapsedMs = Date.now() - started;
      did = JSON.parse(fs.readFileSync(report, 'utf8'));
    }, 180_000);

    it('leaks names the Buffer-keeping function first, an external site, within 0.7-1.3x of the bytes it kept', () => {
      const report = JSON.parse(cli('leaks', input, '--json')) as { suspects: SuspectJson[] };
      const [first] = report.suspects;
      expect(first).toMatchObject({ funcname: 'holdBuffers', external: true });
      expect(first!.leaf).toMatch(/^\(external\) (Buffer\.alloc|new ArrayBuffer)$/);
      const ratio = first!.liveBytes / did.heldBytes;
      expect({ ratio, ok: ratio > 0.7 && ratio < 1.3 }).toMatchObject({ ok: true });
      // Growth: what it kept over the program's run (a floor: the recording spans more than the steps).
      expect(first!.growthBytesPerMin).toBeGreaterThan((did.heldBytes / elapsedMs) * 60_000 * 0.5);
      expect(cli('leaks', input)).toMatch(/holdBuffers .*\(allocated in \(external\) /);
    });

    it('top and the heap flame graph name the stores as external; info counts them', () => {
      const inuse = cli('top', input, '--sample-type', 'inuse_space');
      expect(inuse).toMatch(/\(external\) (Buffer\.alloc|new ArrayBuffer)/);
      expect(cli('top', input, '--sample-type', 'alloc_space')).toMatch(/\(external\) Buffer\.alloc/);
      const page = path.join(dir, `buffers-${sampler}.html`);
      cli('flame', input, '--heap', '-o', page);
      expect(fs.readFileSync(page, 'utf8')).toContain('(external) new ArrayBuffer');
      const counted = /of which external: ([\d,]+) sampled Buffer\/ArrayBuffer allocations/.exec(cli('info', input));
      expect(counted).not.toBeNull();
      // Two stores per step of 256 KiB each, at 64 KiB: nearly every one sampled (p = 0.98), the temporary ones too.
      const stores = (2 * did.steps + did.tempBytes / (256 << 10)) * (1 - Math.exp(-4));
      const n = Number(counted![1]!.replace(/,/g, ''));
      expect(n).toBeGreaterThan(stores * 0.8);
      expect(n).toBeLessThan(stores * 1.2);
    });
  },
);
