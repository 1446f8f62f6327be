import fc from 'fast-check';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { ProfileReader } from '../../../lib/index';
import { RecentStackCoder, RecentStackDecoder } from '../../../lib/tachyon/codec/recent';
import { StackPath } from '../../../lib/tachyon/codec/stacktable';
import { decodeAll, decodeColumns, decodeError as decodeWith, sinks, type Columns } from './stack-columns';
import { repoRoot } from '../../support/environment';
// @ts-expect-error plain ESM helper without types
import { fixtureSamples } from '../../fixtures/v2/make.mjs';

/** Codes (thread, stack) pairs with one path per thread, as SampleBlockWriter does, and decodes them back. */
function roundTrip(samples: { thread: number; stack: number[] }[]): number[][] {
  const coder = new RecentStackCoder();
  const out = sinks();
  const paths = new Map<number, StackPath>();
  for (const s of samples) {
    if (!paths.has(s.thread)) paths.set(s.thread, new StackPath());
    coder.encode(s.stack, out, paths.get(s.thread)!);
  }
  return decodeAll(new RecentStackDecoder(), out, samples.length);
}

const decodeError = (columns: Columns, samples = 1) => decodeWith(new RecentStackDecoder(), columns, samples);

describe('stack-table coding with recency references (block kind 6)', () => {
  it('round-trips random stacks of several threads, revisited in any order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ thread: fc.nat({ max: 3 }), stack: fc.array(fc.nat({ max: 20 }), { maxLength: 30 }) }), {
          maxLength: 80,
        }),
        (samples) => {
          const doubled = [...samples, ...samples.slice().reverse()];
          expect(roundTrip(doubled)).toEqual(doubled.map((s) => s.stack));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('round-trips deep stacks up to 4,096 frames (k in the escape plane) and frame deltas that wrap u32', () => {
    const deep = fc
      .integer({ min: 250, max: 4096 })
      .chain((n) => fc.array(fc.nat({ max: 0xffff_ffff }), { minLength: n, maxLength: n }));
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.array(fc.nat({ max: 0xffff_ffff }), { minLength: 250, maxLength: 256 }), deep), {
          minLength: 1,
          maxLength: 5,
        }),
        (stacks) => {
          const samples = stacks.map((stack) => ({ thread: 0, stack }));
          expect(roundTrip(samples)).toEqual(stacks);
        },
      ),
      { numRuns: 20 },
    );
    const churn = Array.from({ length: 3000 }, (_, i) => ({
      thread: i % 5,
      stack: Array.from({ length: 30 }, (_, j) => (i * 31 + j * 7) % 5000),
    }));
    expect(roundTrip(churn)).toEqual(churn.map((s) => s.stack));
  });

  it('names a stack by the last sample that passed through its deepest known node', () => {
    const coder = new RecentStackCoder();
    const out = sinks();
    const path = new StackPath();
    expect(coder.encode([3, 2, 1], out, path)).toBe(3); // new: k 3 from the empty stack
    expect(coder.encode([4, 2, 1], out, path)).toBe(4); // 1 back, cut 1, then 1 new frame
    expect(coder.encode([3, 2, 1], out, path)).toBe(3); // 2 back, nothing cut, nothing new
    expect(coder.encode([], out, path)).toBe(0); // the empty stack
    expect(coder.encode([9, 1], out, new StackPath())).toBe(5); // another thread: node 1 was last seen 2 back, in a 3-frame stack
    expect(Array.from(out.stacks.view())).toEqual([3, 1, 0, 0, 1]);
    expect(Array.from(out.parents.view())).toEqual([0, 1, 2, 0, 2]);
    expect(Array.from(out.parentsHigh.view())).toEqual([1, 0, 2]);
    // zigzag32(frame − caller): 1 − 0, 2 − 1, 3 − 2; then 4 − 2; then 9 − 1.
    expect(Array.from(out.stackFrames.view())).toEqual([2, 2, 2, 4, 16]);
  });

  it('refuses a stack deeper than its limit when coding: 4,096 frames, 256 for the heap section', () => {
    expect(() => new RecentStackCoder().encode(new Array(4097).fill(1), sinks(), new StackPath())).toThrow(
      ProfpackError,
    );
    expect(() => new RecentStackCoder(256).encode(new Array(257).fill(1), sinks(), new StackPath())).toThrow(
      ProfpackError,
    );
  });

  it('rejects a distance that reaches before the first sample, at its offset', () => {
    const err = decodeError({ stacks: [0, 0], stacksHigh: [], parents: [0, 2], parentsHigh: [], stackFrames: [] }, 2);
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_STACK);
    expect(err.offset).toBe(2001);
  });

  it('rejects a cut deeper than the base stack', () => {
    const err = decodeError(
      { stacks: [2, 0], stacksHigh: [], parents: [0, 1], parentsHigh: [3], stackFrames: [2, 2] },
      2,
    );
    expect(err.code).toBe(ErrorCode.V2_BAD_KEEP);
    expect(err.offset).toBe(3000);
  });

  it('rejects a stack that would pass 4,096 frames, with the offset of its count', () => {
    // k = 255 + 1,793 = 2,048, then 2,048 + 255 + 1,794 = 4,097 frames.
    const columns = { stacks: [255, 255], parents: [0, 1], parentsHigh: [0], stackFrames: new Array(4097).fill(2) };
    const err = decodeError({ ...columns, stacksHigh: [0x81, 0x0e, 0x82, 0x0e] }, 2);
    expect(err.code).toBe(ErrorCode.V2_STACK_TOO_DEEP);
    expect(err.offset).toBe(1);
    // 4,096 frames read whole; the heap section's decoder keeps version 1's 256.
    const fits = { ...columns, stacksHigh: [0x81, 0x0e, 0x81, 0x0e], stackFrames: new Array(4096).fill(2) };
    const whole = decodeColumns(new RecentStackDecoder(), fits, 2);
    expect(whole.map((s) => s.length)).toEqual([2048, 4096]);
    const heap = decodeWith(new RecentStackDecoder(256), fits, 2);
    expect(heap.code).toBe(ErrorCode.V2_STACK_TOO_DEEP);
    expect(heap.offset).toBe(0);
    // An escape plane that overflows k is the same error, not a wrap.
    const huge = decodeError({
      stacks: [255],
      stacksHigh: [0xff, 0xff, 0xff, 0xff, 0x0f],
      parents: [0],
      parentsHigh: [],
      stackFrames: [2],
    });
    expect(huge.code).toBe(ErrorCode.V2_STACK_TOO_DEEP);
  });

  it('rejects more new frames than the frames column holds', () => {
    const err = decodeError({ stacks: [4], stacksHigh: [], parents: [0], parentsHigh: [], stackFrames: [2, 2] });
    expect(err.code).toBe(ErrorCode.V2_TRUNCATED);
    expect(err.offset).toBe(0);
  });
});

describe('files written before issue 19 (block kind 5)', () => {
  it('reads the kind-5 fixture to the samples it was written from', () => {
    const { stream, samples } = fixtureSamples() as {
      stream: { frames: { filename: string; funcname: string; lineno: number }[] };
      samples: { threadId: bigint; interpreterId: number; timestampUs: number; status: number; stack: number[] }[];
    };
    const reader = ProfileReader.open(path.join(repoRoot, 'test', 'fixtures', 'v2', 'stacktable-kind5.tach'));
    let i = 0;
    for (const s of reader.samples()) {
      const want = samples[i++]!;
      expect({
        threadId: s.threadId,
        interpreterId: s.interpreterId,
        timestampUs: s.timestampUs,
        status: s.status,
      }).toEqual({
        threadId: want.threadId,
        interpreterId: want.interpreterId,
        timestampUs: BigInt(want.timestampUs),
        status: want.status,
      });
      const got = s.stack.map((f) => reader.frames[f]!);
      expect(got.map((f) => `${f.filename}:${f.funcname}:${f.lineno ?? -1}`)).toEqual(
        want.stack.map(
          (f) => `${stream.frames[f]!.filename}:${stream.frames[f]!.funcname}:${stream.frames[f]!.lineno}`,
        ),
      );
    }
    expect(i).toBe(samples.length);
    reader.close();
  });
});
