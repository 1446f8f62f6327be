/**
 * Hand-built version-2 sample regions (docs/format-v2.md §3) for the bound
 * tests: blocks made by the library's own coders, and blocks a writer would
 * never make (too many predicted threads, too many samples).
 */
import { ByteSink, PredictCoder, SampleBlockWriter } from '../../lib/tachyon/codec/index';
import { zstdCompress } from '../../lib/tachyon/file/index';
import { uleb128 } from '../support/reference-leb128';

/** Frames 0..2 exist in craft.ts's s01 tables. */
export const STACK = [2, 1, 0];

/**
 * Predict blocks of one thread: `first` (one sample, defines thread 7) and
 * `repeat` (n samples of the same stack, one interval apart). `repeat`
 * decodes the same after `first` or after another `repeat`, so a region of
 * first + repeat × k holds 1 + n·k valid samples.
 */
export function repeatingBlocks(n: number): { first: Uint8Array; repeat: Uint8Array } {
  const blocks: Uint8Array[] = [];
  const writer = new SampleBlockWriter('predict', { sampleIntervalUs: 1000, startTimeUs: 1_000_000 }, (b) =>
    blocks.push(b),
  );
  let t = 1_001_000;
  writer.add(7n, 0, t, 0, STACK);
  writer.flush();
  for (let i = 0; i < n; i++) writer.add(7n, 0, (t += 1000), 0, STACK);
  writer.flush();
  for (let i = 0; i < n; i++) writer.add(7n, 0, (t += 1000), 0, STACK);
  writer.flush();
  if (Buffer.compare(blocks[1]!, blocks[2]!) !== 0) throw new Error('a repeated block did not code the same');
  return { first: blocks[0]!, repeat: blocks[1]! };
}

/** The concatenation of byte arrays. */
export function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** `unit` compressed once and its frame repeated `times` times (readers accept concatenated frames). */
export function zstdRepeated(unit: Uint8Array, times: number): Uint8Array {
  const frame = zstdCompress(unit, 19);
  return concat(Array.from({ length: times }, () => frame));
}

/**
 * One predict block of `count` samples, sample i the first of a new thread
 * (index firstIndex + i, thread id 1000 + that), each stack [0] from a fresh
 * cache: what a writer that kept prediction for every thread would write.
 */
export function newThreadsPredictBlock(firstIndex: number, count: number): Uint8Array {
  const cols = Array.from({ length: 10 }, () => [] as number[]);
  for (let i = 0; i < count; i++) {
    const index = firstIndex + i;
    cols[0]!.push(...uleb128(index));
    const def = Buffer.alloc(12);
    def.writeBigUInt64LE(BigInt(1000 + index), 0);
    cols[1]!.push(...def);
    cols[2]!.push(0);
    cols[3]!.push(0);
    cols[4]!.push(0);
    const sink = new ByteSink(16);
    new PredictCoder().encode([0], sink);
    cols[5]!.push(...sink.view());
  }
  return blockOf(4, count, cols);
}

/** A block: record prefix of zeros, kind, sample count, column lengths, columns. */
export function blockOf(kind: number, count: number, cols: number[][]): Uint8Array {
  return Uint8Array.from([
    ...new Array<number>(12).fill(0),
    kind,
    ...uleb128(count),
    ...cols.flatMap((c) => uleb128(c.length)),
    ...cols.flat(),
  ]);
}
