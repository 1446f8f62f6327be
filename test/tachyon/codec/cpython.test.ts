import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../../lib/tachyon/index';
import { sharedPath } from '../../support/environment';
import { cpythonInterpreter } from '../../support/cpython.mjs';

let python = '';
const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-'));
const checker = sharedPath('tools', 'cpython315', 'check_with_cpython.py');

beforeAll(() => {
  // A missing CPython must fail this suite, not skip it.
  python = cpythonInterpreter();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cpythonVerdict(file: string): {
  status: number | null;
  stderr: string;
  dump: { accepted: boolean; stage: string; error: { message: string } | null };
} {
  const run = spawnSync(python, [checker, file, '--json', '--python', python], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr, dump: JSON.parse(run.stdout) };
}

describe('CPython 3.15 and version 2', () => {
  for (const stackCoding of ['predict', 'stacktable'] as const) {
    it(`refuses a version-2 file at open, before any sample (${stackCoding})`, () => {
      const file = path.join(dir, `${stackCoding}.bin`);
      const w = new ProfileWriter(file, {
        sampleIntervalUs: 1000,
        startTimeUs: 1_000_000,
        formatVersion: 2,
        stackCoding,
      });
      const f = w.internFrame({
        filename: 'app.py',
        funcname: 'main',
        lineno: 10,
        endLineno: 10,
        column: 4,
        endColumn: 8,
      });
      for (let i = 0; i < 10; i++) w.writeStack(4242n, 0, 1_000_000 + i * 1000, 0x23, [f]);
      w.finalize();
      const verdict = cpythonVerdict(file);
      expect(verdict.status).toBe(1);
      expect(verdict.dump.accepted).toBe(false);
      expect(verdict.dump.stage).toBe('open');
      expect(verdict.dump.error?.message).toMatch(/format version 2/);
    });
  }

  it('accepts a hand-made empty version-1 file (the harness can say yes)', () => {
    // Sanity of the harness: an empty version-1 file written by hand is accepted.
    const file = path.join(dir, 'empty-v1.bin');
    const header = Buffer.alloc(64);
    header.write('HCAT', 0, 'latin1');
    header.writeUInt32LE(1, 4);
    header.set([3, 15, 2], 8);
    header.writeBigUInt64LE(64n, 40);
    header.writeBigUInt64LE(64n, 48);
    const footer = Buffer.alloc(32);
    footer.writeBigUInt64LE(96n, 8);
    writeFileSync(file, Buffer.concat([header, footer]));
    const verdict = cpythonVerdict(file);
    expect(verdict.dump.accepted).toBe(true);
  });
});
