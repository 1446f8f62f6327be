// replay(collector, { timestamps: 'typed' }): the same calls as CPython's
// shape, with the timestamps as a BigUint64Array view instead of a bigint[],
// on every sample vector, the real CPython profiles, resumption-heavy tuning
// and version 2.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { ProfileWriter } from '../../../lib/tachyon/write/index';
import type { ReaderOptions } from '../../../lib/tachyon/read/types';
import { repoRoot, sharedPath } from '../../support/environment';
import { thrown } from '../../support/refusals';
import { rng } from '../../support/rng.mjs';

const vectors = sharedPath('vectors', 'tachyon');
const files = [
  ...readdirSync(vectors)
    .filter((f) => /^[a-z]\d\d_.*\.bin$/.test(f) && !f.startsWith('e'))
    .map((f) => path.join(vectors, f)),
  path.join(repoRoot, 'bench', 'fixtures', 'real_cpython_13k_none.bin'),
  path.join(repoRoot, 'bench', 'fixtures', 'real_cpython_15k_zstd.bin'),
];
/** Tiny buffers: REPEAT batches are cut, so the typed path gathers parts too. */
const tiny: ReaderOptions = {
  keepDecompressedLimit: 0,
  tuning: { zstdChunk: 64, events: 6, timestamps: 3, nodes: 4096, maxNodes: 64 },
};

type Call = [unknown, bigint[]];

function calls(reader: ProfileReader, typed: boolean): Call[] {
  const out: Call[] = [];
  if (typed) {
    reader.replay(
      {
        collect(stackFrames, timestampsUs) {
          expect(timestampsUs).toBeInstanceOf(BigUint64Array);
          out.push([stackFrames, Array.from(timestampsUs)]);
        },
      },
      { timestamps: 'typed' },
    );
  } else reader.replay({ collect: (stackFrames, timestampsUs) => out.push([stackFrames, timestampsUs]) });
  return out;
}

function compare(open: () => ProfileReader): number {
  const r1 = open();
  const arrays = calls(r1, false);
  const r2 = open();
  const typed = calls(r2, true);
  expect(typed).toEqual(arrays);
  expect(r2.stats).toEqual(r1.stats);
  r1.close();
  r2.close();
  return arrays.length;
}

describe("replay with timestamps: 'typed'", () => {
  it('makes the same calls as the bigint[] shape on every sample vector and the real CPython profiles', () => {
    expect(files.length).toBeGreaterThan(20);
    let total = 0;
    for (const file of files) total += compare(() => ProfileReader.open(file));
    expect(total).toBeGreaterThan(1000);
  });

  it('the same with tiny buffers (REPEAT batches cut across decoder calls)', () => {
    for (const file of files) compare(() => ProfileReader.open(file, tiny));
  });

  it('the same on a version-2 file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'profpack-typed-'));
    try {
      const file = path.join(dir, 'v2.tach');
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000, formatVersion: 2 });
      const frame = (i: number) => ({
        filename: `f${i % 3}.py`,
        funcname: `fn${i}`,
        location: { lineno: i, endLineno: i, colOffset: 0, endColOffset: 4 },
        opcode: 0,
      });
      for (let k = 0; k < 50; k++) {
        const frameInfo = Array.from({ length: 1 + (k % 5) }, (_, i) => frame(i + (k % 7)));
        w.writeSample(
          [{ interpreterId: 0, threads: [{ threadId: 1 + (k % 2), status: k % 3, frameInfo }] }],
          1000 + k * 1000,
        );
      }
      w.finalize();
      expect(compare(() => ProfileReader.open(file))).toBe(50);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('any other value of the option is ERR_INVALID_ARGUMENT, before anything is delivered', () => {
    const reader = ProfileReader.open(files[0]!);
    let delivered = 0;
    const err = thrown(() => reader.replay({ collect: () => delivered++ }, { timestamps: 'bigint' } as never));
    expect(err.code).toBe('ERR_INVALID_ARGUMENT');
    expect(err.expected).toBe('"array" | "typed"');
    expect(delivered).toBe(0);
    reader.close();
  });
});

describe('a large uncompressed file (mapped without MAP_POPULATE, released behind the decoder)', () => {
  it('replays twice from one reader with the same samples as samples()', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'profpack-large-'));
    try {
      const file = path.join(dir, 'large.tach');
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000, compression: 'none' });
      const ids = Array.from({ length: 500 }, (_, i) =>
        w.internFrame({ filename: `m${i % 20}.py`, funcname: `f${i}`, lineno: i }),
      );
      const random = rng(12345);
      const next = () => Math.floor(random() * 2 ** 24);
      const stack = new Uint32Array(60);
      let samples = 0;
      // Every stack differs from the last one deep down: FULL / POP_PUSH records of ~40-60 bytes, past 8 MiB.
      while (samples < 200_000) {
        for (let k = 0; k < stack.length; k++) stack[k] = ids[next() % ids.length]!;
        w.writeStack(1 + (samples % 4), 0, 1000 + samples, 0, stack.subarray(0, 30 + (next() % 30)));
        samples++;
      }
      w.finalize();
      const reader = ProfileReader.open(file);
      expect(reader.layout.stringTableOffset).toBeGreaterThan(8 << 20);
      const digest = (): [number, number] => {
        let n = 0;
        let sum = 0;
        reader.replay(
          {
            collect(stackFrames, timestampsUs) {
              for (const t of timestampsUs)
                sum = (sum * 31 + Number(t) + stackFrames[0]!.threads[0]!.frameInfo.length) % 1_000_000_007;
              n += timestampsUs.length;
            },
          },
          { timestamps: 'typed' },
        );
        return [n, sum];
      };
      const first = digest();
      expect(digest()).toEqual(first);
      let n = 0;
      let sum = 0;
      for (const s of reader.samples()) {
        sum = (sum * 31 + Number(s.timestampUs) + s.stack.length) % 1_000_000_007;
        n++;
      }
      expect([n, sum]).toEqual(first);
      expect(n).toBe(samples);
      reader.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
