/**
 * startRecording's inline writer flushes every flushIntervalMs from the agent's timer (not the writer's own: see
 * ChunkTarget.timed), one file or rotating ones: while the recording runs, a copy of the file being written and its
 * journal recovers to the heap allocations polled so far. Without the periodic flush the copy recovers none (the
 * journal is written only by a flush).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHeapTrace, recover } from '../../../lib/tachyon/index';
import { startRecording } from '../../../lib/record/start/index';
import { sleep } from '../../support/child';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-inline-flush-');
const FLUSH_MS = 20;

/** Heap allocations a copy of `file` and its journal, taken now, gives back through recover (0: nothing flushed). */
function recoveredAllocations(file: string, tag: string): number {
  const copy = path.join(dir, `copy-${tag}.tach`);
  fs.copyFileSync(file, copy);
  if (!fs.existsSync(`${file}.journal`)) return 0;
  fs.copyFileSync(`${file}.journal`, `${copy}.journal`);
  const fixed = path.join(dir, `fixed-${tag}.tach`);
  recover(copy, fixed);
  let allocations = 0;
  // No heap section yet: no poll had reached a flush.
  for (const b of openHeapTrace(fixed)?.events() ?? []) if (b.kind === 'alloc') allocations += b.ordinals.length;
  return allocations;
}

describe('the inline writer’s periodic flush', () => {
  it.each([false, true])(
    'a copy taken while recording recovers the allocations polled (rotating: %s)',
    async (rotating) => {
      const out = path.join(dir, `flush-${rotating}.tach`);
      const rotateDir = path.join(dir, `rotated-${rotating}`);
      const recording = startRecording({
        writer: 'inline',
        out,
        cpu: false,
        heap: { intervalBytes: 4096, polls: 'harvest' },
        // Harvests (the polls) far less often than flushes, and the files rotate seldom: the flush alone puts them on disk.
        harvestMs: 10 * FLUSH_MS,
        flushIntervalMs: FLUSH_MS,
        handleExit: false,
        ...(rotating ? { rotate: { everyMs: 60_000, dir: rotateDir } } : {}),
      });
      const kept: number[][] = [];
      let recovered = 0;
      try {
        // A bounded number of steps, each a few flush intervals: the first poll reaches the file, then a flush.
        for (let step = 0; step < 200 && recovered === 0; step++) {
          for (let i = 0; i < 20; i++) kept.push(new Array(500).fill(step));
          await sleep(2 * FLUSH_MS);
          const file = rotating
            ? path.join(
                rotateDir,
                fs.readdirSync(rotateDir).find((f) => f.endsWith('.tach'))!,
              )
            : out;
          if (step % 5 === 4) recovered = recoveredAllocations(file, `${rotating}-${step}`);
        }
      } finally {
        recording.stop();
      }
      expect(recovered).toBeGreaterThan(0);
    },
  );
});
