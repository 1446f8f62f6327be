// test tier: slow (an HTTP service recorded under load, ~25 s)
/**
 * The done-when's leak-and-garbage scenario in an HTTP service: a node:http
 * server whose request handler leaks and makes garbage, under a bounded local
 * load (a fixed number of requests sent from this test, one at a time),
 * recorded by the compiled `profpack record --heap --rotate` into a directory
 * and asked over that directory. Judged against what the service reports it
 * did, never against time.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildForTests } from '../support/build';

const REQUESTS = 200;
const fixture = path.join(__dirname, '..', 'fixtures', 'heap', 'http-leak-service.js');
const { build, dir } = buildForTests('profpack-heaphttp-');
const rotated = path.join(dir, 'rotated');
let did: { requests: number; leakedBytes: number; garbageBytes: number };

function get(port: number, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: url, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

/** The port the service wrote once it listened (or the recorder's failure, if it exited first). */
async function portOf(portFile: string, exited: () => string | undefined): Promise<number> {
  for (;;) {
    const failure = exited();
    if (failure !== undefined) throw new Error(failure);
    if (fs.existsSync(portFile)) {
      const text = fs.readFileSync(portFile, 'utf8');
      if (text !== '') return Number(text);
    }
    await sleep(50);
  }
}

beforeAll(async () => {
  const portFile = path.join(dir, 'port');
  const report = path.join(dir, 'report.json');
  // Heap polls at every harvest: paced polls (each a full GC) would leave the garbage, which lives for a few
  // requests, mostly stackless (docs/memory.md, "Paced polls, or a poll at every harvest").
  const recorder = spawn(
    process.execPath,
    [
      build.cli,
      'record',
      '--heap',
      '--heap-interval',
      '4096',
      '--heap-polls',
      'harvest',
      '--harvest-ms',
      '50',
      '--rotate',
      '700ms',
      '--dir',
      rotated,
      '--no-children',
      '--',
      process.execPath,
      '--expose-gc',
      fixture,
      portFile,
      report,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  recorder.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  recorder.stdout.resume();
  const exit = new Promise<number | null>((resolve) => recorder.on('close', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exit.then((code) => (exitCode = code));
  const port = await portOf(portFile, () =>
    exitCode === undefined ? undefined : `profpack record exited (${exitCode}) before listening: ${stderr}`,
  );
  // The bounded load: one request at a time, a little apart so the recording spans several rotated files.
  for (let i = 0; i < REQUESTS; i++) {
    await get(port, '/');
    await sleep(10);
  }
  await get(port, '/quit');
  expect({ code: await exit, stderr }).toMatchObject({ code: 0 });
  did = JSON.parse(fs.readFileSync(report, 'utf8'));
  expect(did.requests).toBe(REQUESTS);
}, 240_000);

function cli(...args: string[]): string {
  const r = spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`profpack ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

interface TopJson {
  rows: { funcname: string; self: number }[];
}

const top = (...flags: string[]) => JSON.parse(cli('top', rotated, '--json', ...flags)) as TopJson;
const names = (t: TopJson) => t.rows.map((r) => r.funcname);

describe('a planted leak beside a garbage maker in an HTTP service, rotated files read over the directory', () => {
  it('was recorded into several files', () => {
    expect(fs.readdirSync(rotated).filter((f) => f.endsWith('.tach')).length).toBeGreaterThan(1);
  });

  it('leak first by inuse_space; garbage maker first by alloc_space, not in the top three in use', () => {
    const inuse = top('--sample-type', 'inuse_space', '-n', '3');
    expect(names(inuse)[0]).toBe('leakMemory');
    expect(names(inuse)).not.toContain('makeGarbage');
    const alloc = top('--sample-type', 'alloc_space', '-n', '1');
    expect(names(alloc)).toEqual(['makeGarbage']);
    // The scaled estimates against what the service did, loosely (a scaling bug falls far outside):
    // ~125 samples of the leak at 4 KiB, ~1,250 of the garbage.
    const leakRatio = inuse.rows[0]!.self / did.leakedBytes;
    const garbageRatio = alloc.rows[0]!.self / did.garbageBytes;
    expect({ leakRatio, ok: leakRatio > 0.5 && leakRatio < 2.5 }).toMatchObject({ ok: true });
    expect({ garbageRatio, ok: garbageRatio > 0.5 && garbageRatio < 2 }).toMatchObject({ ok: true });
  });

  it('the leak is the first suspect: it grew steadily, and the garbage maker did not', () => {
    const report = JSON.parse(cli('leaks', rotated, '--json')) as {
      suspects: { funcname: string; fit: number; growthBytesPerMin: number; score: number }[];
    };
    const [first] = report.suspects;
    expect(first).toMatchObject({ funcname: 'leakMemory' });
    expect(first!.growthBytesPerMin).toBeGreaterThan(0);
    const garbage = report.suspects.find((s) => s.funcname === 'makeGarbage');
    if (garbage !== undefined) expect(garbage.score).toBeLessThan(first!.score / 4);
  });
});
