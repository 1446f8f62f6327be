// test tier: slow (Parquet exports through DuckDB on full disks, ~21 s)
/**
 * `export` writes its Parquet tables into a temporary directory beside the target and renames it only once all are
 * written (issue 38): a full disk leaves no partial directory and no temporary, an existing directory untouched; a
 * temporary left by a dead export is removed by the next one, a live one's is kept.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/index';
import { TEMPORARY_PREFIX } from '../../lib/output-file';
import { buildForTests } from '../support/build';

const { dir, cli } = buildForTests('profpack-export-tmp-');
const TABLES = ['profiles', 'sample_types', 'frames', 'stacks', 'samples', 'labels', 'allocations'].map(
  (t) => `${t}.parquet`,
);

function profile(file: string, samples: number): string {
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000 });
  for (let i = 0; i < samples; i++) {
    const f = w.internFrame({ filename: `m${i % 500}.py`, funcname: `f${i}_${'x'.repeat(100)}`, lineno: i });
    w.writeStack(1, 0, 1_001_000 + i * 1000, 0, [f]);
  }
  w.finalize();
  return file;
}

function exportTo(out: string, input: string): ReturnType<typeof cli> {
  return cli(['export', input, '-o', out]);
}

describe('export through a temporary directory', () => {
  const input = path.join(dir, 'in.tach');
  const full = path.join(dir, 'full');
  beforeAll(() => {
    profile(input, 20_000);
    fs.mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', full]);
  });
  afterAll(() => execFileSync('umount', [full]));

  it('on a full disk: a coded error, no partial directory, no temporary, an existing directory untouched', () => {
    // Room for little more than the first tables.
    fs.writeFileSync(path.join(full, 'filler'), Buffer.alloc(1024 * 1024 - 64 * 1024, 1));
    const fresh = exportTo(path.join(full, 'fresh'), input);
    expect(fresh.status).not.toBe(0);
    expect(String(fresh.stderr)).toMatch(/profpack: ERR_[A-Z_]+: .*(space|ENOSPC)/i);
    const old = path.join(full, 'old');
    fs.mkdirSync(old);
    fs.writeFileSync(path.join(old, 'samples.parquet'), 'old');
    const over = exportTo(old, input);
    expect(over.status).not.toBe(0);
    expect(fs.readdirSync(full).sort()).toEqual(['filler', 'old']);
    expect(fs.readdirSync(old)).toEqual(['samples.parquet']);
    expect(fs.readFileSync(path.join(old, 'samples.parquet'), 'utf8')).toBe('old');
  });

  it("removes a dead export's temporary, keeps a live one's, and writes every table", () => {
    const out = path.join(dir, 'out');
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadTemp = path.join(dir, `${TEMPORARY_PREFIX}${dead.stdout.trim()}-0badf00d-out`);
    const liveTemp = path.join(dir, `${TEMPORARY_PREFIX}${process.pid}-0badf00d-out`);
    for (const t of [deadTemp, liveTemp]) {
      fs.mkdirSync(t);
      fs.writeFileSync(path.join(t, 'frames.parquet'), 'partial');
    }
    const r = exportTo(out, input);
    expect(r.stderr).not.toMatch(/ERR_/);
    expect(r.status).toBe(0);
    expect(fs.existsSync(deadTemp)).toBe(false);
    expect(fs.existsSync(liveTemp)).toBe(true);
    expect(fs.readdirSync(out).sort()).toEqual([...TABLES].sort());
    // Parquet files, whole: each begins and ends with the magic PAR1.
    for (const t of TABLES) {
      const bytes = fs.readFileSync(path.join(out, t));
      expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
      expect(bytes.subarray(-4).toString()).toBe('PAR1');
    }
    fs.rmSync(liveTemp, { recursive: true });
  });
});
