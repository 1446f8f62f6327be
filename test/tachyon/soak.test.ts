/**
 * Soak: an agent's life, shortened to 1,000 file rotations (seconds, not
 * hours). Four worker threads write profiles in turn (zstd and none, timed
 * flushes, some explicit flushes), the main thread replays each finalized
 * file, checks every sample is there and its journal gone, and deletes it.
 * RSS and open descriptors stay flat: between half and nine tenths of the
 * rotations RSS grows at most 128 MB (a leaked zstd context per writer would
 * be 1.5 GB over those 400 files; the workers' own V8 heaps, which the main
 * thread's gc() does not collect, moved by up to 59 MB on a loaded machine),
 * and once the workers are done the descriptors are back where
 * they started. Runs in a child process, which owns nothing else.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childJson } from '../support/child';
import { scratchDir } from '../support/scratch-dir';
import { testedBackends } from '../support/backends';

const dir = scratchDir('profpack-soak-');

interface Point {
  rss: number;
  fds: number;
}

describe.each(testedBackends)('soak (%s)', (which) => {
  it('1,000 rotations from 4 worker threads, each file replayed and deleted: complete files, flat RSS and descriptors', () => {
    const r = childJson<{
      checked: number;
      bad: number;
      leftover: number;
      start: Point;
      half: Point;
      late: Point;
      end: Point;
    }>(['--expose-gc', path.join(__dirname, 'child', 'soak.cjs'), which, '1000', '4', dir], 120_000);
    expect(r.checked).toBe(1000);
    expect(r.bad).toBe(0);
    expect(r.leftover).toBe(0);
    expect(r.late.rss - r.half.rss).toBeLessThanOrEqual(128 * 1024 * 1024);
    // Each of the 4 workers may hold a profile and its journal open at either point; one leaked per file would be hundreds.
    expect(r.late.fds).toBeLessThanOrEqual(r.half.fds + 8);
    // Node may keep a descriptor or two of its worker machinery; one per file would be 1,000.
    expect(r.end.fds).toBeLessThanOrEqual(r.start.fds + 2);
  });
});
