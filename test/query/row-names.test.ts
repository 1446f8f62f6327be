/**
 * One naming rule for rows, the library's and the CLI's: an anonymous function is `(anonymous)` in both, a frame
 * without a file has no `:?` location, and records with an empty stack are kept, counted and shown as one
 * `(no stack)` row. The oracle for the empty-stack convention is `go tool pprof -top`, whose total counts them.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFrame, ProfileBuilder, SampleTypes } from '../../lib/profile/index';
import { aggregate, formatTable } from '../../lib/query/aggregate';
import { writeFile } from '../formats/pprof/support';
import { goPprof } from '../support/outside-tools';
import { scratchDir } from '../support/scratch-dir';

const work = scratchDir('profpack-row-names-');

function profile(): ProfileBuilder {
  const b = new ProfileBuilder({
    sampleTypes: [SampleTypes.samples],
    defaultSampleType: 0,
    startTimeUs: 0n,
    sampleIntervalUs: 0n,
  });
  const t = b.internThread(1n);
  const main = b.internFrame(makeFrame('main', 'app.js', 1));
  const anon = b.internFrame(makeFrame('', 'app.js', 7));
  const native = b.internFrame(makeFrame('native', '', 3));
  b.add(b.stacks.intern([anon, main]), t, NaN, 0, [5]);
  b.add(b.stacks.intern([native, main]), t, NaN, 0, [3]);
  b.add(b.stacks.intern([]), t, NaN, 0, [2]);
  return b;
}

describe('row names', () => {
  it('the library keys an anonymous function as the CLI prints it, never ""', () => {
    for (const by of ['function', 'line'] as const) {
      const result = aggregate(profile(), { by, limit: 0 });
      const anon = result.rows.find((r) => r.self === 5)!;
      expect(anon.funcname).toBe('(anonymous)');
      expect(anon.key).toBe(by === 'line' ? '(anonymous) app.js:7' : '(anonymous) app.js');
      expect(formatTable(result)).toContain(by === 'line' ? '(anonymous)  app.js:7' : '(anonymous)  app.js');
    }
  });

  it('a frame without a file has no ":?" location, by line or by function', () => {
    for (const by of ['function', 'line'] as const) {
      const result = aggregate(profile(), { by, limit: 0 });
      const native = result.rows.find((r) => r.self === 3)!;
      expect(native.key).toBe('native');
      expect(formatTable(result)).not.toContain(':?');
      expect(formatTable(result)).toMatch(/ native$/m);
    }
  });

  it('empty-stack records are kept and counted, as one "(no stack)" row; go tool pprof -top counts them too', () => {
    const b = profile();
    for (const by of ['function', 'file', 'line'] as const) {
      const result = aggregate(b, { by, limit: 0 });
      const rows = result.rows.filter((r) => r.key === '(no stack)');
      expect(
        rows.map((r) => [r.self, r.total]),
        by,
      ).toEqual([[2, 2]]);
      expect(formatTable(result)).toMatch(/^\s+2\s+20\.0%\s+2\s+20\.0%\s+\(no stack\)$/m);
      expect(result.rows.reduce((s, r) => s + r.self, 0)).toBe(result.total);
    }
    const file = path.join(work, 'empty.pb.gz');
    writeFile(b, file);
    // go tool pprof -top: "Showing nodes accounting for 8, 80% of 10 total": the empty stack is in the total.
    const top = /accounting for (\d+), [\d.]+% of (\d+) total/.exec(goPprof(['-top', file]))!;
    expect(Number(top[2])).toBe(aggregate(b).total);
    expect(Number(top[2]) - Number(top[1])).toBe(2);
  });
});
