/**
 * Byte identity with CPython 3.15.2's writer beyond the vectors: the same
 * fast-check-generated write_sample calls go to CPython's BinaryWriter
 * (bench/cpython_write.py, one process for the batch) and to ProfileWriter;
 * the files must be identical, zstd ones included, and get_stats() must
 * agree with our stats.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../shared';
import { cpythonInterpreter, materialize, profileArb, writeSampleFile, writeWithProfpack } from './writer-support';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-writer-generated-'));
afterAll(() => {
  if (process.env.PROFPACK_KEEP_TMP === undefined) rmSync(dir, { recursive: true, force: true });
});

let python = '';
beforeAll(() => {
  python = cpythonInterpreter();
  expect(python).toMatch(/python3\.15$/);
}, 180_000);

interface CpythonRun {
  file: string;
  samples: number;
  stats: Record<string, number>;
}

describe('ProfileWriter and CPython 3.15.2 write the same bytes for the same calls', () => {
  it('generated profiles: identical files and counters', () => {
    const seed = Number(process.env.PROFPACK_SEED ?? Date.now() % 2 ** 31);
    const specs = fc.sample(profileArb, { numRuns: 40, seed });
    const args: string[] = [];
    const ours = specs.map((spec, i) => {
      const calls = materialize(spec);
      const samplesFile = path.join(dir, `g${i}.samples`);
      writeSampleFile(samplesFile, spec, calls);
      const theirs = path.join(dir, `g${i}.cpython.bin`);
      args.push(samplesFile, theirs);
      const file = path.join(dir, `g${i}.profpack.bin`);
      const writer = writeWithProfpack(spec, calls, file);
      const stats = writer.stats;
      writer.finalize();
      return { file, theirs, stats };
    });
    const run = spawnSync(python, [path.join(repoRoot, 'bench', 'cpython_write.py'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as CpythonRun);
    expect(results.length).toBe(specs.length);
    for (let i = 0; i < specs.length; i++) {
      const where = `profile g${i} (fast-check seed ${seed})`;
      const a = readFileSync(ours[i]!.file);
      const b = readFileSync(ours[i]!.theirs);
      let diff = 0;
      while (diff < a.length && diff < b.length && a[diff] === b[diff]) diff++;
      expect(diff === a.length && diff === b.length ? -1 : diff, `${where}: first differing byte (sizes ${a.length} / ${b.length})`).toBe(-1);
      const c = results[i]!.stats;
      const s = ours[i]!.stats;
      expect(
        [s.repeatRecords, s.repeatSamples, s.fullRecords, s.suffixRecords, s.popPushRecords, s.totalRecords, s.totalSamples, s.totalFramesWritten, s.framesSaved, s.bytesWritten],
        where,
      ).toEqual([c.repeat_records, c.repeat_samples, c.full_records, c.suffix_records, c.pop_push_records, c.total_records, c.total_samples, c.total_frames_written, c.frames_saved, c.bytes_written]);
      expect(s.frameCompressionPct, where).toBeCloseTo(c.frame_compression_pct!, 9);
    }
  }, 120_000);
});
