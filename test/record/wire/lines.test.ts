/**
 * Hot lines: V8's positionTicks (self ticks per source line of a function)
 * reach the file as the leaf frame's line, so `top --by line` names the
 * lines a function spends its time on, not its declaration line.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { CpuProfile } from '../../../lib/v8/index';
import { TickList } from '../../support/model';
import { ChunkIngester } from '../../../lib/record/writer/index';
import { HarvestEncoder, samplesInTimeOrder } from '../../../lib/record/wire/index';
import { sampleLines } from '../../../lib/v8/index';

/** sampleLines over a chunk's samples in time order. */
function linesOf(
  chunk: { samples: number[]; timeDeltas: number[]; startTime: number },
  lineTicks: Record<number, number[]>,
): Uint32Array {
  return sampleLines(chunk.samples, samplesInTimeOrder(chunk).order, lineTicks);
}
import { repoRoot } from '../../support/environment';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-lines-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('sampleLines', () => {
  it("gives each node's samples, in time order, its lines as many times as V8 counted them", () => {
    const chunk = { samples: [1, 1, 2, 1, 1], timeDeltas: [10, 10, 10, 10, 10], startTime: 0 };
    expect(Array.from(linesOf(chunk, { 1: [7, 2, 9, 1] }))).toEqual([7, 7, 0, 9, 0]);
    // Time order, not array order: V8 sometimes records a tick before its predecessor.
    expect(Array.from(linesOf({ samples: [1, 1], timeDeltas: [10, -5], startTime: 0 }, { 1: [3, 1, 4, 1] }))).toEqual([
      4, 3,
    ]);
  });

  it('never assigns a line more samples than its ticks, and assigns every tick it can', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 60 }),
        fc.dictionary(
          fc.constantFrom('0', '1', '2', '3'),
          fc.array(fc.tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 6 })), { maxLength: 4 }),
        ),
        (samples, ticksByNode) => {
          const lineTicks: Record<number, number[]> = {};
          for (const [node, pairs] of Object.entries(ticksByNode)) lineTicks[Number(node)] = pairs.flat();
          const lines = linesOf({ samples, timeDeltas: samples.map(() => 1), startTime: 0 }, lineTicks);
          for (const [node, flat] of Object.entries(lineTicks)) {
            const mine = samples.flatMap((n, i) => (n === Number(node) ? [lines[i]!] : []));
            const ticks = new Map<number, number>();
            for (let k = 0; k < flat.length; k += 2) ticks.set(flat[k]!, (ticks.get(flat[k]!) ?? 0) + flat[k + 1]!);
            for (const [line, n] of ticks) expect(mine.filter((l) => l === line).length).toBeLessThanOrEqual(n);
            const totalTicks = [...ticks.values()].reduce((a, b) => a + b, 0);
            expect(mine.filter((l) => l !== 0).length).toBe(Math.min(mine.length, totalTicks));
          }
          for (let i = 0; i < samples.length; i++) if (lineTicks[samples[i]!] === undefined) expect(lines[i]).toBe(0);
        },
      ),
    );
  });
});

describe('HarvestEncoder and ChunkIngester with positionTicks', () => {
  it('writes the leaf at its hot line (no column), callers as before', () => {
    const cf = (functionName: string, lineNumber: number) => ({
      functionName,
      scriptId: '1',
      url: 'file:///app.js',
      lineNumber,
      columnNumber: 4,
    });
    const profile: CpuProfile = {
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
          children: [2],
        },
        { id: 2, callFrame: cf('main', 0), children: [3] },
        {
          id: 3,
          callFrame: cf('work', 9),
          positionTicks: [
            { line: 12, ticks: 2 },
            { line: 14, ticks: 1 },
          ],
        },
      ],
      startTime: 0,
      endTime: 40,
      samples: [3, 3, 3, 3],
      timeDeltas: [10, 10, 10, 10],
    };
    const sink = new TickList();
    new ChunkIngester(sink).ingest(new HarvestEncoder().encode(profile, 0)!, 0n, true);
    const leaf = sink.sampleList.map((s) => sink.frames[s.stack[0]!]!);
    expect(leaf.map((f) => [f.funcname, f.lineno, f.column])).toEqual([
      ['work', 12, null],
      ['work', 12, null],
      ['work', 14, null],
      ['work', 10, 5],
    ]);
    for (const s of sink.sampleList)
      expect(sink.frames[s.stack[1]!]).toMatchObject({ funcname: 'main', lineno: 1, column: 5 });
  });
});

describe('profpack record, then top --by line', () => {
  it("names the hot loop's line inside the function", () => {
    const app = path.join(dir, 'hot.js');
    fs.writeFileSync(
      app,
      [
        'function hotFunction(ms) {', // line 1: the declaration
        '  const end = Date.now() + ms;',
        '  let x = 0;',
        '  while (Date.now() < end) {',
        '    for (let i = 0; i < 2000; i++) x += Math.sqrt(x + i);', // line 5: the hot line
        '  }',
        '  return x;',
        '}',
        'hotFunction(300);',
      ].join('\n'),
    );
    const out = path.join(dir, 'hot.tach');
    const rec = spawnSync(process.execPath, [cli, 'record', '-o', out, '--', process.execPath, app], {
      encoding: 'utf8',
    });
    expect(rec.status, rec.stderr).toBe(0);
    const top = spawnSync(process.execPath, [cli, 'top', out, '--by', 'line', '--json', '-n', '0'], {
      encoding: 'utf8',
    });
    expect(top.status, top.stderr).toBe(0);
    const rows = (
      JSON.parse(top.stdout) as { rows: { funcname: string; filename: string; lineno: number; self: number }[] }
    ).rows.filter((r) => r.funcname === 'hotFunction' && r.filename === app);
    const self = rows.reduce((sum, r) => sum + r.self, 0);
    expect(self).toBeGreaterThan(0);
    // The declaration line is no longer where the time goes: the loop's lines are.
    const byLine = new Map(rows.map((r) => [r.lineno, r.self]));
    expect((byLine.get(4) ?? 0) + (byLine.get(5) ?? 0)).toBeGreaterThan(self / 2);
    expect(byLine.get(5) ?? 0).toBeGreaterThan(byLine.get(1) ?? 0);
  });
});
