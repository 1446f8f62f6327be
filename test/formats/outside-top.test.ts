// test tier: slow (every sample type of every outside profile against go tool pprof, ~31 s)
/**
 * Issue 26's conformance: for every sample type of every real outside
 * profile (Go 1.19 runtime/pprof, @datadog/pprof 5.20, node --heap-prof /
 * --cpu-prof; test/fixtures/outside/ORIGINS.md), `profpack top --sample-type T
 * --json` totals what `go tool pprof -raw` sums for T and names the function
 * `go tool pprof -top -sample_index=T` lists first — expected.json holds the
 * tools' answers, and test/outside checks it against the tools themselves.
 * Each run is bounded in the child's own peak RSS and CPU time.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildForTests } from '../support/build';
import { repoRoot } from '../support/environment';

const dir = path.join(repoRoot, 'test', 'fixtures', 'outside');
interface PprofExpected {
  sampleTypes: { type: string; unit: string; total: number }[];
  goDefaultType: string;
  topFirst: Record<string, string>;
}
interface JsonExpected {
  kind: string;
  samples: number;
  total: number;
  topSelf: string;
}
const expected = JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8')) as {
  pprof: Record<string, PprofExpected>;
  json: Record<string, JsonExpected>;
};

describe('profpack top on real outside profiles agrees with go tool pprof, per sample type', () => {
  const { build, dir: work } = buildForTests('profpack-outside-top-');

  /** `profpack top ... --json`, with the child's peak RSS and CPU time. */
  function top(file: string, ...args: string[]) {
    const measure = path.join(work, `m${Math.random().toString(36).slice(2)}.json`);
    const run = spawnSync(
      process.execPath,
      [
        '--require',
        path.join(repoRoot, 'test', 'support', 'measure.cjs'),
        build.cli,
        'top',
        path.join(dir, file),
        '--json',
        '-n',
        '3',
        ...args,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, PROFPACK_MEASURE_FILE: measure },
      },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const cost = JSON.parse(readFileSync(measure, 'utf8')) as { maxRssBytes: number; cpuMs: number };
    return {
      result: JSON.parse(run.stdout) as {
        sampleType: { type: string; unit: string };
        total: number;
        rows: { funcname: string; self: number }[];
      },
      cost,
    };
  }

  const cases = Object.entries(expected.pprof).flatMap(([file, e]) =>
    e.sampleTypes.map((t) => ({ file, type: t, top: e.topFirst[t.type]! })),
  );
  it.each(cases)('$file --sample-type $type.type', ({ file, type, top: first }) => {
    const { result, cost } = top(file, '--sample-type', type.type);
    expect(result.sampleType).toEqual({ type: type.type, unit: type.unit });
    expect(result.total).toBe(type.total);
    expect(result.rows[0]!.funcname).toBe(first);
    expect(cost.maxRssBytes).toBeLessThan(200 * 1024 * 1024);
    expect(cost.cpuMs).toBeLessThan(2000);
  });

  it.each(Object.keys(expected.pprof))(
    "%s: without --sample-type, the file's default (go tool pprof's rule)",
    (file) => {
      const { result } = top(file);
      expect(result.sampleType.type).toBe(expected.pprof[file]!.goDefaultType);
    },
  );

  it('node --heap-prof: bytes equal to the sum of selfSize, the hoarding function first', () => {
    const e = expected.json['node/node.heapprofile']!;
    const { result, cost } = top('node/node.heapprofile');
    expect(result.sampleType.unit).toBe('bytes');
    expect(result.total).toBe(e.total);
    expect(result.rows[0]!.funcname).toBe(e.topSelf);
    expect(cost.maxRssBytes).toBeLessThan(200 * 1024 * 1024);
  });

  it.each(['node/node.cpu-main.cpuprofile', 'node/node.cpu-worker.cpuprofile'])(
    '%s: every sample counted, real time in wall nanoseconds',
    (file) => {
      const e = expected.json[file]!;
      const samples = top(file, '--sample-type', 'samples').result;
      expect(samples.total).toBe(e.samples);
      expect(samples.rows[0]!.funcname).toBe(e.topSelf);
      const wall = top(file, '--sample-type', 'wall').result;
      expect(wall.sampleType).toEqual({ type: 'wall', unit: 'nanoseconds' });
      // Each sample weighs the gap to the next (as DevTools and speedscope weigh it), the last the gap before it:
      // the sum of V8's timeDeltas after the first (which runs from startTime to the first sample), plus the last again.
      const doc = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { timeDeltas: number[] };
      const deltas = doc.timeDeltas;
      const gaps = deltas.slice(1).reduce((sum, d) => sum + d, 0) + deltas[deltas.length - 1]!;
      expect(wall.total).toBe(gaps * 1000);
    },
  );
});
