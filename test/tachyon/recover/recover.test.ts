/**
 * recover() and `profpack recover`: a writer process that flushes and is then
 * SIGKILLed leaves a profile from which every sample up to its last flush is
 * recovered, equal to what a writer given the same samples writes (both
 * compressions, both backends); flushIntervalMs bounds what a kill loses; the
 * journal is gone after finalize; without a journal the complete records are
 * kept with unnamed frames; bad input is a coded error.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../lib/errors';
import { ProfileReader, ProfileWriter, recover, type ProfileWriterOptions } from '../../../lib/tachyon/index';
import { thrown } from '../../support/refusals';
import { repoRoot } from '../../support/environment';
import { testedBackends } from '../../support/backends';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { writerOptions, writeSamples, internFrames } = require('../child/write-until-killed.cjs') as {
  writerOptions: (
    backend: 'native' | 'js',
    compression: 'zstd' | 'none',
  ) => Pick<ProfileWriterOptions, 'sampleIntervalUs' | 'startTimeUs' | 'backend' | 'compression'>;
  writeSamples: (w: ProfileWriter, ids: number[], from: number, to: number) => void;
  internFrames: (w: ProfileWriter) => number[];
};

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-recover-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const tmp = (tag: string) => path.join(dir, `${tag}-${n++}.bin`);

/** Runs the child until it prints a line matching `until`, SIGKILLs it, returns the lines it printed. */
function killAfter(args: string[], until: (line: string) => boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'child', 'write-until-killed.cjs'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let err = '';
    let buffered = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.stdout.on('data', (b: Buffer) => {
      buffered += b.toString();
      let i: number;
      while ((i = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        lines.push(line);
        if (until(line)) child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(lines) : reject(new Error(`child exited ${code} ${signal}: ${err}`)),
    );
  });
}

function contents(file: string, which: 'native' | 'js') {
  const reader = ProfileReader.open(file, { backend: which });
  const samples = [...reader.samples()].map((s) => ({ ...s, stack: s.stack.map((i) => reader.frames[i]) }));
  const info = reader.info;
  reader.close();
  return { samples, info };
}

/** What a writer given the first `count` samples of the sequence finalizes to. */
function reference(count: number, compression: 'zstd' | 'none', which: 'native' | 'js'): string {
  const file = tmp('reference');
  const w = new ProfileWriter(file, { ...writerOptions(which, compression), mode: 'cpu' });
  writeSamples(w, internFrames(w), 0, count);
  w.finalize();
  return file;
}

for (const which of testedBackends) {
  describe(`recover (${which})`, () => {
    for (const compression of ['none', 'zstd'] as const) {
      it(`${compression}: a writer SIGKILLed after flush() gives back every sample up to the last flush`, async () => {
        const file = tmp(`killed-${compression}`);
        const lines = await killAfter([which, compression, file, 'flush'], (l) => l === 'waiting');
        expect(lines[0]).toBe('flushed 6000');
        // Before recovery the profile is unreadable: the header is still zero.
        expect(() => ProfileReader.open(file, { backend: which })).toThrow(
          expect.objectContaining({ code: ErrorCode.TACHYON_NOT_FINALIZED }),
        );
        const out = tmp('recovered');
        const result = recover(file, out, { backend: which });
        expect(result).toMatchObject({ source: 'journal', samples: 6000, threads: 3, frames: 64, checkpoints: 3 });
        const got = contents(out, which);
        const want = contents(reference(6000, compression, which), which);
        expect(got.samples.length).toBe(6000);
        expect(got.samples).toEqual(want.samples);
        expect(got.info.startTimeUs).toBe(1_000_000n);
        expect(got.info.sampleIntervalUs).toBe(250n);
        expect(got.info.mode).toBe(want.info.mode);
        expect(got.info.compressionType).toBe(want.info.compressionType);
      });
    }

    it('flushIntervalMs: a writer SIGKILLed between timed flushes loses nothing written before the last pause', async () => {
      const file = tmp('interval');
      const lines = await killAfter([which, 'zstd', file, 'interval'], (l) => l === 'batch 2000');
      const announced = Number(lines.at(-1)!.split(' ')[1]);
      const out = tmp('recovered');
      const result = recover(file, out, { backend: which });
      expect(result.source).toBe('journal');
      expect(result.samples).toBeGreaterThanOrEqual(announced);
      const got = contents(out, which);
      expect(got.samples).toEqual(contents(reference(result.samples, 'zstd', which), which).samples);
    });

    it('finalize() and close() remove the journal; a writer that never flushed leaves none', () => {
      const file = tmp('journal');
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
      const ids = internFrames(w);
      writeSamples(w, ids, 0, 100);
      expect(fs.existsSync(`${file}.journal`)).toBe(false);
      w.flush();
      expect(fs.existsSync(`${file}.journal`)).toBe(true);
      w.finalize();
      expect(fs.existsSync(`${file}.journal`)).toBe(false);
      const closed = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
      closed.flush();
      expect(fs.existsSync(`${file}.journal`)).toBe(true);
      closed.close();
      expect(fs.existsSync(`${file}.journal`)).toBe(false);
      const off = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which, journal: false });
      off.flush();
      expect(fs.existsSync(`${file}.journal`)).toBe(false);
      off.close();
    });

    it('the journal of a long recording stays bounded (rewritten as one checkpoint) and still recovers everything', () => {
      const file = tmp('long');
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which, compression: 'zstd' });
      const ids = internFrames(w);
      let sizes = 0;
      // 40 idle threads repeating one stack: each flush's checkpoint carries their held-back runs.
      for (let flush = 0; flush < 300; flush++) {
        for (let t = 0; t < 40; t++) w.writeStack(100 + t, 0, 1000 * (flush + 1), 1, [ids[t]!, ids[0]!]);
        w.flush();
        sizes = Math.max(sizes, fs.statSync(`${file}.journal`).size);
      }
      expect(sizes).toBeLessThan(2 * 1024 * 1024);
      fs.copyFileSync(file, `${file}.dead`);
      fs.copyFileSync(`${file}.journal`, `${file}.dead.journal`);
      const out = tmp('recovered');
      expect(recover(`${file}.dead`, out, { backend: which })).toMatchObject({
        source: 'journal',
        samples: 12000,
        threads: 40,
      });
      w.finalize();
      expect(contents(out, which).samples).toEqual(contents(file, which).samples);
    });

    it('a writer broken by a write error keeps its journal; recover gives back every sample up to the last flush', () => {
      const file = tmp('broken');
      const w = new ProfileWriter(file, { ...writerOptions(which, 'zstd'), mode: 'cpu' });
      const ids = internFrames(w);
      writeSamples(w, ids, 0, 3000);
      w.flush();
      // The descriptor fails under the writer (as a vanished disk would): EBADF at the next write.
      fs.closeSync((w as unknown as { fd: number }).fd);
      writeSamples(w, ids, 3000, 4000);
      expect(thrown(() => w.flush()).code).toBe(ErrorCode.TACHYON_WRITE_IO);
      expect(w.state).toBe('broken');
      w.close();
      expect(fs.existsSync(`${file}.journal`)).toBe(true);
      const out = tmp('recovered');
      expect(recover(file, out, { backend: which })).toMatchObject({ source: 'journal', samples: 3000 });
      expect(contents(out, which).samples).toEqual(contents(reference(3000, 'zstd', which), which).samples);
    });

    it('without a journal: the complete records on disk, frames unnamed', async () => {
      const file = tmp('nojournal');
      await killAfter([which, 'none', file, 'flush'], (l) => l === 'waiting');
      fs.rmSync(`${file}.journal`);
      const out = tmp('recovered');
      const result = recover(file, out, { backend: which, startTimeUs: 1_000_000n });
      expect(result.source).toBe('records');
      // The held-back REPEAT runs are lost with the journal; every other sample written before the last flush is there.
      const want = contents(reference(6000, 'none', which), which).samples;
      const got = contents(out, which).samples;
      expect(got.length).toBe(result.samples);
      expect(got.length).toBeGreaterThan(4000);
      expect(got.length).toBeLessThan(6000);
      const firstThreadOne = (list: typeof got) =>
        list
          .filter((s) => s.threadId === 1n)
          .slice(0, 500)
          .map((s) => [s.timestampUs, s.stack.length]);
      expect(firstThreadOne(got)).toEqual(firstThreadOne(want));
      expect(got[0]!.stack[0]!.funcname).toMatch(/^<frame \d+>$/);
    });

    it('a finalized profile is copied; bad input is a coded error', () => {
      const done = reference(10, 'zstd', which);
      const out = tmp('copy');
      expect(recover(done, out, { backend: which }).source).toBe('finalized');
      expect(fs.readFileSync(out)).toEqual(fs.readFileSync(done));
      expect(thrown(() => recover(path.join(dir, 'missing.bin'), out)).code).toBe(ErrorCode.TACHYON_RECOVER_FAILED);
      expect(thrown(() => recover(dir, out)).code).toBe(ErrorCode.TACHYON_RECOVER_FAILED);
      expect(thrown(() => recover('', out)).code).toBe(ErrorCode.INVALID_ARGUMENT);
      const zero = tmp('zero');
      fs.writeFileSync(zero, new Uint8Array(64));
      fs.writeFileSync(`${zero}.journal`, 'not a journal at all, but long enough for a header');
      expect(thrown(() => recover(zero, out, { backend: which })).code).toBe(ErrorCode.TACHYON_JOURNAL_CORRUPT);
      expect(thrown(() => new ProfileWriter(tmp('x'), { sampleIntervalUs: 1, flushIntervalMs: 0 })).code).toBe(
        ErrorCode.INVALID_ARGUMENT,
      );
    });
  });
}

describe('profpack recover', () => {
  const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
  it('writes the recovered profile and says what it holds; a missing input is one coded line, exit 2', async () => {
    const file = tmp('cli');
    await killAfter([testedBackends[0]!, 'zstd', file, 'flush'], (l) => l === 'waiting');
    const out = tmp('cli-out');
    const ok = spawnSync(process.execPath, [cli, 'recover', file, out], { encoding: 'utf8' });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('6000 samples, 3 threads, 64 frames');
    expect(contents(out, testedBackends[0]!).samples.length).toBe(6000);
    const bad = spawnSync(process.execPath, [cli, 'recover', path.join(dir, 'missing.bin'), out], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^profpack: ERR_TACHYON_RECOVER_FAILED: .*\n$/);
  });
});
