/**
 * The near-out-of-memory trigger against V8's real abort (Node's
 * --max-old-space-size=64): a program hoarding arrays, small ones that V8
 * first keeps in the young generation and big ones in the large-object space,
 * reports the watcher's usage as it goes; the last report before the abort
 * must have passed the default ratio, so the recorder's check would have
 * polled in time. Judged by what the program reported, never by time.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NEAR_LIMIT_RATIO } from '../../lib/record/heap/options';
import { compileBuild, type Build } from '../support/build';

const probe = path.join(__dirname, '..', 'fixtures', 'heap', 'near-limit-probe.js');
let build: Build;
beforeAll(() => {
  build = compileBuild();
}, 120_000);
afterAll(() => build?.cleanup());

describe('the near-limit trigger fires before V8 aborts', () => {
  it.each([
    ['small arrays, young first (100 doubles)', 100],
    ['arrays of 10,000 doubles', 10_000],
    ['large-object arrays (100,000 doubles)', 100_000],
  ])(
    '%s',
    (_what, doubles) => {
      const limitJs = path.join(build.dist, 'record', 'heap', 'limit.js');
      const r = spawnSync(process.execPath, ['--max-old-space-size=64', probe, limitJs, String(doubles)], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(r.stderr).toContain('JavaScript heap out of memory');
      const usages = [...r.stderr.matchAll(/^usage (\S+)$/gm)].map((m) => Number(m[1]));
      expect(usages.length).toBeGreaterThan(10);
      const last = usages.at(-1)!;
      expect({ last, ok: last >= DEFAULT_NEAR_LIMIT_RATIO && last < 1.2 }).toMatchObject({ ok: true });
    },
    120_000,
  );
});
