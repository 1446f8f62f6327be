// `top --by thread`: each thread's value under the filters, with the name the
// file gives it (py-spy's and Datadog's names, a Node recording's main and
// worker threads); the flame page's thread picker reads the same names.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openProfile, readProfile } from '../../lib/formats/index';
import { aggregate, formatTable, type AggregateResult } from '../../lib/query/aggregate';
import { encodeRecordedBy, type RecordedBy } from '../../lib/recorded-by';
import { ProfileWriter } from '../../lib/tachyon/index';
import { buildViewData } from '../../lib/view/tree';
import { repoRoot, sharedPath } from '../support/environment';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-by-thread-');
const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const pySpy = path.join(repoRoot, 'test', 'fixtures', 'formats', 'py-spy-threads.collapsed');

function byThread(file: string, options: Parameters<typeof aggregate>[1] = {}): AggregateResult {
  const source = openProfile(file);
  try {
    return aggregate(source, { ...options, by: 'thread' });
  } finally {
    source.close();
  }
}

describe('top --by thread', () => {
  it("py-spy's thread names, each thread's samples, most first; the flame page's picker has the same names", () => {
    const result = byThread(pySpy);
    expect(result.rows.map((r) => [r.thread, r.self, r.total])).toEqual([
      [{ key: '4243', name: 'MainThread' }, 7, 7],
      [{ key: '4250', name: 'worker' }, 3, 3],
      [{ key: String(0x7f3a2b1c4740) }, 2, 2],
    ]);
    expect(result.total).toBe(12);
    const table = formatTable(result);
    expect(table.split('\n')[0]).toMatch(/ thread$/);
    expect(table).toMatch(/^ +7 +58\.3% +7 +58\.3% +4243 +MainThread$/m);
    const source = openProfile(pySpy);
    const picker = buildViewData(source).threads.map((t) => [t.key, t.name]);
    source.close();
    expect(picker).toEqual(
      expect.arrayContaining([
        ['4243', 'MainThread'],
        ['4250', 'worker'],
      ]),
    );
  });

  it('the filters apply: one thread, -n', () => {
    expect(byThread(pySpy, { thread: '4250' }).rows.map((r) => r.key)).toEqual(['4250']);
    expect(byThread(pySpy, { limit: 1 }).rows.map((r) => r.key)).toEqual(['4243']);
  });

  it("Datadog's thread name, from the CLI as text and JSON", () => {
    const file = sharedPath('data', 'outside', 'datadog-pprof-5.20.0-wall-labels.pb.gz');
    const text = spawnSync(process.execPath, [cli, 'top', '--by', 'thread', file], { encoding: 'utf8' });
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/ thread\n.*100\.0%.*100\.0% +0 +Main Event Loop\n/);
    const json = spawnSync(process.execPath, [cli, 'top', '--by', 'thread', '--json', file], { encoding: 'utf8' });
    const result = JSON.parse(json.stdout) as AggregateResult;
    expect(result.by).toBe('thread');
    expect(result.rows[0]!.thread).toEqual({ key: '0', name: 'Main Event Loop' });
    expect(result.rows[0]!.self).toBe(result.total);
  });

  it("a Node recording's threads read as main and worker ID", () => {
    const file = path.join(dir, 'node.tach');
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1_000_000n, compression: 'none' });
    const about: RecordedBy = {
      runtime: 'node',
      version: 'v20.0.0',
      platform: 'linux',
      arch: 'x64',
      hostname: 'h',
      pid: 7,
      processStartUs: 1,
      argv: ['node', 'app.js'],
      intervalUs: 1000,
      mode: 'wall',
      recorder: '0.1.0',
    };
    w.internString(encodeRecordedBy(about));
    const f = w.internFrame({ filename: 'app.js', funcname: 'work', lineno: 1 });
    for (let i = 0; i < 5; i++) w.writeStack(0n, 0, 1_000_000 + i * 1000, 2, [f]);
    for (let i = 0; i < 3; i++) w.writeStack(3n, 0, 1_000_000 + i * 1000, 2, [f]);
    w.finalize();
    expect(byThread(file).rows.map((r) => [r.thread, r.self])).toEqual([
      [{ key: '0', name: 'main' }, 5],
      [{ key: '3', name: 'worker 3' }, 3],
    ]);
  });

  it("every thread's value adds up to the total, under any status filter (fast-check)", () => {
    const line = fc.record({
      thread: fc.integer({ min: 1, max: 4 }),
      frame: fc.constantFrom('a', 'b'),
      n: fc.integer({ min: 1, max: 50 }),
    });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), (lines) => {
        const text = lines.map((l) => `thread (${l.thread}): t${l.thread};${l.frame} ${l.n}`).join('\n') + '\n';
        const source = readProfile(new TextEncoder().encode(text), { format: 'collapsed' });
        const result = aggregate(source, { by: 'thread', limit: 0 });
        source.close();
        const want = new Map<string, number>();
        for (const l of lines) want.set(String(l.thread), (want.get(String(l.thread)) ?? 0) + l.n);
        expect(new Map(result.rows.map((r) => [r.key, r.self]))).toEqual(want);
        expect(result.rows.every((r) => r.thread!.name === `t${r.key}`)).toBe(true);
        expect(result.rows.reduce((s, r) => s + r.self, 0)).toBe(result.total);
      }),
      { numRuns: 50 },
    );
  });
});
