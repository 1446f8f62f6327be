// test tier: slow (every command on generated files that ask for huge memory, peak RSS measured, ~47 s)
/**
 * Small files that ask for huge memory (issue 29's repros, made here by
 * generators): every command exits 0 with the right answer or exits 2 with one
 * `profpack: ERR_…` line, within 400 MB peak RSS (600 MB for export/sql) of
 * the CLI process, on both backends. Peak RSS is the child's own (measured at
 * its exit by test/support/measure.cjs); the wall clock only gets a generous
 * timeout, since the machine is shared.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/index';
import { buildForTests } from '../support/build';
import { craftTachyon, fullRecord, recordPrefix, STATUS } from '../fuzz/craft';
import { repoRoot, SLOWDOWN } from '../support/environment';
import { testedBackends } from '../support/backends';
import { uleb128 } from '../support/reference-leb128';

const MB = 1024 * 1024;
const { build, dir } = buildForTests('profpack-bounds-cli-');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  peakRss: number;
}

function cli(which: string, args: string[]): Run {
  const measure = path.join(dir, `measure-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const preload = path.join(repoRoot, 'test', 'support', 'measure.cjs');
  const run = spawnSync(process.execPath, ['--require', preload, build.cli, ...args], {
    encoding: 'utf8',
    cwd: dir,
    timeout: 60_000 * SLOWDOWN,
    maxBuffer: 64 * MB,
    env: { ...process.env, PROFPACK_BACKEND: which, PROFPACK_MEASURE_FILE: measure },
  });
  if (run.error) throw run.error;
  const { maxRssBytes } = JSON.parse(fs.readFileSync(measure, 'utf8')) as { maxRssBytes: number };
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, peakRss: maxRssBytes };
}

/** Exit 0, or exit 2 with exactly one coded line; returns the code ('ok' for exit 0). */
function outcome(run: Run, limitMb: number): string {
  expect(run.peakRss, `peak RSS ${(run.peakRss / MB).toFixed(0)} MB`).toBeLessThan(limitMb * MB);
  if (run.status === 0) return 'ok';
  expect(run.status, run.stderr).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(
    lines.filter((l) => l.startsWith('profpack: ')),
    run.stderr,
  ).toHaveLength(1);
  const match = /^profpack: (ERR_[A-Z0-9_]+)/.exec(lines.at(-1) ?? '');
  expect(match, run.stderr).not.toBeNull();
  return match![1]!;
}

/** Version 1, zstd: `threads` threads, one sample each of one `depth`-frame stack (57 KB for 16,000 × 250). */
function manyThreads(file: string, threads: number, depth: number): string {
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000, compression: 'zstd' });
  const ids = Array.from({ length: depth }, (_, i) =>
    w.internFrame({ filename: 'deep.py', funcname: `f${i}`, lineno: i + 1 }),
  );
  for (let t = 0; t < threads; t++) w.writeStack(t + 1, 0, 1_001_000 + t, 0, ids);
  w.finalize();
  return file;
}

/** Version 1, zstd: a FULL record then one REPEAT run of `run` samples (a few KB for 20 M). */
function repeatRun(file: string, run: number): string {
  // Each tick one interval (1000 µs, uleb128 e8 07) after the last: a busy loop at the sampler's rate, which the
  // model keeps as one record (docs/formats.md, Times); ticks at other gaps are records of their own.
  const entries = new Uint8Array(3 * run);
  for (let k = 0; k < run; k++) entries.set([0xe8, 0x07, STATUS], 3 * k);
  const region = Uint8Array.from([...fullRecord(7n, [0, 1]), ...recordPrefix(7n, 0, 0), ...uleb128(run)]);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const zstd = require('zstd-napi') as { compress(b: Uint8Array): Uint8Array };
  const packed = zstd.compress(Buffer.concat([region, entries]));
  fs.writeFileSync(file, craftTachyon({ region: packed, compression: 1, sampleCount: BigInt(run + 1) }));
  return file;
}

/** A gzipped pprof of `count` empty samples (58 KB for 30 M): string table "", "s", "c"; sample_type s/c. */
function emptyPprofSamples(file: string, count: number): string {
  const header = [0x32, 0x00, 0x32, 0x01, 0x73, 0x32, 0x01, 0x63, 0x0a, 0x04, 0x08, 0x01, 0x10, 0x02];
  const sample = [0x12, 0x00];
  const out = Buffer.alloc(header.length + sample.length * count);
  out.set(header, 0);
  out.set(sample, header.length);
  for (let filled = sample.length, total = sample.length * count; filled < total; filled *= 2) {
    out.copyWithin(header.length + filled, header.length, header.length + Math.min(filled, total - filled));
  }
  fs.writeFileSync(file, gzipSync(out, { level: 9 }));
  return file;
}

describe.each(testedBackends)('%s', (which) => {
  it('16,000 threads × 250 frames in 57 KB: flame and convert to .cpuprofile', () => {
    const file = manyThreads(path.join(dir, `threads-${which}.tach`), 16_000, 250);
    expect(fs.statSync(file).size).toBeLessThan(100_000);
    const page = path.join(dir, `threads-${which}.html`);
    // 4 M stack nodes (thread × path): refused before they are built (was 1.3 GB and a 55 MB page).
    expect(outcome(cli(which, ['flame', file, '-o', page]), 400)).toBe('ERR_VIEW_TOO_LARGE');
    expect(fs.existsSync(page)).toBe(false);
    // A .cpuprofile holds one thread, the busiest: one sample of 250 frames (was 2.8 GB and a RangeError).
    const out = path.join(dir, `threads-${which}.cpuprofile`);
    const convert = cli(which, ['convert', file, '-o', out]);
    expect(outcome(convert, 400)).toBe('ok');
    expect(convert.stderr).toContain('the busiest of 16000');
    const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as { samples: number[]; nodes: unknown[] };
    expect(doc.samples).toHaveLength(1);
    expect(doc.nodes).toHaveLength(251); // (root) and 250 frames
  });

  it('a 20 M-sample REPEAT run in a few KB: export and sql sum every sample', () => {
    const file = repeatRun(path.join(dir, `repeat-${which}.tach`), 20_000_000);
    expect(fs.statSync(file).size).toBeLessThan(64_000);
    const sql = cli(which, ['sql', 'select sum(value)::BIGINT as v from samples', file, '--json']);
    if (outcome(sql, 600) === 'ok') expect(sql.stdout).toContain('20000001');
    const out = path.join(dir, `repeat-${which}.parquet.d`);
    const exported = cli(which, ['export', file, '-o', out]);
    if (outcome(exported, 600) === 'ok') {
      const back = cli(which, ['sql', 'select sum(value)::BIGINT as v from samples', out, '--json']);
      expect(outcome(back, 600)).toBe('ok');
      expect(back.stdout).toContain('20000001');
    }
  });

  it('a gzip of 30 M empty pprof samples: top, flame and convert', () => {
    const file = emptyPprofSamples(path.join(dir, `empty-${which}.pb.gz`), 30_000_000);
    expect(fs.statSync(file).size).toBeLessThan(64_000);
    const page = path.join(dir, `empty-${which}.html`);
    const out = path.join(dir, `empty-${which}.tach`);
    // Version 2 keeps every sample type, so the samples are read (version 1 refuses s/c before reading any).
    const commands = [
      ['top', file],
      ['flame', file, '-o', page],
      ['convert', file, '-o', out, '--tachyon-version', '2'],
    ];
    for (const args of commands) {
      // A pprof sample needs one value per sample type: refused at the first one.
      expect(outcome(cli(which, args), 400), args[0]).toBe('ERR_CONVERT_BAD_INPUT');
    }
    expect(fs.existsSync(page) || fs.existsSync(out)).toBe(false);
  });
});
