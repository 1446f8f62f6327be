// Renames and removals on Windows retry while another process holds the file
// (EBUSY, EPERM, EACCES); elsewhere those codes fail at once.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RETRY_WAITS_MS, removeFile, renameReplacing, retryingOnWindows } from '../lib/file-retry';

const failing = (code: string): Error => Object.assign(new Error(`${code}: held by another process`), { code });

/** An operation that fails with `codes` in turn, then succeeds; counts its calls. */
function flaky(codes: string[]): { op: () => void; calls: () => number } {
  let calls = 0;
  return {
    op: () => {
      const code = codes[calls++];
      if (code !== undefined) throw failing(code);
    },
    calls: () => calls,
  };
}

describe('retryingOnWindows', () => {
  it('on Windows, retries EBUSY, EPERM and EACCES until the operation succeeds', () => {
    const waits: number[] = [];
    const f = flaky(['EBUSY', 'EPERM', 'EACCES']);
    retryingOnWindows(f.op, 'win32', (ms) => waits.push(ms));
    expect(f.calls()).toBe(4);
    expect(waits).toEqual(RETRY_WAITS_MS.slice(0, 3));
  });

  it('on Windows, gives up after the last wait with the last error', () => {
    const waits: number[] = [];
    const f = flaky(Array(20).fill('EBUSY'));
    expect(() => retryingOnWindows(f.op, 'win32', (ms) => waits.push(ms))).toThrow(/EBUSY/);
    expect(f.calls()).toBe(RETRY_WAITS_MS.length + 1);
    expect(waits).toEqual(RETRY_WAITS_MS);
  });

  it('does not retry other errors, nor anything outside Windows', () => {
    for (const [platform, code] of [
      ['win32', 'ENOENT'],
      ['linux', 'EPERM'],
      ['darwin', 'EBUSY'],
    ] as const) {
      const waits: number[] = [];
      const f = flaky([code]);
      expect(() => retryingOnWindows(f.op, platform, (ms) => waits.push(ms))).toThrow(code);
      expect(f.calls()).toBe(1);
      expect(waits).toEqual([]);
    }
  });
});

describe('renameReplacing and removeFile', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'profpack-file-retry-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('renames over an existing file, and removes a file that may already be gone', () => {
    const from = path.join(dir, 'a.new');
    const to = path.join(dir, 'a');
    writeFileSync(to, 'old');
    writeFileSync(from, 'new');
    renameReplacing(from, to);
    expect(readFileSync(to, 'utf8')).toBe('new');
    expect(existsSync(from)).toBe(false);
    removeFile(to);
    expect(existsSync(to)).toBe(false);
    removeFile(to);
    // A directory is not a file: refused, as fs.rmSync without `recursive` refuses it.
    expect(() => removeFile(dir)).toThrow(expect.objectContaining({ code: expect.stringMatching(/^E/) }));
    expect(existsSync(dir)).toBe(true);
  });

  it('passes a real failure through: a missing source', () => {
    expect(() => renameReplacing(path.join(dir, 'missing'), path.join(dir, 'b'))).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});
