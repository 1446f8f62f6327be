// test tier: slow (a worker's leak recorded on both samplers, ~20 s)
/**
 * A leak inside a worker thread (issue 37), end to end: `profpack record --workers --heap` samples the worker's own
 * isolate (the native addon's capture for that isolate, or the worker's own inspector session) and records it on
 * the worker's thread id. Judged against what the program reports it kept, on both heap samplers (forced by
 * PROFPACK_HEAP_SAMPLER), and on both backends by scripts/test-both.mjs.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LeakReport } from '../../lib/memory/index';
import { buildForTests } from '../support/build';
import { SLOWDOWN } from '../support/environment';

const fixtures = path.join(__dirname, '..', 'fixtures', 'heap');
const program = path.join(fixtures, 'worker-leak.js');
const { build, dir } = buildForTests('profpack-worker-leak-');

interface Truth {
  site: string;
  threadId: number;
  leakedBytes: number;
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [build.cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 180_000 * SLOWDOWN,
  });
  expect(r.status, r.stderr).toBe(0);
  return r;
}

describe.each(['native', 'inspector'])('a leak in a worker thread, on the %s heap sampler', (sampler) => {
  let did: Truth;
  let report: LeakReport;
  let text: string;
  let stderr: string;
  let out: string;
  beforeAll(() => {
    const truth = path.join(dir, `${sampler}.json`);
    out = path.join(dir, `${sampler}.tach`);
    // 2 KiB: each 8 KB payload is sampled with p = 0.98 (docs/memory.md); polls at every harvest on the inspector,
    // whose paced polls leave a 3-s program a handful (as test/memory/teardown-leaks.test.ts).
    const polls = sampler === 'inspector' ? ['--heap-polls', 'harvest'] : [];
    const flags = ['--workers', '--heap', '--heap-interval', '2k', ...polls, '--harvest-ms', '50'];
    stderr = cli(['record', ...flags, '-o', out, '--', process.execPath, program, truth], {
      PROFPACK_HEAP_SAMPLER: sampler,
    }).stderr;
    did = JSON.parse(fs.readFileSync(truth, 'utf8')) as Truth;
    report = JSON.parse(cli(['leaks', out, '--json', '-n', '0']).stdout) as LeakReport;
    text = cli(['leaks', out]).stdout;
  }, 240_000);

  it("names the worker's leaking function first, on the worker's thread, with the bytes it kept (0.7-1.3x)", () => {
    expect(did.threadId).toBeGreaterThan(0);
    const [first] = report.suspects;
    expect(first).toMatchObject({ funcname: did.site, filename: program, threadId: String(did.threadId) });
    const ratio = first!.liveBytes / did.leakedBytes;
    expect({ ratio, ok: ratio >= 0.7 && ratio <= 1.3 }).toMatchObject({ ok: true });
    expect(text.split('\n')[1]).toContain(`${did.site}  ${program}:`);
    expect(text.split('\n')[1]).toContain(`[thread ${did.threadId}]`);
    // Recorded, so nothing to warn of.
    expect(stderr).not.toMatch(/worker thread/);
  });

  it("top --heap puts the leak's bytes on the worker's thread, not the main thread's", () => {
    const rows = JSON.parse(cli(['top', out, '--heap', '--by', 'thread', '--json']).stdout) as {
      rows: { key: string; self: number }[];
    };
    const byThread = new Map(rows.rows.map((r) => [r.key, r.self]));
    const worker = byThread.get(String(did.threadId)) ?? 0;
    expect(worker / did.leakedBytes).toBeGreaterThan(0.7);
    expect(byThread.get('0') ?? 0).toBeLessThan(worker / 10);
    const site = (thread: number) =>
      (
        JSON.parse(cli(['top', out, '--heap', '--thread', String(thread), '--total', '-n', '0', '--json']).stdout) as {
          rows: { funcname: string; total: number }[];
        }
      ).rows.find((r) => r.funcname === did.site);
    expect(site(did.threadId)!.total / did.leakedBytes).toBeGreaterThan(0.7);
    expect(site(0)).toBeUndefined();
  });
});

describe('a worker whose heap sampler does not start', () => {
  it('is recorded for its CPU, and record says its heap went unrecorded and why', () => {
    const script = path.join(dir, 'lost.js');
    // The worker inherits an environment that forces the native sampler from a file that does not exist.
    fs.writeFileSync(
      script,
      "const { Worker } = require('node:worker_threads');\n" +
        "process.env.PROFPACK_HEAP_SAMPLER = 'native';\n" +
        "process.env.PROFPACK_HEAP_ADDON = '/nonexistent/profpack_heap.v8heap';\n" +
        "new Worker('const a = []; for (let i = 0; i < 2e5; i++) a.push({ i });', { eval: true });\n",
    );
    const out = path.join(dir, 'lost.tach');
    const r = cli(['record', '--workers', '--heap', '-o', out, '--', process.execPath, script]);
    const lines = r.stderr.split('\n').filter((l) => l.includes('worker thread'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^profpack: worker thread \d+ ran its heap unrecorded \(PROFPACK_HEAP_SAMPLER=native but .*\/nonexistent/,
      ),
    ]);
  });
});
