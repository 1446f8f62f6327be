import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { ByteSink, ByteSource } from '../../../lib/tachyon/codec/bytes';
import { CACHE_SIZE, CodewordTag, V2_MAX_STACK_DEPTH } from '../../../lib/tachyon/codec/format';
import { PredictCoder, PredictDecoder, hash1, hash2 } from '../../../lib/tachyon/codec/predict';

/** memtrace's hashes on the full 64-bit product (notes/memtrace.md §4.3), in BigInt. */
function referenceHash(v: number, multiplier: bigint, shift: bigint): number {
  return Number((((BigInt(v) * multiplier) & ((1n << 63n) - 1n)) >> shift) & 0x3fffn);
}

/** Codes `stacks` (innermost first) with one coder and decodes them with one decoder. */
function roundTrip(stacks: number[][]): { decoded: number[][]; bytes: Uint8Array } {
  const coder = new PredictCoder();
  const sink = new ByteSink();
  for (const s of stacks) coder.encode(s, sink);
  const bytes = sink.take();
  const decoder = new PredictDecoder();
  const src = new ByteSource(bytes, 0, bytes.length, 0);
  const out = new Uint32Array(V2_MAX_STACK_DEPTH);
  const decoded: number[][] = [];
  for (let i = 0; i < stacks.length; i++) {
    const depth = decoder.decode(src, out);
    decoded.push(Array.from(out.subarray(0, depth)));
  }
  expect(src.remaining()).toBe(0);
  return { decoded, bytes };
}

/** Decodes stacks from `bytes` (after coding `previous` with a real coder) until one fails. */
function decodeError(bytes: number[], previous: number[][] = []): ProfpackError {
  const decoder = new PredictDecoder();
  const setup = new PredictCoder();
  const sink = new ByteSink();
  for (const s of previous) setup.encode(s, sink);
  const prefix = Array.from(sink.view());
  const all = Uint8Array.from([...prefix, ...bytes]);
  const src = new ByteSource(all, 0, all.length, 100 - prefix.length);
  const out = new Uint32Array(V2_MAX_STACK_DEPTH);
  try {
    while (src.remaining() > 0) decoder.decode(src, out);
  } catch (err) {
    expect(err).toBeInstanceOf(ProfpackError);
    return err as ProfpackError;
  }
  throw new Error('decode did not fail');
}

const frameIndex = fc.nat({ max: 0xffff_ffff });

describe('memtrace hashes', () => {
  it('match the 64-bit reference for every u32 frame index', () => {
    fc.assert(
      fc.property(frameIndex, (v) => {
        expect(hash1(v)).toBe(referenceHash(v, 0x4983723n, 11n));
        expect(hash2(v)).toBe(referenceHash(v, 0xfdea731n, 21n));
      }),
      { numRuns: 2000 },
    );
    for (const v of [0, 1, 0xffff, 0x10000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff]) {
      expect(hash1(v)).toBe(referenceHash(v, 0x4983723n, 11n));
      expect(hash2(v)).toBe(referenceHash(v, 0xfdea731n, 21n));
    }
  });
});

describe('predicted-stack coding', () => {
  it('round-trips random stacks of one thread', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat({ max: 50 }), { maxLength: 40 }), { maxLength: 60 }), (stacks) => {
        expect(roundTrip(stacks).decoded).toEqual(stacks);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips deep recursion up to the 4,096-frame limit (version 1 stops at 256)', () => {
    const depth = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: V2_MAX_STACK_DEPTH }));
    const recursion = fc
      .tuple(fc.array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 4 }), depth)
      .map(([cycle, depth]) => Array.from({ length: depth }, (_, i) => cycle[i % cycle.length]!));
    fc.assert(
      fc.property(fc.array(recursion, { minLength: 1, maxLength: 20 }), (stacks) => {
        expect(roundTrip(stacks).decoded).toEqual(stacks);
      }),
      { numRuns: 100 },
    );
  });

  it('round-trips under eviction pressure (many more frames than buckets, full u32 range)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(frameIndex, { minLength: 1, maxLength: 256 }), { minLength: 50, maxLength: 150 }),
        (stacks) => {
          expect(roundTrip(stacks).decoded).toEqual(stacks);
        },
      ),
      { numRuns: 10 },
    );
    // Stack churn: 40,000 distinct frames through a 16,384-bucket cache, revisited later.
    const stacks: number[][] = [];
    for (let i = 0; i < 400; i++) stacks.push(Array.from({ length: 100 }, (_, j) => (i * 100 + j) % 40_000));
    for (let i = 0; i < 100; i++) stacks.push(stacks[(i * 37) % 400]!);
    expect(roundTrip(stacks).decoded).toEqual(stacks);
  });

  it("codes memtrace's List.map example in three codewords", () => {
    // 200 frames of one function then one leaf (innermost first: leaf, then 200 × map).
    const stack = [7, ...Array.from({ length: 200 }, () => 3)];
    const coder = new PredictCoder();
    const sink = new ByteSink();
    coder.encode(stack, sink);
    const bytes = sink.view();
    // keep 0, 3 codewords: miss(map) + literal, hit(map) + N = 198 (the rest of the chain), miss(leaf) + literal.
    expect(bytes[0]).toBe(0);
    expect(bytes[1]).toBe(3);
    expect(bytes[2]! & 3).toBe(CodewordTag.Miss);
    expect(bytes[4]).toBe(3);
    expect(bytes[5]! & 3).toBe(CodewordTag.HitN);
    expect(bytes[7]).toBe(198);
    expect(bytes[8]! & 3).toBe(CodewordTag.Miss);
    expect(bytes[10]).toBe(7);
    expect(bytes.length).toBe(11);
    // A repeat of the same stack costs keep + a zero count.
    sink.clear();
    coder.encode(stack, sink);
    expect(Array.from(sink.view())).toEqual([201, 1, 0]);
  });

  it('codes a repeated call path with predictions once the cache knows it', () => {
    const path = Array.from({ length: 50 }, (_, i) => 1000 + i);
    const coder = new PredictCoder();
    const sink = new ByteSink();
    coder.encode(path, sink);
    coder.encode([], sink);
    sink.clear();
    coder.encode(path, sink);
    // keep 0, one hit codeword at the outermost frame with 49 correct predictions.
    expect(Array.from(sink.view()).length).toBe(5);
    expect(sink.view()[1]).toBe(1);
    expect(sink.view()[2]! & 3).toBe(CodewordTag.HitN);
    expect(sink.view()[4]).toBe(49);
  });

  it('refuses a stack deeper than 4,096 frames when coding, and codes one of 4,096', () => {
    const coder = new PredictCoder();
    expect(() => coder.encode(new Array(V2_MAX_STACK_DEPTH + 1).fill(1), new ByteSink())).toThrow(ProfpackError);
    const deepest = Array.from({ length: V2_MAX_STACK_DEPTH }, (_, i) => i);
    expect(roundTrip([deepest, deepest.slice(100), deepest]).decoded).toEqual([deepest, deepest.slice(100), deepest]);
  });

  it('rejects a hit on a bucket no miss has filled, with its offset', () => {
    const err = decodeError([0, 1, (5 << 2) & 0xff, 5 >> 6]);
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_BUCKET);
    expect(err.offset).toBe(102);
  });

  it('rejects a prediction chain that reaches an empty bucket', () => {
    // Stack 1: misses into buckets 9 and 10. Stack 2: a hit on 10 claiming one correct
    // prediction, but bucket 10 has never predicted anything: next[10] is bucket 0, never filled.
    const err = decodeError([0, 2, (9 << 2) | 3, 0, 42, (10 << 2) | 3, 0, 43, 0, 1, (10 << 2) | 1, 0]);
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_BUCKET);
    expect(err.offset).toBe(110);
  });

  it('rejects a keep longer than the previous stack', () => {
    const err = decodeError([3, 0], [[1, 2]]);
    expect(err.code).toBe(ErrorCode.V2_BAD_KEEP);
  });

  it('rejects a hit-N codeword with a count below 2', () => {
    const err = decodeError([0, 2, (4 << 2) | 3, 0, 1, (4 << 2) | 2, 0, 1]);
    expect(err.code).toBe(ErrorCode.V2_BAD_CODEWORD);
  });

  it('rejects a chain longer than the stack limit instead of looping', () => {
    // Bucket 4 predicts itself (miss into 4, then hits on 4): every hit-255 adds 256 frames, the 16th passes 4,096.
    const hits = Array.from({ length: 16 }, () => [(4 << 2) | 2, 0, 255]).flat();
    const err = decodeError([0, 17, (4 << 2) | 3, 0, 1, ...hits]);
    expect(err.code).toBe(ErrorCode.V2_STACK_TOO_DEEP);
    expect(err.offset).toBe(100 + 5 + 15 * 3);
    // 15 of them (3,841 frames) decode.
    const ok = decodeError([0, 16, (4 << 2) | 3, 0, 1, ...hits.slice(0, 45), 0, 1, (9 << 2) & 0xff, 0]);
    expect(ok.code).toBe(ErrorCode.V2_UNDEFINED_BUCKET);
    expect(ok.offset).toBe(100 + 5 + 45 + 2);
  });

  it('rejects codeword counts the bytes cannot hold', () => {
    const err = decodeError([0, 100, 1, 2]);
    expect(err.code).toBe(ErrorCode.V2_TRUNCATED);
    expect(err.offset).toBe(101);
  });

  it('keeps every bucket index within the cache', () => {
    expect(CACHE_SIZE).toBe(16384);
    fc.assert(
      fc.property(frameIndex, (v) => {
        expect(hash1(v)).toBeLessThan(CACHE_SIZE);
        expect(hash2(v)).toBeLessThan(CACHE_SIZE);
      }),
    );
  });
});
