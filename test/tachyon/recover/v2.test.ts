/**
 * recover() of a version-2 profile: a writer process that flushes and is
 * then SIGKILLed leaves blocks and a journal from which every sample and heap
 * event accepted before its last flush is rebuilt, equal to what a writer
 * given the same input (flushed at the same points) finalizes: byte for byte
 * when uncompressed, event for event under zstd; both backends alike. A torn
 * last checkpoint falls back to the one before; no journal is
 * ERR_TACHYON_RECOVER_V2.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HeapStacks } from '../../../lib/record/wire/heap-events';
import { ProfileReader, openHeapTrace, recover } from '../../../lib/tachyon/index';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../../lib/index';
import type { HeapFileSink, ProfileWriterOptions } from '../../../lib/tachyon/index';
import { codeOf } from '../../support/refusals';
import { readBack } from '../../support/heap-traces';
import { testedBackends } from '../../support/backends';
import { scratchDir } from '../../support/scratch-dir';

type Heap = { stacks: HeapStacks; ids: number[] };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const child = require('../child/write-v2-until-killed.cjs') as {
  writerOptions: (which: 'native' | 'js', compression: 'zstd' | 'none') => ProfileWriterOptions;
  writePart: (w: ProfileWriter, sink: HeapFileSink, ids: number[], heap: Heap, k: number) => void;
  makeStacks: (stacks: typeof HeapStacks) => Heap;
  internFrames: (w: ProfileWriter) => number[];
  SAMPLES_PER_PART: number;
};

const dir = scratchDir('profpack-recover-v2-');
let n = 0;
const tmp = (tag: string) => path.join(dir, `${tag}-${n++}.tach`);

/** Runs the child writer until it prints "waiting", then SIGKILLs it. */
function killWhenWaiting(which: string, compression: string, file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const script = path.join(__dirname, '..', 'child', 'write-v2-until-killed.cjs');
    const proc = spawn(process.execPath, [script, which, compression, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let err = '';
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    proc.stdout.on('data', (b: Buffer) => {
      for (const line of b.toString().split('\n').filter(Boolean)) {
        lines.push(line);
        if (line === 'waiting') proc.kill('SIGKILL');
      }
    });
    proc.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(lines) : reject(new Error(`child exited ${code} ${signal}: ${err}`)),
    );
  });
}

/** A writer as the child makes it, and a writer of part k of the child's sequence (its samples and heap events). */
function childWriter(
  file: string,
  which: 'native' | 'js',
  compression: 'zstd' | 'none',
): { w: ProfileWriter; writePart(k: number): void } {
  const w = new ProfileWriter(file, child.writerOptions(which, compression));
  const ids = child.internFrames(w);
  const sink = w.heapSink();
  const heap = child.makeStacks(HeapStacks);
  return { w, writePart: (k) => child.writePart(w, sink, ids, heap, k) };
}

/** A writer given parts 0..parts-1 of the child's sequence, flushed after each, finalized. */
function reference(parts: number, compression: 'zstd' | 'none', which: 'native' | 'js'): string {
  const file = tmp('reference');
  const { w, writePart } = childWriter(file, which, compression);
  for (let k = 0; k < parts; k++) {
    writePart(k);
    w.flush();
  }
  w.finalize();
  return file;
}

/** The samples (frames resolved), the header's counts and the heap events, as readers see them. */
function contents(file: string, which: 'native' | 'js') {
  const reader = ProfileReader.open(file, { backend: which });
  const samples = [...reader.samples()].map((s) => ({ ...s, stack: s.stack.map((i) => reader.frames[i]) }));
  const { sampleCount, threadCount, startTimeUs, sampleIntervalUs, compressionType } = reader.info;
  reader.close();
  const heap = readBack(openHeapTrace(file, { backend: which })!);
  return { samples, info: { sampleCount, threadCount, startTimeUs, sampleIntervalUs, compressionType }, heap };
}

/** An unfinished file as the kill leaves it, with its journal, in a fresh place. */
function copyUnfinished(file: string): string {
  const copy = tmp('copy');
  fs.copyFileSync(file, copy);
  fs.copyFileSync(`${file}.journal`, `${copy}.journal`);
  return copy;
}

for (const which of testedBackends) {
  describe(`recover, version 2 (${which})`, () => {
    for (const compression of ['none', 'zstd'] as const) {
      it(`${compression}: a SIGKILLed writer gives back every sample and heap event up to its last flush`, async () => {
        const file = tmp(`killed-${compression}`);
        expect(await killWhenWaiting(which, compression, file)).toEqual(['flushed 6000', 'waiting']);
        const out = tmp('recovered');
        const result = recover(file, out, { backend: which });
        expect(result).toMatchObject({ source: 'journal', samples: 6000, threads: 3, frames: 64 + 7, checkpoints: 3 });
        const want = reference(3, compression, which);
        const got = contents(out, which);
        expect(got.samples.length).toBe(6000);
        expect(got.heap.filter((b) => b.kind === 'alloc').length).toBe(60);
        expect(got).toEqual(contents(want, which));
        // Uncompressed, the blocks and the trailer are the writer's own bytes.
        if (compression === 'none') expect(fs.readFileSync(out).equals(fs.readFileSync(want))).toBe(true);
        // Both writer backends seal blocks at the same samples (same file); both rebuild the same profile.
        if (testedBackends.length === 2) {
          const twin = reference(3, compression, which === 'native' ? 'js' : 'native');
          expect(fs.readFileSync(twin).equals(fs.readFileSync(want))).toBe(true);
        }
        for (const other of testedBackends) {
          const again = tmp('again');
          recover(file, again, { backend: other });
          expect(fs.readFileSync(again).equals(fs.readFileSync(out))).toBe(true);
        }
      });
    }

    it('a torn last checkpoint falls back to the one before it', () => {
      const file = tmp('torn');
      const { w, writePart } = childWriter(file, which, 'none');
      const sizes: number[] = [];
      for (let k = 0; k < 2; k++) {
        writePart(k);
        w.flush();
        sizes.push(fs.statSync(`${file}.journal`).size);
      }
      const copy = copyUnfinished(file);
      w.close();
      expect(fs.existsSync(`${file}.journal`)).toBe(false);
      fs.truncateSync(`${copy}.journal`, sizes[1]! - 3);
      const out = tmp('recovered');
      expect(recover(copy, out, { backend: which })).toMatchObject({ samples: 2000, checkpoints: 1 });
      expect(fs.readFileSync(out).equals(fs.readFileSync(reference(1, 'none', which)))).toBe(true);
    });

    it('without a journal an unfinished version-2 file is ERR_TACHYON_RECOVER_V2, nothing written', () => {
      const file = tmp('nojournal');
      const { w, writePart } = childWriter(file, which, 'zstd');
      writePart(0);
      w.flush();
      const copy = tmp('copy');
      fs.copyFileSync(file, copy);
      w.close();
      const out = tmp('out');
      expect(codeOf(() => recover(copy, out, { backend: which }))).toBe('ERR_TACHYON_RECOVER_V2');
      expect(fs.existsSync(out)).toBe(false);
    });

    it('finalize() removes the journal; flushes of a long recording keep it bounded', () => {
      const file = tmp('bounded');
      const { w, writePart } = childWriter(file, which, 'zstd');
      let largest = 0;
      for (let k = 0; k < 40; k++) {
        writePart(k);
        w.flush();
        largest = Math.max(largest, fs.statSync(`${file}.journal`).size);
      }
      const copy = copyUnfinished(file);
      const whole = fs.statSync(`${copy}.journal`).size;
      w.finalize();
      expect(fs.existsSync(`${file}.journal`)).toBe(false);
      // Never more than twice one whole checkpoint (or the 1 MiB floor) plus the checkpoint being added.
      expect(largest).toBeLessThanOrEqual(Math.max(1 << 20, 2 * whole) + whole);
      const out = tmp('recovered');
      expect(recover(copy, out, { backend: which }).samples).toBe(40 * child.SAMPLES_PER_PART);
      expect(contents(out, which)).toEqual(contents(file, which));
    });
  });
}
