/**
 * The sampled live-bytes estimate against a live set of known size. V8's
 * inspector reports each sample's size already unsampled (size × round(1/p)),
 * so scaling it once more, as the file's raw sizes are, read ~1.3× at a 4 KiB
 * interval and ~1.5× at 16 KiB; sizeForUnsampledBytes keeps the inspector's
 * bytes as the estimate. Bounds are statistical: a sum of n samples is known
 * to ~1/sqrt(n), allowed 5 of those, plus V8's rounding of the count (2.12
 * rounds to 2 for a 2.6 KB array at 4 KiB: 6 % low).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unsampledWeight } from '../../lib/profile/index';
import { sizeForUnsampledBytes } from '../../lib/record/program/heap/inspector-size';

const fixture = path.join(__dirname, '..', 'fixtures', 'heap', 'known-live.js');
const V8_COUNT_ROUNDING = 0.06;

/** V8's ScaleSample: a sampled object of `size` bytes counted round(1/p) times, as the inspector reports it. */
function inspectorSize(size: number, interval: number): number {
  return size * Math.floor(1 / -Math.expm1(-size / interval) + 0.5);
}

describe('sizeForUnsampledBytes', () => {
  it("gives back the inspector's bytes as the unsampled weight, for any object size and interval", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1024, max: 2 ** 24 }), fc.integer({ min: 1, max: 2 ** 16 }), (interval, words) => {
        const reported = inspectorSize(words * 8, interval);
        const weight = unsampledWeight(sizeForUnsampledBytes(reported, interval), interval).bytes;
        expect(Math.abs(weight - reported) / reported).toBeLessThan(1e-3);
      }),
    );
  });

  it('never exceeds the reported bytes, and is a whole positive size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1024, max: 2 ** 24 }), fc.integer({ min: 1, max: 2 ** 31 }), (interval, bytes) => {
        const size = sizeForUnsampledBytes(bytes, interval);
        expect(Number.isInteger(size) && size >= 1 && size <= bytes).toBe(true);
      }),
    );
  });
});

describe('the live-bytes estimate of a known live set', () => {
  it.each([
    ['4,000 arrays of 320 doubles at 4 KiB', 4096, 4000, 320],
    ['25,000 arrays of 80 doubles at 16 KiB', 16384, 25000, 80],
  ])('%s', (_what, interval, count, doubles) => {
    const r = spawnSync(process.execPath, ['--expose-gc', fixture, String(interval), String(count), String(doubles)], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const { truthBytes, sizes } = JSON.parse(r.stdout) as { truthBytes: number; sizes: number[] };
    expect(truthBytes).toBeGreaterThan(count * doubles * 8);
    let estimate = 0;
    let scaledTwice = 0;
    for (const reported of sizes) {
      estimate += unsampledWeight(sizeForUnsampledBytes(reported, interval), interval).bytes;
      scaledTwice += unsampledWeight(reported, interval).bytes;
    }
    const tolerance = 5 / Math.sqrt(sizes.length) + V8_COUNT_ROUNDING;
    const ratio = estimate / truthBytes;
    expect({ ratio, ok: Math.abs(ratio - 1) < tolerance }).toMatchObject({ ok: true });
    // What the sampler's sizes gave before: the bias this fixes, well outside the same bounds.
    expect(scaledTwice / truthBytes).toBeGreaterThan(1 + tolerance);
  });
});
