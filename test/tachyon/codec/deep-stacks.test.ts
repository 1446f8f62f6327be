/**
 * Version 2 keeps stacks deeper than 256 frames whole (issue 29), up to V2_MAX_STACK_DEPTH (4,096): random deep
 * stacks round-trip through ProfileWriter and ProfileReader with the two writer backends byte-identical; files
 * written before still read and are still written the same; a block's decoded frames stay bounded
 * (BLOCK_MAX_FRAMES): writers end a block before it, both decoders refuse more with the same code and offset.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, type ProfpackError } from '../../../lib/errors';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { ProfileWriter } from '../../../lib/tachyon/write/index';
import { ByteSink } from '../../../lib/tachyon/codec/bytes';
import { BLOCK_COLUMNS, BLOCK_MAX_FRAMES, BlockKind, V2_MAX_STACK_DEPTH } from '../../../lib/tachyon/codec/format';
import { SampleBlockReader, SampleBlockWriter, blockKindOf, v2Native } from '../../../lib/tachyon/codec/index';
import { repoRoot } from '../../support/environment';
// @ts-expect-error plain ESM helper without types
import { SHALLOW_FIXTURES, shallowSamples, writeShallow } from '../../fixtures/v2/make-shallow.mjs';
import { testedBackends } from '../../support/backends';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-deep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
const tmp = (name: string): string => path.join(dir, `${fileNo++}-${name}`);
const FRAMES = 64;

interface DeepSample {
  thread: number;
  status: number;
  stack: number[];
}

/** Shallow churn, recursion past 256, random deep stacks, exactly the limit, and past it (cut to 4,096). */
const stackArb = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.nat({ max: FRAMES - 1 }), { maxLength: 20 }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.array(fc.nat({ max: FRAMES - 1 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 257, max: 4096 }))
      .map(([cycle, n]) => Array.from({ length: n }, (_, i) => cycle[i % cycle.length]!)),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 257, max: 4096 })
      .chain((n) => fc.array(fc.nat({ max: FRAMES - 1 }), { minLength: n, maxLength: n })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 4096, max: 4200 }).map((n) => Array.from({ length: n }, (_, i) => i % 9)) },
);
const samplesArb = fc.array(fc.record({ thread: fc.nat({ max: 2 }), status: fc.nat({ max: 3 }), stack: stackArb }), {
  minLength: 1,
  maxLength: 24,
});

function writeDeep(file: string, samples: DeepSample[], coding: 'predict' | 'stacktable', which: 'native' | 'js') {
  const w = new ProfileWriter(file, {
    sampleIntervalUs: 1000,
    formatVersion: 2,
    stackCoding: coding,
    backend: which,
  });
  for (let i = 0; i < FRAMES; i++) w.internFrame({ filename: 'deep.py', funcname: `f${i}`, lineno: i + 1 });
  samples.forEach((s, i) => {
    // Half through writeStack, half through writeStacks: both keep 4,096 frames.
    if (i % 2 === 0) w.writeStack(s.thread, 0, 1000 * (i + 1), s.status, s.stack);
    else
      w.writeStacks(1000 * (i + 1), {
        threadIds: [s.thread],
        interpreterIds: 0,
        statuses: [s.status],
        stackEnds: Uint32Array.of(s.stack.length),
        frameIds: Uint32Array.from(s.stack),
      });
  });
  return w.finalize();
}

describe('version 2 keeps deep stacks whole', () => {
  for (const coding of ['predict', 'stacktable'] as const) {
    it(`${coding}: random stacks up to 4,096 frames round-trip whole; deeper ones keep 4,096 and are counted`, () => {
      fc.assert(
        fc.property(samplesArb, (samples) => {
          const files = testedBackends.map((which) => {
            const file = tmp(`${which}.tach`);
            const stats = writeDeep(file, samples, coding, which);
            expect(stats.stacksCut).toBe(samples.filter((s) => s.stack.length > V2_MAX_STACK_DEPTH).length);
            return file;
          });
          // The two writer backends make the same bytes.
          const bytes = files.map((f) => readFileSync(f));
          for (const other of bytes.slice(1)) expect(Buffer.compare(other, bytes[0]!)).toBe(0);
          for (const which of testedBackends) {
            const reader = ProfileReader.open(files[0]!, { backend: which });
            const got = [...reader.samples()].map((s) => ({
              thread: Number(s.threadId),
              status: s.status,
              stack: s.stack,
            }));
            reader.close();
            expect(got).toEqual(samples.map((s) => ({ ...s, stack: s.stack.slice(0, V2_MAX_STACK_DEPTH) })));
          }
        }),
        { numRuns: 12 },
      );
    });
  }
});

describe('files written before deep stacks', () => {
  for (const fixture of SHALLOW_FIXTURES as { file: string; stackCoding: 'predict' | 'stacktable' }[]) {
    it(`${fixture.file} (written at 8b18013) reads on every backend, and today's writers make the same bytes`, () => {
      const stored = path.join(repoRoot, 'test', 'fixtures', 'v2', fixture.file);
      const want = (
        shallowSamples() as { threadId: bigint; timestampUs: bigint; status: number; stack: number[] }[]
      ).map((s) => `${s.threadId}/${s.timestampUs}/${s.status}/${s.stack.map((f) => `f${f}`).join(';')}`);
      for (const which of testedBackends) {
        const reader = ProfileReader.open(stored, { backend: which });
        expect(reader.stackCoding).toBe(fixture.stackCoding);
        const got = [...reader.samples()].map(
          (s) =>
            `${s.threadId}/${s.timestampUs}/${s.status}/${s.stack.map((f) => reader.frames[f]!.funcname).join(';')}`,
        );
        reader.close();
        expect(got).toEqual(want);
        const again = tmp(fixture.file);
        writeShallow(ProfileWriter, again, fixture, which);
        expect(Buffer.compare(readFileSync(again), readFileSync(stored))).toBe(0);
      }
    });
  }
});

/** A kind-6 block: sample 0 defines a `depth`-frame stack (frame 0 repeated), samples 1.. repeat it. */
function repeatedDeepBlock(samples: number, depth: number): { bytes: Uint8Array; stacksAt: number } {
  const high = new ByteSink();
  high.uvarint(depth - 255);
  const columns: Record<string, ArrayLike<number>> = {
    threads: new Uint8Array(samples),
    threadDefinitions: new Uint8Array(12),
    deltas: new Uint8Array(samples),
    deltasHigh: new Uint8Array(samples),
    statuses: new Uint8Array(samples),
    stacks: Uint8Array.from({ length: samples }, (_, i) => (i === 0 ? 255 : 0)),
    stacksHigh: high.view(),
    parents: Uint8Array.from({ length: samples }, (_, i) => (i === 0 ? 0 : 1)),
    parentsHigh: new Uint8Array(samples - 1),
    stackFrames: new Uint8Array(depth),
  };
  const sink = new ByteSink();
  sink.append(new Uint8Array(12));
  sink.u8(BlockKind.StackTableRecent);
  sink.uvarint(samples);
  for (const name of BLOCK_COLUMNS) sink.uvarint(columns[name]!.length);
  let stacksAt = 0;
  for (const name of BLOCK_COLUMNS) {
    if (name === 'stacks') stacksAt = sink.length;
    sink.append(Uint8Array.from(columns[name]!));
  }
  return { bytes: sink.take(), stacksAt };
}

/** Decodes one block with the JS twin and, when loaded, the native one: frames seen, and the error if any. */
function decodeBoth(block: Uint8Array): { frames: number; samples: number; error?: ProfpackError }[] {
  const out: { frames: number; samples: number; error?: ProfpackError }[] = [];
  const reader = new SampleBlockReader({ sampleIntervalUs: 1000n, startTimeUs: 0n });
  let frames = 0;
  let samples = 0;
  try {
    reader.decodeBlock(block, 64, 0, (_t, _i, _ts, _st, _stack, depth) => {
      frames += depth;
      samples++;
    });
    out.push({ frames, samples });
  } catch (err) {
    out.push({ frames, samples, error: err as ProfpackError });
  }
  if (v2Native !== null) {
    const handle = v2Native.createDecoder(0n, 1000n);
    const d = v2Native.decodeBlocks(handle, block, 64);
    v2Native.releaseDecoder(handle);
    out.push({ frames: d.frames.length, samples: d.sampleThread.length, error: d.error });
  }
  return out;
}

describe("a block's frames stay bounded", () => {
  it('a block of 4,096 samples of 4,096 frames (2^24 frames) reads; one more sample is ERR_V2_LIMIT at its stack', () => {
    const depth = V2_MAX_STACK_DEPTH;
    const fits = decodeBoth(repeatedDeepBlock(BLOCK_MAX_FRAMES / depth, depth).bytes);
    for (const r of fits) expect(r).toEqual({ frames: BLOCK_MAX_FRAMES, samples: BLOCK_MAX_FRAMES / depth });
    // 33 KB of block asking for 2^24 + 4,096 frames: refused by both twins, at the same offset.
    const over = repeatedDeepBlock(BLOCK_MAX_FRAMES / depth + 1, depth);
    expect(over.bytes.length).toBeLessThan(40_000);
    for (const r of decodeBoth(over.bytes)) {
      expect(r.error?.code).toBe(ErrorCode.V2_LIMIT);
      expect(r.error?.offset).toBe(64 + over.stacksAt + BLOCK_MAX_FRAMES / depth);
      expect(r.samples).toBe(BLOCK_MAX_FRAMES / depth);
    }
  });

  for (const coding of ['predict', 'stacktable'] as const) {
    it(`${coding}: the encoders end a block before it passes 2^24 frames, the two twins byte for byte`, () => {
      const depth = V2_MAX_STACK_DEPTH;
      const samples = BLOCK_MAX_FRAMES / depth + 3;
      const stack = Array.from({ length: depth }, (_, i) => i % 5);
      const options = { sampleIntervalUs: 1000n, startTimeUs: 0n };
      const blocks: Uint8Array[] = [];
      const writer = new SampleBlockWriter(coding, options, (b) => blocks.push(b));
      for (let i = 0; i < samples; i++) writer.add(1n, 0, BigInt(1000 * (i + 1)), 0, stack);
      writer.flush();
      expect(blocks.length).toBe(2);
      const counts = blocks.map((b) => decodeBoth(b));
      for (const r of counts[0]!) expect(r).toEqual({ frames: BLOCK_MAX_FRAMES, samples: samples - 3 });
      if (v2Native === null) return;
      const handle = v2Native.createEncoder(blockKindOf(coding), 1000n, 0n, 65536);
      const native: Uint8Array[] = [];
      // In batches of 512 samples: the staged frames of one crossing stay small.
      for (let from = 0; from < samples; from += 512) {
        const n = Math.min(512, samples - from);
        const frames = new Uint32Array(n * depth);
        for (let k = 0; k < n; k++) frames.set(stack, k * depth);
        native.push(
          ...v2Native.encodeSamples(
            handle,
            new BigUint64Array(n).fill(1n),
            new Uint32Array(n),
            BigUint64Array.from({ length: n }, (_, k) => BigInt(1000 * (from + k + 1))),
            new Uint8Array(n),
            Uint32Array.from({ length: n }, (_, k) => (k + 1) * depth),
            frames,
          ),
        );
      }
      native.push(v2Native.flushEncoder(handle));
      expect(native.map((b) => Buffer.from(b).toString('hex'))).toEqual(
        blocks.map((b) => Buffer.from(b).toString('hex')),
      );
    });
  }
});
