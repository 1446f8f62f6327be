// The profpack command (lib/cli/main.ts) in-process: `dump --json` against the
// vectors' expected JSON (CPython's own dump), `info`, and user errors.
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../lib/cli/main';
import { parseJsonExact, readJsonExact, repoRoot, sharedPath } from '../support/environment';
import { goPprofRawTotals } from '../support/outside-tools';
import { scratchDir } from '../support/scratch-dir';

function run(...args: string[]): { status: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const status = main(['node', 'profpack', ...args]);
    return { status, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const vector = (name: string): string => sharedPath('vectors', 'tachyon', name);
const scratch = scratchDir('profpack-info-');

afterEach(() => vi.restoreAllMocks());

describe('profpack dump --json', () => {
  for (const name of [
    's01_single_thread_none',
    'c01_big_endian_s13_zstd',
    's10_large_thread_ids_none',
    'r02_cpu_wall_zstd',
    'e11_sample_count_mismatch',
    'e15_zstd_corrupt',
  ]) {
    it(`${name}: the vectors' shape and values`, () => {
      const { status, stdout, stderr } = run('dump', vector(`${name}.bin`), '--json');
      const got = parseJsonExact(stdout) as Record<string, unknown>;
      const want = readJsonExact(vector(`${name}.expected.json`)) as Record<string, unknown>;
      // A rejected file: its JSON on stdout, then exit 2 with the one-line error.
      expect(status).toBe(want.accepted ? 0 : 2);
      expect(stderr).toMatch(want.accepted ? /^$/ : /^profpack: ERR_TACHYON_\w+: .*\n$/);
      // The vectors' full shape (check_with_cpython.py --expected reads it).
      expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
      for (const key of ['schema', 'file', 'file_size', 'sha256', 'replay_count', 'replay_stats', 'collect_calls'])
        expect(got[key], key).toEqual(want[key]);
      const layout = got.layout as Record<string, unknown>;
      const wantLayout = want.layout as Record<string, unknown>;
      for (const key of Object.keys(layout).filter((k) => k !== 'source' && k !== 'footer' && k !== 'error'))
        expect(layout[key], key).toEqual(wantLayout[key]);
      expect(got.accepted).toBe(want.accepted);
      expect(got.stage).toBe(want.stage);
      expect(got.info).toEqual(want.info);
      expect(got.samples).toEqual(want.samples);
      const error = got.error as { code: string; message: string } | null;
      if (want.error === null) expect(error).toBeNull();
      else {
        expect(error!.message).toBe((want.error as { message: string }).message);
        expect(error!.code).toMatch(/^ERR_TACHYON_/);
        expect(got.samples_before_error).toBe(want.samples_before_error);
      }
    });
  }

  it('writes integers beyond 2^53 exactly', () => {
    const { stdout } = run('dump', vector('s13_timestamp_gaps_none.bin'), '--json');
    const want = readJsonExact(vector('s13_timestamp_gaps_none.expected.json')) as {
      samples: { timestamp_us: unknown }[];
    };
    const big = want.samples.map((s) => s.timestamp_us).filter((t): t is bigint => typeof t === 'bigint');
    expect(big.length).toBeGreaterThan(0);
    for (const t of big) expect(stdout).toContain(`"timestamp_us":${t}`);
  });
});

describe('profpack info and user errors', () => {
  it('info summarises the header and the samples', () => {
    const { status, stdout } = run('info', vector('r01_cpu_wall_none.bin'));
    expect(status).toBe(0);
    expect(stdout).toMatch(/samples: +1294/);
    expect(stdout).toMatch(/threads: +1/);
    expect(stdout).toMatch(/duration: +2\.027 s/);
    expect(stdout).toMatch(/mode: +wall/);
    expect(stdout).toMatch(/sampled span: .*1294 samples/);
  });

  it('a version-2 file whose records count many samples: info counts samples, as go tool pprof does the source', () => {
    // Go's CPU profile merges ticks of one stack into a sample of count n: 197 samples in 164 records.
    const source = sharedPath('data', 'outside', 'go-runtime-pprof.cpu.pb.gz');
    const want = goPprofRawTotals(source).find((t) => t.type === 'samples')!.total;
    const v2 = path.join(scratch, 'go.v2.tach');
    expect(run('convert', '-q', source, '--tachyon-version', '2', '-o', v2).status).toBe(0);
    const { status, stdout } = run('info', v2);
    expect(status).toBe(0);
    const samples = /^samples: +(\d+)(?: \(in (\d+) records\))?$/m.exec(stdout);
    expect(Number(samples?.[1])).toBe(want);
    expect(Number(samples?.[2])).toBeLessThan(want);
    expect(Number(/^sampled span: .*\((\d+) samples/m.exec(stdout)?.[1])).toBe(want);
  });

  it('a rejected file: exit 2, one line with code and message, no stack', () => {
    const { status, stdout, stderr } = run('info', vector('e01_bad_magic.bin'));
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('profpack: ERR_TACHYON_BAD_MAGIC: Invalid magic number: 0x12345678 (at byte 0)\n');
  });

  it('a file that is no known profile: ERR_CONVERT_UNKNOWN_FORMAT at byte 0 naming the formats tried, not Tachyon', () => {
    const notes = path.join(scratch, 'notes.txt');
    writeFileSync(notes, 'not a profile at all\n');
    const { status, stdout, stderr } = run('info', notes);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^profpack: ERR_CONVERT_UNKNOWN_FORMAT: cannot tell the input format \(not Tachyon.*pprof.*\) \(at byte 0\)\n$/,
    );
    expect(stderr).not.toMatch(/magic|header/i);
  });

  it('a missing file and a bad command are user errors too', () => {
    const missing = run('dump', path.join(repoRoot, 'no-such-file.bin'), '--json');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^profpack: ERR_TACHYON_IO: .*no-such-file\.bin.*\n$/);
    const bad = run('frobnicate');
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('main.ts is an executable script', () => {
    expect(readFileSync(path.join(repoRoot, 'lib', 'cli', 'main.ts'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(
      true,
    );
  });
});
