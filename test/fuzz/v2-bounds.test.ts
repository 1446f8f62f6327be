// test tier: slow (resource bounds of the version-2 reader on large generated files, ~23 s)
/**
 * Resource bounds of the version-2 reader and writer (issue 29): a zstd
 * region is decompressed and decoded a block at a time (never whole), a
 * block larger than a writer makes is refused, prediction state is
 * allocated per thread on first use and capped at MAX_PREDICT_THREADS (the
 * writer moves to the stack table before it, byte for byte on both
 * backends), and 8,000 reader lifetimes (after a warm-up) leave memory outside V8's heap flat.
 * Peak RSS is measured in child processes that own nothing else.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/index';
import { MAX_PREDICT_THREADS } from '../../lib/tachyon/codec/format';
import { childJson } from '../support/child';
import { readHere, readInChild } from '../support/read-bounds';
import { craftTachyon, zstdRleBomb } from './craft';
import { STACK, blockOf, concat, newThreadsPredictBlock, repeatingBlocks, zstdRepeated } from './craft-v2';
import { testedBackends } from '../support/backends';
import { uleb128 } from '../support/reference-leb128';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-v2-bounds-');
const MiB = 1024 * 1024;

/** Samples (thread, time, stack) of a profile in memory, and the error code or 'ok'. */
function readSamples(
  bytes: Uint8Array,
  which: 'native' | 'js',
  options: Record<string, unknown> = {},
): { code: string; samples: string[] } {
  const samples: string[] = [];
  const { code } = readHere(bytes, which, options, (s) =>
    samples.push(`${s.threadId}@${s.timestampUs}:${s.stack.join(',')}`),
  );
  return { code, samples };
}

const v2File = (region: Uint8Array, sampleCount: number, threadCount = 1, compression = 1): Uint8Array =>
  craftTachyon({ version: 2, region, compression, sampleCount: BigInt(sampleCount), threadCount });

describe('version-2 zstd region: decompressed and decoded a block at a time', () => {
  const n = 50_000;
  const { first, repeat } = repeatingBlocks(n);

  // 2 valid blocks, then 917 MB of zeros from a few KB (a zero block has kind 0: ERR_V2_BAD_BLOCK).
  const bombFile = path.join(dir, 'v2-bomb.tach');
  writeFileSync(bombFile, v2File(concat([zstdRepeated(concat([first, repeat]), 1), zstdRleBomb(7000)]), 1 + n));
  for (const which of testedBackends) {
    it(`${which}: a region inflating to 917 MB is read with peak RSS growth < 160 MiB`, () => {
      expect(readFileSync(bombFile).length).toBeLessThan(64 * 1024);
      const r = readInChild(bombFile, which);
      expect(r).toMatchObject({ ok: false, code: 'ERR_V2_BAD_BLOCK' });
      expect(r.peakRssKb - r.rssBeforeKb).toBeLessThan(160 * 1024);
    });
  }

  // 1 + 40 blocks of 50,000 samples: 2 M samples, 12 MB of region from a few KB.
  const validFile = path.join(dir, 'v2-valid.tach');
  const k = 40;
  writeFileSync(validFile, v2File(concat([zstdRepeated(first, 1), zstdRepeated(repeat, k)]), 1 + n * k));
  for (const which of testedBackends) {
    it(`${which}: a valid 12 MB region streamed (nothing kept) gives every sample within peak RSS growth < 160 MiB`, () => {
      const r = readInChild(validFile, which);
      expect(r).toMatchObject({ ok: true, samples: 1 + n * k });
      expect(r.peakRssKb - r.rssBeforeKb).toBeLessThan(160 * 1024);
    });
  }

  const small = v2File(concat([zstdRepeated(first, 1), zstdRepeated(repeat, 3)]), 1 + 3 * n);
  for (const which of testedBackends) {
    it(`${which}: streamed and kept regions give the same samples`, () => {
      const kept = readSamples(small, which);
      const streamed = readSamples(small, which, { keepDecompressedLimit: 0 });
      expect(kept.code).toBe('ok');
      expect(kept.samples.length).toBe(1 + 3 * n);
      expect(kept.samples[1]).toBe(`7@1002000:${[...STACK].join(',')}`);
      expect(streamed).toEqual(kept);
    });
  }
});

describe('blocks larger than a writer makes are refused', () => {
  for (const which of testedBackends) {
    it(`${which}: a block declaring 65,537 samples or 5 MiB of columns: ERR_V2_LIMIT at the block`, () => {
      const many = blockOf(4, 65_537, [[], [], [], [], [], [], [], [], [], []]);
      expect(readSamples(v2File(many, 65_537, 1, 0), which).code).toBe('ERR_V2_LIMIT');
      const wide = Uint8Array.from([
        ...new Array<number>(12).fill(0),
        4,
        1,
        ...uleb128(5 * MiB),
        ...new Array<number>(9).fill(0),
      ]);
      const r = readSamples(v2File(wide, 1, 1, 0), which);
      expect(r.code).toBe('ERR_V2_LIMIT');
    });
  }
});

describe('prediction state: lazily, at most MAX_PREDICT_THREADS threads', () => {
  it('the cap is 1,024 threads (115 KiB of cache each)', () => expect(MAX_PREDICT_THREADS).toBe(1024));
  for (const which of testedBackends) {
    it(`${which}: ${MAX_PREDICT_THREADS} predicted threads read; one more is ERR_V2_LIMIT after the samples before it`, () => {
      const atCap = readSamples(
        v2File(newThreadsPredictBlock(0, MAX_PREDICT_THREADS), MAX_PREDICT_THREADS, MAX_PREDICT_THREADS, 0),
        which,
      );
      expect(atCap.code).toBe('ok');
      expect(atCap.samples.length).toBe(MAX_PREDICT_THREADS);
      const past = readSamples(
        v2File(newThreadsPredictBlock(0, MAX_PREDICT_THREADS + 1), MAX_PREDICT_THREADS + 1, MAX_PREDICT_THREADS + 1, 0),
        which,
      );
      expect(past.code).toBe('ERR_V2_LIMIT');
    });
  }
  // The repro: a 62 KB valid predict file with 20,000 threads took 2.26 GB.
  const crowdFile = path.join(dir, 'v2-20000-threads.tach');
  writeFileSync(crowdFile, v2File(newThreadsPredictBlock(0, 20_000), 20_000, 20_000, 0));
  for (const which of testedBackends) {
    it(`${which}: 20,000 predicted threads: ERR_V2_LIMIT with peak RSS growth < 250 MiB`, () => {
      const r = readInChild(crowdFile, which);
      expect(r).toMatchObject({ ok: false, code: 'ERR_V2_LIMIT' });
      expect(r.peakRssKb - r.rssBeforeKb).toBeLessThan(250 * 1024);
    });
  }

  it('a writer given more threads moves to the stack table: the same bytes on both backends, every sample read back', () => {
    const threads = MAX_PREDICT_THREADS + 200;
    const written: Buffer[] = [];
    for (const which of testedBackends) {
      const file = path.join(dir, `crowd-${which}.tach`);
      const w = new ProfileWriter(file, {
        sampleIntervalUs: 1000,
        formatVersion: 2,
        stackCoding: 'predict',
        compression: 'none',
        backend: which,
      });
      const frames = [0, 1, 2].map((i) => w.internFrame({ filename: 'a.py', funcname: `f${i}`, lineno: i + 1 }));
      for (let round = 0; round < 2; round++) {
        for (let t = 0; t < threads; t++)
          w.writeStack(BigInt(t + 1), 0, 1000 + round * 10_000_000 + t, 0, [frames[t % 3]!, frames[(t + 1) % 3]!]);
      }
      w.finalize();
      written.push(readFileSync(file));
    }
    if (written.length === 2) expect(Buffer.compare(written[0]!, written[1]!)).toBe(0);
    for (const which of testedBackends) {
      const r = readSamples(written[0]!, which);
      expect(r.code).toBe('ok');
      expect(r.samples.length).toBe(2 * threads);
      expect(r.samples[threads + 5]).toMatch(/^6@/);
    }
  });
});

describe('8,000 version-2 zstd reader lifetimes after 4,000 to warm up', () => {
  const file = path.join(dir, 'v2-lifetimes.tach');
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, formatVersion: 2, compression: 'zstd' });
  const frames = Array.from({ length: 50 }, (_, i) =>
    w.internFrame({ filename: 'a.py', funcname: `f${i}`, lineno: i + 1 }),
  );
  for (let i = 0; i < 500; i++)
    w.writeStack(1 + (i % 4), 0, 1000 + i * 1000, 0, [frames[i % 50]!, frames[(i * 7) % 50]!]);
  w.finalize();
  for (const which of testedBackends) {
    // ≤ 50 MB over 8,000 lifetimes (noise after the warm-up: ≤ 25 MB): a leak of 6 KB per lifetime fails it.
    it(`${which}: memory outside V8's heap grows ≤ 50 MB`, () => {
      const script = path.join(__dirname, 'child', 'v2-lifetimes.cjs');
      const r = childJson<{ done: number; rssGrowth: number; heapUsedGrowth: number; externalGrowth: number }>(
        ['--expose-gc', script, which, '8000', file, '500'],
        300_000,
      );
      console.log(`v2 lifetimes ${which}: ${JSON.stringify(r)}`);
      expect(r.done).toBe(8000);
      expect(r.rssGrowth / 1e6).toBeLessThan(50);
      expect(r.externalGrowth / 1e6).toBeLessThan(50);
      expect(r.heapUsedGrowth / 1e6).toBeLessThan(50);
    });
  }
});
