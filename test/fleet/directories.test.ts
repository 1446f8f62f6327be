// test tier: slow (directory inputs through DuckDB, ~27 s)
/**
 * Directory inputs and DuckDB paths (issue 29): a file is read once however
 * many paths reach it, symlinked directories are not walked, dangling links
 * and unfinished profiles (a writer still open in the directory) are skipped
 * with one warning line per kind and a count; Parquet directories are read
 * as literal paths (no glob); `sql` prints at most --limit rows as a table
 * (default 1,000) and streams every row for --json/--csv, under a DuckDB
 * memory limit.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listProfileFiles, type SkipReason } from '../../lib/fleet/listing';
import { ProfileWriter } from '../../lib/tachyon/index';
import { buildForTests } from '../support/build';

const { dir, cli } = buildForTests('profpack-dirs-');

function profile(file: string, samples: number, funcname = 'work'): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000 });
  const f = w.internFrame({ filename: 'a.py', funcname, lineno: 1 });
  for (let i = 0; i < samples; i++) w.writeStack(1, 0, 1_001_000 + i * 1000, 0, [f]);
  w.finalize();
  return file;
}

/** listProfileFiles with its skips collected instead of printed. */
function list(inputs: string[]): { files: string[]; skipped: Partial<Record<SkipReason, string[]>> } {
  const skipped: Partial<Record<SkipReason, string[]>> = {};
  const files = listProfileFiles(inputs, { onSkipped: (reason, paths) => (skipped[reason] = [...paths]) });
  return { files: files.map((f) => path.relative(dir, f)), skipped };
}

describe('directory inputs', () => {
  it('a file once by device and inode; symlinked directories (a loop) not walked; dangling links counted', () => {
    const d = path.join(dir, 'fleet');
    profile(path.join(d, 'host1', 'a.tach'), 10);
    fs.linkSync(path.join(d, 'host1', 'a.tach'), path.join(d, 'host1', 'a-hard.tach'));
    fs.symlinkSync('a.tach', path.join(d, 'host1', 'a-soft.tach'));
    fs.symlinkSync('..', path.join(d, 'host1', 'loop'));
    fs.symlinkSync('missing.tach', path.join(d, 'host1', 'gone.tach'));
    const r = list([d, path.join(d, 'host1', 'a.tach')]);
    expect(r.files).toEqual(['fleet/host1/a-hard.tach']);
    expect(r.skipped['directory-link']).toEqual([path.join(d, 'host1', 'loop')]);
    expect(r.skipped['dangling-link']).toEqual([path.join(d, 'host1', 'gone.tach')]);
    expect(r.skipped.duplicate).toHaveLength(3);
    // The CLI: the samples once (not ×2, not ×41 through the loop), one warning line per kind, exit 0.
    const top = cli(['top', d, '--json']);
    expect(top.status, top.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(top.stdout))).toContain('"samples":10');
    const warnings = top.stderr.trim().split('\n').sort();
    expect(warnings).toEqual([
      expect.stringMatching(/^profpack: warning: 1 dangling link\(s\) skipped: .*gone\.tach$/),
      expect.stringMatching(/^profpack: warning: 1 symlinked director\(ies\) not walked: .*loop$/),
    ]);
  });

  it('an unfinished profile of a writer still open in the directory is skipped with a warning; top, merge and export go on', () => {
    const d = path.join(dir, 'rotating');
    profile(path.join(d, '1.tach'), 20);
    const open = new ProfileWriter(path.join(d, '2.tach'), { sampleIntervalUs: 1000 });
    const f = open.internFrame({ filename: 'a.py', funcname: 'f', lineno: 1 });
    open.writeStack(1, 0, 1000, 0, [f]);
    open.flush();
    try {
      expect(list([d])).toMatchObject({
        files: ['rotating/1.tach'],
        skipped: { unfinished: [path.join(d, '2.tach')] },
      });
      const top = cli(['top', d]);
      expect(top.status, top.stderr).toBe(0);
      expect(top.stderr.trim()).toMatch(
        /^profpack: warning: 1 unfinished profile\(s\) skipped \(a writer's header is still open\): .*2\.tach$/,
      );
      const merged = path.join(dir, 'rotating-merged.tach');
      expect(cli(['merge', d, '-o', merged]).status).toBe(0);
      // Given by name, an unfinished file is not skipped: it is a coded error.
      const named = cli(['top', path.join(d, '2.tach')]);
      expect(named.status).toBe(2);
      expect(named.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^profpack: ERR_[A-Z_]+: /)]);
    } finally {
      open.close();
    }
  });
});

describe('DuckDB', () => {
  it('a Parquet directory named exp[12] is that directory, not a glob over exp1 and exp2', () => {
    for (const [name, samples] of [
      ['exp1', 11],
      ['exp2', 22],
      ['exp[12]', 5],
    ] as const) {
      const src = profile(path.join(dir, 'src', `${name}.tach`), samples);
      const r = cli(['export', src, '-o', path.join(dir, name)]);
      expect(r.status, r.stderr).toBe(0);
    }
    // sum(value): samples (a row is a record, which may be a REPEAT run of several).
    const r = cli(['sql', 'SELECT sum(value)::BIGINT AS n FROM samples', path.join(dir, 'exp[12]'), '--csv']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('n\n5\n');
  });

  it('sql: the text table stops at --limit (1,000 by default) and says so; --csv and --json stream every row', () => {
    const src = profile(path.join(dir, 'one.tach'), 3);
    const q = 'SELECT range AS i FROM range(2500)';
    const text = cli(['sql', q, src]);
    expect(text.status, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines).toHaveLength(2 + 1000 + 1 + 1);
    expect(lines.at(-1)).toMatch(/^\(the first 1000 rows: more follow/);
    expect(cli(['sql', q, src, '--limit', '0']).stdout.trim().split('\n')).toHaveLength(2 + 2500 + 1);
    expect(cli(['sql', q, src, '--limit', '7']).stdout.trim().split('\n')).toHaveLength(2 + 7 + 1 + 1);
    const csv = cli(['sql', q, src, '--csv']).stdout;
    expect(csv.trim().split('\n')).toHaveLength(2501);
    const json = JSON.parse(cli(['sql', q, src, '--json']).stdout) as { i: number }[];
    expect(json).toHaveLength(2500);
    expect(json[2499]).toEqual({ i: 2499 });
    expect(JSON.parse(cli(['sql', 'SELECT 1 AS x WHERE false', src, '--json']).stdout)).toEqual([]);
    const bad = cli(['sql', q, src, '--limit', '-1']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^profpack: ERR_INVALID_ARGUMENT/);
  });

  it('sql runs under a DuckDB memory limit (256 MB unless --memory-limit says otherwise)', () => {
    const src = profile(path.join(dir, 'mem.tach'), 3);
    const q = "SELECT current_setting('memory_limit') AS m";
    expect(cli(['sql', q, src, '--csv']).stdout).toMatch(/^m\n(256\.0 MiB|244\.1 MiB)\n$/);
    expect(cli(['sql', q, src, '--csv', '--memory-limit', '64MB']).stdout).toMatch(/^m\n(64\.0 MiB|61\.0 MiB)\n$/);
  });
});
