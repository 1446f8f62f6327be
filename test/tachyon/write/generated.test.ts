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
import { repoRoot } from '../../support/environment';
import { cpythonInterpreter } from '../../support/cpython.mjs';
import {
  materialize,
  profileArb,
  U64,
  writeSampleFile,
  writeWithProfpack,
  type CallSpec,
  type ProfileSpec,
} from '../../support/writer-profiles';

/**
 * One idle thread repeating its stack 20 000 times (2-byte deltas: REPEAT runs
 * split every 5458 samples at the 16 KiB buffer) while two busy threads write
 * records in between, so the split runs land between other threads' records.
 */
function repeatOverflow(compression: 'none' | 'zstd'): ProfileSpec {
  const frames = Array.from({ length: 8 }, (_, i) => ({
    filename: 'idle.py',
    funcname: `f${i}`,
    location: { lineno: i, endLineno: i, colOffset: 0, endColOffset: 1 },
    opcode: null,
  }));
  const calls: CallSpec[] = [
    {
      step: 1000n,
      samples: [0, 1, 2].map((thread) => ({
        thread,
        status: 1,
        op: { kind: 'replace' as const, frames: [thread, 3, 4] },
      })),
    },
  ];
  for (let i = 1; i < 20_000; i++) {
    calls.push({
      step: 1000n,
      samples: [
        { thread: 0, status: i % 5000 === 0 ? 2 : 1, op: { kind: 'same' } },
        { thread: 1, status: 0, op: i % 3 === 0 ? { kind: 'same' } : { kind: 'popPush', count: 1, frames: [i % 7] } },
        ...(i % 2000 === 0 ? [{ thread: 2, status: 0, op: { kind: 'push' as const, frames: [5] } }] : []),
      ],
    });
  }
  return {
    compression,
    startTimeUs: 0n,
    intervalUs: 1000n,
    threads: [0n, 1n, 2n].map((t) => ({ threadId: 100n + t, interpreterId: 0 })),
    frames,
    calls,
  };
}

/**
 * Samples wider than writeSample's first staging (4,096 words): 40 threads on three interpreters, most of them 250-300
 * frames deep, so one call stages past it twice and the thread headers staged before each growth must survive it;
 * thread ids up to 2^64-1 and statuses beyond a byte, converted once in the first pass.
 */
function wideSamples(compression: 'none' | 'zstd'): ProfileSpec {
  const frames = Array.from({ length: 64 }, (_, i) => ({
    filename: `wide${i % 5}.py`,
    funcname: `f${i}`,
    location: i % 9 === 0 ? null : { lineno: i, endLineno: i + (i % 2), colOffset: i % 7, endColOffset: 9 },
    opcode: i % 3 === 0 ? null : i,
  }));
  const threads = Array.from({ length: 40 }, (_, t) => ({
    threadId: t === 0 ? U64 : (1n << 40n) + BigInt(t * 4099),
    interpreterId: t % 3 === 2 ? 0xffff_ffff : t % 3,
  }));
  const calls: CallSpec[] = Array.from({ length: 30 }, (_, c) => ({
    step: c % 7 === 6 ? -3000n : 1000n,
    samples: threads.map((_, thread) => ({
      thread,
      status: (c * 31 + thread) % 3 === 0 ? 259 + thread : (c + thread) % 64,
      op:
        c === 0 || (c + thread) % 11 === 0
          ? { kind: 'deep' as const, depth: thread % 4 === 0 ? 30 : 250 + ((c + thread) % 51), salt: (c + thread) % 8 }
          : (c + thread) % 2 === 0
            ? { kind: 'same' as const }
            : { kind: 'popPush' as const, count: 1 + (c % 3), frames: [c % 64, (thread * 5) % 64] },
    })),
  }));
  return { compression, startTimeUs: 5000n, intervalUs: 1000n, threads, frames, calls };
}

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
    const specs = [
      repeatOverflow('none'),
      repeatOverflow('zstd'),
      wideSamples('none'),
      wideSamples('zstd'),
      ...fc.sample(profileArb, { numRuns: 40, seed }),
    ];
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
      if (i < 2) expect(stats.repeatRecords).toBeGreaterThan(3); // the idle thread's run was split
      writer.finalize();
      return { file, theirs, stats };
    });
    const run = spawnSync(python, [path.join(repoRoot, 'bench', 'cpython_write.py'), ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const results = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as CpythonRun);
    expect(results.length).toBe(specs.length);
    for (let i = 0; i < specs.length; i++) {
      const where = `profile g${i} (fast-check seed ${seed})`;
      const a = readFileSync(ours[i]!.file);
      const b = readFileSync(ours[i]!.theirs);
      let diff = 0;
      while (diff < a.length && diff < b.length && a[diff] === b[diff]) diff++;
      expect(
        diff === a.length && diff === b.length ? -1 : diff,
        `${where}: first differing byte (sizes ${a.length} / ${b.length})`,
      ).toBe(-1);
      const c = results[i]!.stats;
      const s = ours[i]!.stats;
      expect(
        [
          s.repeatRecords,
          s.repeatSamples,
          s.fullRecords,
          s.suffixRecords,
          s.popPushRecords,
          s.totalRecords,
          s.totalSamples,
          s.totalFramesWritten,
          s.framesSaved,
          s.bytesWritten,
        ],
        where,
      ).toEqual([
        c.repeat_records,
        c.repeat_samples,
        c.full_records,
        c.suffix_records,
        c.pop_push_records,
        c.total_records,
        c.total_samples,
        c.total_frames_written,
        c.frames_saved,
        c.bytes_written,
      ]);
      expect(s.frameCompressionPct, where).toBeCloseTo(c.frame_compression_pct!, 9);
    }
  }, 120_000);
});
