// test tier: slow (sql and export through DuckDB per time edge case, ~39 s)
/**
 * Issue 29: a u64 time at or past 2^63 us in `sql`/`export`. The tables hold times as BIGINT, so such a time
 * (a sample's, or the file's start) is refused with one `profpack: ERR_FLEET_TIME_RANGE` line and exit 2, and
 * export leaves no output directory; a time below 2^63 us is kept exactly. Files are made by the writer here,
 * versions 1 and 2, on both backends.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/index';
import { compileBuild, type Build } from '../support/build';
import { SLOWDOWN } from '../support/environment';
import { testedBackends } from '../support/backends';

const TWO_POW_63 = 2n ** 63n;
let build: Build;
let dir: string;

function cli(which: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [build.cli, ...args], {
    encoding: 'utf8',
    cwd: dir,
    timeout: 60_000 * SLOWDOWN,
    env: { ...process.env, PROFPACK_BACKEND: which },
  });
  if (run.error) throw run.error;
  return run;
}

/** Two samples of one stack: at start + 1 ms and at `lastUs`. */
function profile(file: string, formatVersion: 1 | 2, startTimeUs: bigint, lastUs: bigint, intervalUs = 1000n): string {
  const w = new ProfileWriter(file, { sampleIntervalUs: intervalUs, startTimeUs, formatVersion });
  const ids = [w.internFrame({ filename: 'a.py', funcname: 'f', lineno: 1 })];
  w.writeStack(1, 0, startTimeUs + 1000n, 0, ids);
  w.writeStack(1, 0, lastUs, 0, ids);
  w.finalize();
  return file;
}

function expectRefused(run: { status: number | null; stderr: string }): void {
  expect(run.status, run.stderr).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^profpack: ERR_FLEET_TIME_RANGE: .*does not fit the tables' BIGINT columns$/);
}

beforeAll(() => {
  build = compileBuild();
  dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-fleet-times-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  build?.cleanup();
});

describe.each(testedBackends)('%s', (which) => {
  describe.each([1, 2] as const)('version %i', (version) => {
    const cases: [string, bigint, bigint][] = [
      ['a sample time of 2^63 + 5 us', 1_000_000n, TWO_POW_63 + 5n],
      ['a sample time of 2^64 - 1 us', 1_000_000n, 2n ** 64n - 1n],
      ['a start time of 2^63 us', TWO_POW_63, TWO_POW_63 + 2000n],
    ];
    it.each(cases)('%s: sql and export exit 2 with ERR_FLEET_TIME_RANGE, no output', (name, start, last) => {
      const file = profile(path.join(dir, `${which}-v${version}-${start}-${last}.tach`), version, start, last);
      expectRefused(cli(which, ['sql', 'select count(*) from samples', file]));
      const out = path.join(dir, `${which}-v${version}-${start}-${last}.parquet.d`);
      expectRefused(cli(which, ['export', file, '-o', out]));
      expect(fs.existsSync(out)).toBe(false);
    });

    it('a sample interval of 2^63 us (sample_interval_us): sql and export exit 2 with ERR_FLEET_TIME_RANGE', () => {
      // Issue 38: was DuckDB's bare "bigint out of int64 range" with a stack.
      const file = profile(
        path.join(dir, `${which}-v${version}-interval.tach`),
        version,
        1_000_000n,
        1_002_000n,
        TWO_POW_63,
      );
      expectRefused(cli(which, ['sql', 'select count(*) from profiles', file]));
      const out = path.join(dir, `${which}-v${version}-interval.parquet.d`);
      expectRefused(cli(which, ['export', file, '-o', out]));
      expect(fs.existsSync(out)).toBe(false);
    });

    it('a sample time of 2^62 us is kept exactly by sql and export', () => {
      const last = 2n ** 62n;
      const file = profile(path.join(dir, `${which}-v${version}-2pow62.tach`), version, 1_000_000n, last);
      const query = 'select max(timestamp_us)::VARCHAR as t, count(*)::INTEGER as n from samples';
      const sql = cli(which, ['sql', query, file, '--json']);
      expect(sql.status, sql.stderr).toBe(0);
      expect(JSON.parse(sql.stdout)).toEqual([{ t: String(last), n: 2 }]);
      const out = path.join(dir, `${which}-v${version}-2pow62.parquet.d`);
      const exported = cli(which, ['export', file, '-o', out]);
      expect(exported.status, exported.stderr).toBe(0);
      const back = cli(which, ['sql', query, out, '--json']);
      expect(back.status, back.stderr).toBe(0);
      expect(JSON.parse(back.stdout)).toEqual([{ t: String(last), n: 2 }]);
    });
  });

  it.each(['1', 'peak'])('sql --memory-limit %s exits 2 with one ERR_INVALID_ARGUMENT line', (limit) => {
    // Issue 38: DuckDB's "Failed to set config" with a stack, exit 1.
    const file = profile(path.join(dir, `${which}-limit.tach`), 1, 1_000_000n, 1_002_000n);
    const run = cli(which, ['sql', '--memory-limit', limit, 'select count(*) from samples', file]);
    expect(run.status, run.stderr).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^profpack: ERR_INVALID_ARGUMENT: --memory-limit ${limit}: `));
  });

  it('export takes --memory-limit as sql does: a size DuckDB refuses is one coded line, no output', () => {
    const file = profile(path.join(dir, `${which}-export-limit.tach`), 1, 1_000_000n, 1_002_000n);
    const out = path.join(dir, `${which}-export-limit.d`);
    const run = cli(which, ['export', '--memory-limit', 'peak', file, '-o', out]);
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr.trim()).toMatch(/^profpack: ERR_INVALID_ARGUMENT: --memory-limit peak: [^\n]*$/);
    expect(fs.existsSync(out)).toBe(false);
    // Only DuckDB's tables have the limit: with --to clickhouse it is refused before anything is sent.
    const ch = cli(which, [
      'export',
      '--to',
      'clickhouse',
      '--url',
      'http://127.0.0.1:1',
      '--memory-limit',
      '1GB',
      file,
    ]);
    expect(ch.status, ch.stderr).toBe(2);
    expect(ch.stderr).toContain('ERR_INVALID_ARGUMENT: --memory-limit applies to --to parquet');
    const ok = cli(which, ['export', '--memory-limit', '64MB', file, '-o', out]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(fs.existsSync(path.join(out, 'samples.parquet'))).toBe(true);
  });
});
