// test tier: slow (writers on /dev/full, size limits, broken pipes and SIGKILL, each in a child, ~14 s)
/**
 * Write faults, each in a child process so that a crash cannot hide: the
 * writer on /dev/full (ENOSPC), under a file-size limit (EFBIG), on a pipe
 * whose reader goes away (EPIPE), and killed by SIGKILL before its first
 * flush, in the middle of a profile, and after flush(). Errors must be ProfpackErrors;
 * a killed writer's file must be reported as not finalized, and the bytes it
 * had flushed must be exactly the bytes a finished file has there.
 * (test/tachyon/write/faults.test.ts covers the in-process side.)
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/write/index';
import { inflatePrefix, readCode } from '../support/refusals';
import { testedBackends } from '../support/backends';
import { scratchDir } from '../support/scratch-dir';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { busySample } = require('./child/samples.cjs') as {
  busySample: (i: number) => Parameters<ProfileWriter['writeSample']>[0];
};

const dir = scratchDir('profpack-write-faults-');
const child = path.join(__dirname, 'child', 'write-faults.cjs');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Line = Record<string, any>;

function lines(stdout: string): Line[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

function runChild(args: string[]): { status: number | null; signal: string | null; lines: Line[]; stderr: string } {
  const run = spawnSync(process.execPath, [child, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, signal: run.signal, lines: lines(run.stdout), stderr: run.stderr };
}

/** Waits for `count` JSON lines from a child that runs until killed, then SIGKILLs it; returns the lines. */
async function untilLines(proc: ChildProcessByStdio<null, Readable, Readable>, count: number): Promise<Line[]> {
  let out = '';
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<string | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
  const got = await new Promise<Line[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fewer than ${count} lines within 60 s: ${stderr}`)), 60_000);
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const done = out
        .split('\n')
        .slice(0, -1)
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
      if (done.length >= count) {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        resolve(done);
      }
    });
    proc.on('exit', () => reject(new Error(`child exited before it was killed: ${stderr}`)));
  });
  expect(await exited).toBe('SIGKILL');
  return got;
}

/** The file a writer that was never interrupted makes from samples 0..n-1. */
function referenceFile(which: 'native' | 'js', compression: 'none' | 'zstd', n: number): Uint8Array {
  const file = path.join(dir, `reference-${which}-${compression}-${n}.bin`);
  const writer = new ProfileWriter(file, { sampleIntervalUs: 1000, compression, backend: which });
  for (let i = 0; i < n; i++) writer.writeSample(busySample(i), 1000 + i);
  writer.finalize();
  return new Uint8Array(readFileSync(file));
}

for (const which of testedBackends) {
  for (const compression of ['none', 'zstd'] as const) {
    describe(`${which} writer, ${compression}`, () => {
      it('/dev/full: ENOSPC at creation (the header write) is a ProfpackError', () => {
        const r = runChild(['devfull', which, compression]);
        expect(r.signal, r.stderr).toBeNull();
        expect(r.status, r.stderr).toBe(0);
        const [open, done] = r.lines;
        // The 64 zero header bytes are written by the constructor: /dev/full refuses them.
        expect(open).toMatchObject({
          step: 'open',
          ok: false,
          error: { profpack: true, code: 'ERR_TACHYON_WRITE_IO' },
        });
        expect(open!.error.message).toMatch(/ENOSPC/);
        expect(done).toMatchObject({ step: 'done' });
      });

      it('a file-size limit hit at the first buffer flush: EFBIG is a ProfpackError, then the writer is broken', () => {
        const file = path.join(dir, `efbig-${which}-${compression}.bin`);
        // 4 KiB limit (ulimit -f counts KiB in bash; the first flush is larger, compressed or not);
        // SIGXFSZ ignored, so write() fails with EFBIG.
        const run = spawnSync(
          'bash',
          [
            '-c',
            'trap "" XFSZ; ulimit -f 4; exec "$@"',
            'bash',
            process.execPath,
            child,
            'efbig',
            which,
            compression,
            file,
          ],
          {
            encoding: 'utf8',
            timeout: 60_000,
          },
        );
        expect(run.signal, run.stderr).toBeNull();
        expect(run.status, run.stderr).toBe(0);
        const [open, write, finalize, close, done] = lines(run.stdout);
        expect(open).toMatchObject({ step: 'open', ok: true });
        expect(write).toMatchObject({
          step: 'write',
          state: 'broken',
          error: { profpack: true, code: 'ERR_TACHYON_WRITE_IO' },
        });
        expect(write!.error.message).toMatch(/EFBIG/);
        expect(finalize).toMatchObject({
          step: 'finalize',
          ok: false,
          error: { profpack: true, code: 'ERR_TACHYON_WRITE_BROKEN' },
        });
        expect(close).toMatchObject({ step: 'close', ok: true });
        expect(done).toMatchObject({ step: 'done' });
        // What the failing write() managed to put there stays: the header and records up to the limit.
        expect(statSync(file).size).toBe(4096);
        for (const r of testedBackends) expect(readCode(file, r)).toBe('ERR_TACHYON_NOT_FINALIZED');
      });

      it('a pipe whose reader exits: every error is a ProfpackError, no crash', async () => {
        const fifo = path.join(dir, `fifo-${which}-${compression}`);
        expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
        // The reader takes 4 KiB and leaves; the writer's next write gets EPIPE
        // (Node ignores SIGPIPE), or its seek fails if it needs one first.
        const reader = spawn('head', ['-c', '4096', fifo], { stdio: ['ignore', 'ignore', 'inherit'] });
        const readerExit = new Promise<number | null>((resolve) => reader.on('exit', resolve));
        const r = runChild(['pipe', which, compression, fifo]);
        await readerExit;
        expect(r.signal, r.stderr).toBeNull();
        expect(r.status, r.stderr).toBe(0);
        const errors = r.lines.filter((l) => l.error !== undefined).map((l) => l.error);
        expect(errors.length).toBeGreaterThan(0);
        for (const e of errors) expect(e, JSON.stringify(r.lines)).toMatchObject({ profpack: true });
        // Observed: the writer opens the FIFO, the first or second buffer flush fails.
        const write = r.lines.find((l) => l.step === 'write');
        expect(write).toMatchObject({ state: 'broken', error: { code: 'ERR_TACHYON_WRITE_IO' } });
        expect(write!.error.message).toMatch(/EPIPE/);
        expect(r.lines.find((l) => l.step === 'finalize')).toMatchObject({
          ok: false,
          error: { code: 'ERR_TACHYON_WRITE_BROKEN' },
        });
        expect(r.lines.at(-1)).toMatchObject({ step: 'done' });
      });

      it("SIGKILL mid-profile: reported not finalized; flushed bytes are the finished file's", async () => {
        const file = path.join(dir, `killed-${which}-${compression}.bin`);
        const proc = spawn(process.execPath, [child, 'kill', which, compression, file], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let stderr = '';
        proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const flushes: Line[] = [];
        const exited = new Promise<string | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no flush within 60 s: ${stderr}`)), 60_000);
          proc.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            const done = out.split('\n').filter(Boolean);
            // The header (64 bytes) is on disk from the start; count the flushes of records.
            flushes.splice(0, flushes.length, ...done.map((l) => JSON.parse(l) as Line).filter((l) => l.size > 64));
            // Two flushes: the second one is mid-profile, after real data.
            if (flushes.length >= 2) {
              clearTimeout(timer);
              proc.kill('SIGKILL');
              resolve();
            }
          });
          proc.on('exit', () => reject(new Error(`writer exited before it was killed: ${stderr}`)));
        });
        expect(await exited).toBe('SIGKILL');
        const last = flushes.at(-1)!;
        const killed = new Uint8Array(readFileSync(file));
        expect(killed.length).toBeGreaterThanOrEqual(last.size);
        expect(statSync(file).size).toBe(killed.length);
        // Both readers call it what it is.
        for (const r of testedBackends) expect(readCode(file, r)).toBe('ERR_TACHYON_NOT_FINALIZED');
        expect(killed.subarray(0, 64).every((b) => b === 0)).toBe(true);
        // Everything on disk after the header is byte for byte what an
        // uninterrupted writer puts there (the records up to the last flush).
        const reference = referenceFile(which, compression, last.samplesWritten + 20_000);
        expect(reference.length).toBeGreaterThan(killed.length);
        const differs = killed.findIndex((b, i) => i >= 64 && b !== reference[i]);
        expect(differs).toBe(-1);
      });

      it('SIGKILL before the first buffer flush: the 64 zero header bytes, reported not finalized', async () => {
        const file = path.join(dir, `killed-early-${which}-${compression}.bin`);
        const proc = spawn(process.execPath, [child, 'kill-early', which, compression, file], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const ready = await untilLines(proc, 1);
        expect(ready[0]).toMatchObject({ step: 'ready', size: 64, state: 'open' });
        const bytes = readFileSync(file);
        expect(bytes.length).toBe(64);
        expect(bytes.every((b) => b === 0)).toBe(true);
        for (const r of testedBackends) expect(readCode(file, r)).toBe('ERR_TACHYON_NOT_FINALIZED');
      });

      it('SIGKILL after flush(): every record acknowledged by the last flush is on disk', async () => {
        const file = path.join(dir, `killed-flush-${which}-${compression}.bin`);
        const proc = spawn(process.execPath, [child, 'kill-flush', which, compression, file], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const acks = await untilLines(proc, 3);
        const last = acks.at(-1)!;
        const killed = new Uint8Array(readFileSync(file));
        expect(killed.length).toBeGreaterThanOrEqual(last.position);
        for (const r of testedBackends) expect(readCode(file, r)).toBe('ERR_TACHYON_NOT_FINALIZED');
        // The uninterrupted raw file's records for the same samples (busySample never repeats a stack).
        const reference = referenceFile(which, 'none', last.samplesWritten + 1000).subarray(64);
        const records = compression === 'none' ? killed.subarray(64) : inflatePrefix(killed.subarray(64));
        expect(records.length).toBeGreaterThanOrEqual(last.bytesWritten);
        expect(Buffer.compare(records, reference.subarray(0, records.length))).toBe(0);
      });
    });
  }
}
