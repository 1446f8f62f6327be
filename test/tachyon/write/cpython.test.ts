/**
 * Real CPython 3.15.2 reads what ProfileWriter writes: fast-check generates
 * profiles (many threads and interpreters, empty and 300-deep stacks, thread
 * ids up to 2^64-1, timestamps that go backwards, every status byte, zstd and
 * none), CPython's BinaryReader replays them (one process for the whole
 * batch) and every thread must come back with exactly the samples written.
 * Fails, never skips, when CPython cannot be found or installed.
 */
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cpythonBeforeTests, cpythonDumps, type CPythonDump } from '../../support/cpython-dump';
import type { DumpFrame } from '../../../lib/tachyon/index';
import type { FrameInfo } from '../../../lib/tachyon/write/index';
import {
  materialize,
  profileArb,
  readBack,
  U64,
  writeWithProfpack,
  type CallSpec,
  type ProfileSpec,
  type ThreadSpec,
} from '../../support/writer-profiles';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-writer-cpython-');

cpythonBeforeTests();

interface ExpectedSample {
  timestamp: bigint;
  status: number;
  frames: unknown[];
}

/** readBack in the key names of CPython's dump (end_lineno, end_column). */
function readBackAsCPython(f: FrameInfo): DumpFrame {
  const { endLineno, endColumn, ...rest } = readBack(f);
  return { ...rest, end_lineno: endLineno, end_column: endColumn };
}

/** Writes the profile; returns each thread's expected samples (in call order) and the totals. */
function writeProfile(spec: ProfileSpec, file: string): { perThread: Map<string, ExpectedSample[]>; samples: number } {
  const calls = materialize(spec);
  writeWithProfpack(spec, calls, file).finalize();
  const perThread = new Map<string, ExpectedSample[]>();
  let samples = 0;
  for (const call of calls) {
    for (const t of call.threads) {
      const key = `${t.threadId}/${t.interpreterId}`;
      if (!perThread.has(key)) perThread.set(key, []);
      perThread.get(key)!.push({
        timestamp: call.timestamp,
        status: Number(BigInt.asUintN(8, BigInt(t.status))),
        frames: t.stack.slice(0, 256).map((i) => readBackAsCPython(spec.frames[i]!)),
      });
      samples++;
    }
  }
  return { perThread, samples };
}

function checkAgainst(
  dump: CPythonDump,
  spec: ProfileSpec,
  expected: { perThread: Map<string, ExpectedSample[]>; samples: number },
): void {
  expect(dump.error).toBeNull();
  expect(dump.accepted).toBe(true);
  const info = dump.info!; // accepted: CPython read the header
  expect(info.sample_count).toBe(expected.samples);
  expect(info.thread_count).toBe(expected.perThread.size);
  expect(BigInt(info.start_time_us)).toBe(spec.startTimeUs);
  expect(BigInt(info.sample_interval_us)).toBe(spec.intervalUs);
  expect(info.compression_type).toBe(spec.compression === 'zstd' ? 1 : 0);
  expect(info.mode).toBe(spec.mode === undefined || spec.mode === -1 ? null : spec.mode);
  expect(info.capture_features).toBe(spec.features === undefined || spec.features === -1 ? null : spec.features);
  // File order interleaves threads differently from call order (deferred REPEAT runs); each thread's own order is kept.
  const got = new Map<string, ExpectedSample[]>();
  for (const s of dump.samples) {
    const key = `${BigInt(s.thread_id)}/${s.interpreter_id}`;
    if (!got.has(key)) got.set(key, []);
    got.get(key)!.push({ timestamp: BigInt(s.timestamp_us), status: s.status, frames: s.frames });
  }
  expect(got).toEqual(expected.perThread);
}

// Hand-picked profiles, so the extremes are covered whatever the random seed.
function fixedProfiles(): ProfileSpec[] {
  const frames: FrameInfo[] = Array.from({ length: 40 }, (_, i) => ({
    filename: `f${i % 3}.py`,
    funcname: `fn${i}`,
    location: { lineno: i + 1, endLineno: i + 2, colOffset: i, endColOffset: i + 4 },
    opcode: i,
  }));
  const threads: ThreadSpec[] = [
    { threadId: 0n, interpreterId: 0 },
    { threadId: U64, interpreterId: 0xffff_ffff },
    { threadId: 1n << 63n, interpreterId: 1 },
    { threadId: 12345n, interpreterId: 0 },
    { threadId: 12345n, interpreterId: 2 },
  ];
  const calls: CallSpec[] = [];
  for (let i = 0; i < 300; i++) {
    const step = i % 17 === 5 ? -2500n : i === 100 ? -(1n << 62n) : 1000n;
    calls.push({
      step,
      samples: threads.map((_, t) => ({
        thread: t,
        status: (i * 5 + t) % 256,
        op:
          (i + t) % 29 === 0
            ? { kind: 'deep', depth: 300, salt: t }
            : (i + t) % 11 === 0
              ? { kind: 'empty' }
              : (i + t) % 3 === 0
                ? { kind: 'same' }
                : { kind: 'popPush', count: 1, frames: [i + t] },
      })),
    });
  }
  return (['zstd', 'none'] as const).map((compression) => ({
    compression,
    startTimeUs: 5n,
    intervalUs: 1000n,
    threads,
    frames,
    calls,
  }));
}

describe('CPython 3.15.2 reads ProfileWriter files', () => {
  it('returns exactly the samples written, for generated and extreme profiles', () => {
    const seed = Number(process.env.PROFPACK_SEED ?? Date.now() % 2 ** 31);
    const specs = [...fixedProfiles(), ...fc.sample(profileArb, { numRuns: 60, seed })];
    const written = specs.map((spec, i) => {
      const file = path.join(dir, `p${i}.bin`);
      return { spec, file, expected: writeProfile(spec, file) };
    });
    const dumps = cpythonDumps(written.map((w) => w.file));
    for (const w of written) {
      const dump = dumps.get(path.basename(w.file));
      expect(dump, `no dump for ${w.file}`).toBeDefined();
      try {
        checkAgainst(dump!, w.spec, w.expected);
      } catch (err) {
        throw new Error(`profile ${path.basename(w.file)} (fast-check seed ${seed}): ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
  }, 120_000);
});
