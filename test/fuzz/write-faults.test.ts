/**
 * Write faults, each in a child process so that a crash cannot hide: the
 * writer on /dev/full (ENOSPC), on a pipe whose reader goes away (EPIPE), and
 * killed by SIGKILL in the middle of a profile. Errors must be ProfpackErrors;
 * a killed writer's file must be reported as not finalized, and the bytes it
 * had flushed must be exactly the bytes a finished file has there.
 * (test/tachyon/writer-faults.test.ts covers the in-process side.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { isProfpackError } from '../../lib/errors';
import { ProfileReader } from '../../lib/tachyon/reader';
import { ProfileWriter } from '../../lib/tachyon/writer';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { busySample } = require('./child/samples.cjs') as { busySample: (i: number) => Parameters<ProfileWriter['writeSample']>[0] };

const backends: ('native' | 'js')[] = backend.name === 'native' ? ['native', 'js'] : ['js'];
const dir = mkdtempSync(path.join(tmpdir(), 'profpack-write-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
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

function readCode(file: string, which: 'native' | 'js'): string {
  try {
    const reader = ProfileReader.open(file, { backend: which });
    for (const _ of reader.samples());
    reader.close();
    return 'ok';
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    return err.code;
  }
}

/** The file a writer that was never interrupted makes from samples 0..n-1. */
function referenceFile(which: 'native' | 'js', compression: 'none' | 'zstd', n: number): Uint8Array {
  const file = path.join(dir, `reference-${which}-${compression}-${n}.bin`);
  const writer = new ProfileWriter(file, { sampleIntervalUs: 1000, compression, backend: which });
  for (let i = 0; i < n; i++) writer.writeSample(busySample(i), 1000 + i);
  writer.finalize();
  return new Uint8Array(readFileSync(file));
}

for (const which of backends) {
  for (const compression of ['none', 'zstd'] as const) {
    describe(`${which} writer, ${compression}`, () => {
      it('/dev/full: ENOSPC is a ProfpackError, then the writer is broken', () => {
        const r = runChild(['devfull', which, compression]);
        expect(r.signal, r.stderr).toBeNull();
        expect(r.status, r.stderr).toBe(0);
        const [open, write, finalize, close, done] = r.lines;
        expect(open).toMatchObject({ step: 'open', ok: true });
        expect(write).toMatchObject({ step: 'write', state: 'broken', error: { profpack: true, code: 'ERR_TACHYON_WRITE_IO' } });
        expect(write!.error.message).toMatch(/ENOSPC/);
        expect(finalize).toMatchObject({ step: 'finalize', ok: false, error: { profpack: true, code: 'ERR_TACHYON_WRITE_BROKEN' } });
        expect(close).toMatchObject({ step: 'close', ok: true });
        expect(done).toMatchObject({ step: 'done' });
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
        // Observed: the writer opens the FIFO, the first 512 KiB flush fails.
        const write = r.lines.find((l) => l.step === 'write');
        expect(write).toMatchObject({ state: 'broken', error: { code: 'ERR_TACHYON_WRITE_IO' } });
        expect(write!.error.message).toMatch(/EPIPE/);
        expect(r.lines.find((l) => l.step === 'finalize')).toMatchObject({ ok: false, error: { code: 'ERR_TACHYON_WRITE_BROKEN' } });
        expect(r.lines.at(-1)).toMatchObject({ step: 'done' });
      });

      it('SIGKILL mid-profile: reported not finalized; flushed bytes are the finished file\'s', async () => {
        const file = path.join(dir, `killed-${which}-${compression}.bin`);
        const proc = spawn(process.execPath, [child, 'kill', which, compression, file], { stdio: ['ignore', 'pipe', 'pipe'] });
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
            flushes.splice(0, flushes.length, ...done.map((l) => JSON.parse(l) as Line));
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
        for (const r of backends) expect(readCode(file, r)).toBe('ERR_TACHYON_NOT_FINALIZED');
        expect(killed.subarray(0, 64).every((b) => b === 0)).toBe(true);
        // Everything on disk after the header is byte for byte what an
        // uninterrupted writer puts there (the records up to the last flush).
        const reference = referenceFile(which, compression, last.samplesWritten + 20_000);
        expect(reference.length).toBeGreaterThan(killed.length);
        const differs = killed.findIndex((b, i) => i >= 64 && b !== reference[i]);
        expect(differs).toBe(-1);
      });
    });
  }
}
