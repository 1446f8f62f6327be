/**
 * writeStack's repeats against CPython 3.15.2's writer: the native engine finds a thread's unchanged stack in its
 * staging and hands the addon a REPEAT marker instead of the ids, so the file must still be the one CPython writes
 * for the same thread-samples, whatever comes between two of a thread's stacks (staging drains, writeStacks and
 * writeSample calls, flushes, refused stacks, threads in a new order, the caller's array reused and rewritten).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../lib/errors';
import { ProfileWriter, type FrameInfo, type SampleInterpreterInfo } from '../../../lib/tachyon/write/index';
import { repoRoot } from '../../support/environment';
import { cpythonInterpreter } from '../../support/cpython.mjs';
import { rng } from '../../support/rng.mjs';
import { scratchDir } from '../../support/scratch-dir';
import {
  frameSpecOf,
  materialize,
  writeSampleFile,
  type CallSpec,
  type MaterializedCall,
  type Op,
  type ProfileSpec,
} from '../../support/writer-profiles';

const dir = scratchDir('profpack-write-stack-');
const POOL = 400;

/** Whole numbers in [0, n) from the tests' seeded stream: the same calls on every run. */
function random(seed: number): (n: number) => number {
  const next = rng(seed);
  return (n) => Math.floor(next() * n);
}

function frames(): FrameInfo[] {
  return Array.from({ length: POOL }, (_, i) => ({
    filename: `/srv/app/m${i % 23}.py`,
    funcname: `f${i}`,
    location: { lineno: 10 + i, endLineno: 11 + i, colOffset: i % 9, endColOffset: 20 + (i % 9) },
    opcode: i % 120,
  }));
}

/**
 * Seven threads (one id on two interpreters), ~60 % of thread-samples unchanged, so a thread's previous stack is
 * sometimes still staged and sometimes drained; stacks deeper than 256 that differ only past the cut; the
 * threads' order shuffled now and then; timestamps stepping back at times.
 */
function profile(compression: 'none' | 'zstd', calls: number, seed: number): ProfileSpec {
  const rnd = random(seed);
  const threads = [1n, 2n, 3n, 1n << 40n, (1n << 64n) - 1n, 7n, 7n].map((threadId, k) => ({
    threadId,
    interpreterId: k === 6 ? 1 : 0,
  }));
  const order = threads.map((_, k) => k);
  const specCalls: CallSpec[] = [];
  const ids = (n: number) => Array.from({ length: n }, () => rnd(POOL));
  for (let c = 0; c < calls; c++) {
    if (rnd(50) === 0) order.sort(() => rnd(3) - 1);
    const samples = order.map((thread) => {
      const roll = rnd(100);
      let op: Op;
      if (c === 0) op = { kind: 'replace', frames: ids(20 + rnd(30)) };
      else if (roll < 60) op = { kind: 'same' };
      else if (roll < 85) op = { kind: 'popPush', count: rnd(4), frames: ids(1 + rnd(3)) };
      else if (roll < 92) op = { kind: 'push', frames: ids(1 + rnd(2)) };
      // The same 256 innermost frames at another depth: CPython drops the rest and writes a repeat.
      else if (roll < 96) op = { kind: 'deep', depth: 257 + rnd(60), salt: 0 };
      else op = { kind: 'replace', frames: ids(30 + rnd(20)) };
      return { thread, status: rnd(5) === 0 ? rnd(256) : 1, op };
    });
    specCalls.push({ step: rnd(40) === 0 ? -3000n : 1000n, samples });
  }
  return { compression, startTimeUs: 5_000n, intervalUs: 1000n, threads, frames: frames(), calls: specCalls };
}

/** Frame ids in CPython's table order: each frame interned at its first use, innermost first. */
class Ids {
  private readonly byIndex = new Int32Array(POOL).fill(-1);

  constructor(
    private readonly writer: ProfileWriter,
    private readonly pool: FrameInfo[],
  ) {}

  /** The ids of a stack's frames into out[at..]; past 256 (dropped, as CPython drops them, never interned) id 0. */
  of(stack: number[], out: Uint32Array, at = 0): void {
    out.fill(0, at + Math.min(stack.length, 256), at + stack.length);
    for (let k = 0; k < Math.min(stack.length, 256); k++) {
      const p = stack[k]!;
      let id = this.byIndex[p]!;
      if (id < 0) {
        id = this.byIndex[p] = this.writer.internFrame(frameSpecOf(this.pool[p]!));
      }
      out[at + k] = id;
    }
  }
}

/** The calls through writeStack mostly, with writeStacks, writeSample, flushes and refused stacks in between. */
function writeMixed(spec: ProfileSpec, calls: MaterializedCall[], file: string, seed: number): ProfileWriter {
  const rnd = random(seed);
  const writer = new ProfileWriter(file, {
    sampleIntervalUs: spec.intervalUs,
    startTimeUs: spec.startTimeUs,
    compression: spec.compression,
    journal: false,
  });
  const ids = new Ids(writer, spec.frames);
  // One array per thread slot, rewritten for every call: the writer must compare values, never the object.
  const reused = Array.from({ length: 8 }, () => new Uint32Array(400));
  for (const call of calls) {
    const way = rnd(100);
    if (way < 8) {
      const total = call.threads.reduce((n, t) => n + t.stack.length, 0);
      const frameIds = new Uint32Array(total);
      const stackEnds = new Uint32Array(call.threads.length);
      let end = 0;
      call.threads.forEach((t, k) => {
        ids.of(t.stack, frameIds, end);
        stackEnds[k] = end += t.stack.length;
      });
      writer.writeStacks(call.timestamp, {
        threadIds: call.threads.map((t) => t.threadId),
        interpreterIds: call.threads.map((t) => t.interpreterId),
        statuses: call.threads.map((t) => t.status),
        stackEnds,
        frameIds,
      });
      continue;
    }
    if (way < 12) {
      const interps: SampleInterpreterInfo[] = [];
      for (const t of call.threads) {
        const last = interps[interps.length - 1];
        const entry = { threadId: t.threadId, status: t.status, frameInfo: t.stack.map((i) => spec.frames[i]!) };
        if (last?.interpreterId === t.interpreterId) (last.threads as (typeof entry)[]).push(entry);
        else interps.push({ interpreterId: t.interpreterId, threads: [entry] });
      }
      // Frames it meets first are interned here; Ids.of's internFrame later finds them by value.
      writer.writeSample(interps, call.timestamp);
      continue;
    }
    call.threads.forEach((t, k) => {
      const view = reused[k]!.subarray(0, t.stack.length);
      ids.of(t.stack, view);
      if (rnd(60) === 0 && view.length > 0) {
        // A stack with an id internFrame never returned is refused whole; the thread's state stays as it was.
        const bad = view.slice();
        bad[rnd(Math.min(bad.length, 256))] = 1 << 30; // past 256 it would be cut, never read
        expect(() => writer.writeStack(t.threadId, t.interpreterId, call.timestamp, t.status, bad)).toThrow(
          expect.objectContaining({ code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID }),
        );
      }
      writer.writeStack(t.threadId, t.interpreterId, call.timestamp, t.status, view);
    });
    if (spec.compression === 'none' && rnd(200) === 0) writer.flush();
  }
  return writer;
}

describe('writeStack writes the bytes CPython writes for the same thread-samples', () => {
  it('repeats across staging drains, other write calls, flushes, refused stacks and new thread orders', () => {
    const python = cpythonInterpreter();
    const cases = (['none', 'zstd'] as const).map((compression, i) => {
      const spec = profile(compression, 2500, 0x9e3779b9 + i);
      const calls = materialize(spec);
      const samples = path.join(dir, `${compression}.samples`);
      writeSampleFile(samples, spec, calls);
      const ours = path.join(dir, `${compression}.profpack.bin`);
      const writer = writeMixed(spec, calls, ours, 0x51ed27 + i);
      const stats = writer.stats;
      writer.finalize();
      return { samples, ours, theirs: path.join(dir, `${compression}.cpython.bin`), stats };
    });
    const run = spawnSync(
      python,
      [path.join(repoRoot, 'bench', 'cpython_write.py'), ...cases.flatMap((c) => [c.samples, c.theirs])],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const results = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { stats: Record<string, number> });
    cases.forEach((c, i) => {
      const a = readFileSync(c.ours);
      const b = readFileSync(c.theirs);
      let diff = 0;
      while (diff < a.length && diff < b.length && a[diff] === b[diff]) diff++;
      expect(
        diff === a.length && diff === b.length ? -1 : diff,
        `first differing byte (sizes ${a.length} / ${b.length})`,
      ).toBe(-1);
      const theirs = results[i]!.stats;
      expect([c.stats.repeatRecords, c.stats.repeatSamples, c.stats.totalSamples, c.stats.framesSaved]).toEqual([
        theirs.repeat_records,
        theirs.repeat_samples,
        theirs.total_samples,
        theirs.frames_saved,
      ]);
      // The case is about repeats: most thread-samples must be in REPEAT runs, across several drains.
      expect(c.stats.repeatSamples).toBeGreaterThan(c.stats.totalSamples / 3);
      expect(c.stats.totalSamples).toBeGreaterThan(15_000);
    });
  }, 120_000);
});
