// test tier: slow (recover of a 16 MiB region with memory measured, ~23 s)
/**
 * recover() of a version-2 file never holds its block region (a file recorded
 * for months is GBs): the profile is read in ranges of at most 1 MiB, and the
 * memory held in buffers while it is read stays a few MiB for a region of
 * 16 MiB. Measured at each read of the profile (an injected reader, after a
 * full garbage collection): a region read whole, or decompressed and kept
 * before it is written, holds most of the region by the last read.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { ProfileReader, ProfileWriter, RECOVER_INTERNALS, recover } from '../../../lib/tachyon/index';
import { parseJournal, type FileBytes } from '../../../lib/tachyon/file/index';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const backends: ('native' | 'js')[] = backend.name === 'native' ? ['native', 'js'] : ['js'];
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-recover-v2-bounded-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const MiB = 1 << 20;
/** Random stacks of 8..31 of 64 frames code to about 25 bytes a sample: a region of about 16 MiB. */
const SAMPLES = 680_000;
const files: Record<'none' | 'zstd', string> = { none: '', zstd: '' };

/** An unfinished version-2 file and its journal, as a SIGKILL after flush() leaves them. */
function writeUnfinished(compression: 'none' | 'zstd'): string {
  const file = path.join(dir, `live-${compression}.tach`);
  const w = new ProfileWriter(file, {
    sampleIntervalUs: 250,
    startTimeUs: 1_000_000,
    backend: backends[0],
    compression,
    formatVersion: 2,
  });
  const ids: number[] = [];
  for (let i = 0; i < 64; i++) ids.push(w.internFrame({ filename: `mod${i % 7}.js`, funcname: `fn${i}`, lineno: i }));
  let x = 2463534242;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const stack: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    stack.length = 0;
    const depth = 8 + (next() % 24);
    for (let d = 0; d < depth; d++) stack.push(ids[next() >>> 26]!);
    w.writeStack(1 + (s % 4), 0, 1_000_000 + 250 * s, 0, stack);
  }
  w.flush();
  const copy = path.join(dir, `killed-${compression}.tach`);
  fs.copyFileSync(file, copy);
  fs.copyFileSync(`${file}.journal`, `${copy}.journal`);
  w.close();
  fs.rmSync(file);
  return copy;
}

beforeAll(() => {
  files.none = writeUnfinished('none');
  files.zstd = writeUnfinished('zstd');
}, 240_000);

const buffers = () => process.memoryUsage().arrayBuffers;

for (const which of backends) {
  describe(`recover, version 2, bounded memory (${which})`, () => {
    for (const compression of ['none', 'zstd'] as const) {
      it(`${compression}: the profile is read in pieces of at most 1 MiB, and memory stays under 8 MiB`, () => {
        const input = files[compression];
        const stored = fs.statSync(input).size;
        const reads: number[] = [];
        const held: number[] = [];
        const seen = (length: number): void => {
          reads.push(length);
          gc();
          held.push(buffers() - baseline);
        };
        const wrapInput = (source: FileBytes): FileBytes => ({
          size: source.size,
          read(start, end) {
            seen(end - start);
            return source.read(start, end);
          },
          readInto(out, start) {
            seen(out.length);
            return source.readInto!(out, start);
          },
        });
        const out = path.join(dir, `out-${which}-${compression}.tach`);
        gc();
        const baseline = buffers();
        const result = recover(input, out, { backend: which, [RECOVER_INTERNALS]: { wrapInput } } as never);
        expect(result).toMatchObject({ source: 'journal', samples: SAMPLES, threads: 4, droppedBytes: 0 });
        const reader = ProfileReader.open(out, { backend: which });
        expect(Number(reader.info.sampleCount)).toBe(SAMPLES);
        reader.close();
        // The premise: a region of 16 MiB and more, stored in more than 8 MiB (zstd barely shrinks random stacks).
        expect(parseJournal(fs.readFileSync(`${input}.journal`)).regionBytes).toBeGreaterThan(16 * MiB);
        expect(stored).toBeGreaterThan(8 * MiB);
        // Every byte of the stored region was read, in many reads, none larger than a piece.
        expect(reads.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(stored);
        expect(reads.length).toBeGreaterThanOrEqual(Math.floor(stored / MiB));
        expect(Math.max(...reads)).toBeLessThanOrEqual(MiB);
        expect(Math.max(...held)).toBeLessThan(8 * MiB);
      });
    }
  });
}
