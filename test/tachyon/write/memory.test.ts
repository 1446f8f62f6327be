// test tier: slow (1,000 writer lifetimes with RSS measured, ~22 s)
/**
 * A writer's memory is released when its life ends (finalize or close), not
 * at some later garbage collection: 1,000 writer lifetimes in one process, in
 * a synchronous loop and with an event-loop turn between them, grow RSS
 * outside V8's heap, V8's heap in use and external memory by at most 50 MB
 * each (RSS less V8's heap total: Node 24 keeps emptied heap pages). zstd-napi frees a compression context
 * (3.75 MB at level 5, 82 MB at level 19) only in a finalizer Node runs on a
 * later turn, and the native writer's buffers (4.5 MiB with zstd) likewise.
 * Each case runs in a child process, which owns nothing else.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EMULATED } from '../../support/environment';
import { childJson } from '../../support/child';
import { testedBackends } from '../../support/backends';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-writer-memory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BOUND = 50 * 1024 * 1024;
// RSS outside V8's heap also holds qemu-user's translated code, which grows as V8 compiles more (53 MB seen).
const RSS_BOUND = BOUND + (EMULATED ? 32 * 1024 * 1024 : 0);

function lifetimes(
  which: string,
  level: string,
  count: number,
  mode: 'sync' | 'async',
): { done: number; rssGrowth: number; heapUsedGrowth: number; externalGrowth: number } {
  const script = path.join(__dirname, '..', 'child', 'writer-lifetimes.cjs');
  return childJson(['--expose-gc', script, which, level, String(count), mode, dir], 240_000);
}

describe.each(testedBackends)('writer lifetimes (%s)', (which) => {
  for (const mode of ['sync', 'async'] as const) {
    it(`1,000 zstd level-5 writers (${mode}) stay within 50 MB`, () => {
      const r = lifetimes(which, '5', 1000, mode);
      expect(r.done).toBe(1000);
      expect(r.rssGrowth).toBeLessThanOrEqual(RSS_BOUND);
      expect(r.heapUsedGrowth).toBeLessThanOrEqual(BOUND);
      expect(r.externalGrowth).toBeLessThanOrEqual(BOUND);
    });
  }

  it('100 zstd level-19 writers (sync, 82 MB of context each) stay within 50 MB', () => {
    const r = lifetimes(which, '19', 100, 'sync');
    expect(r.done).toBe(100);
    expect(r.rssGrowth).toBeLessThanOrEqual(RSS_BOUND);
    expect(r.heapUsedGrowth).toBeLessThanOrEqual(BOUND);
    expect(r.externalGrowth).toBeLessThanOrEqual(BOUND);
  });

  it('1,000 uncompressed writers (sync) stay within 50 MB', () => {
    const r = lifetimes(which, 'none', 1000, 'sync');
    expect(r.done).toBe(1000);
    expect(r.rssGrowth).toBeLessThanOrEqual(RSS_BOUND);
    expect(r.heapUsedGrowth).toBeLessThanOrEqual(BOUND);
  });
});
