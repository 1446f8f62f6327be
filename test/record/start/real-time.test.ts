// test tier: slow (recordings timed against the wall clock, ~14 s)
/**
 * A recording measures time (issue 26): written as pprof its default total
 * is the real time the samples stand for, and speedscope's axis is the
 * recording's duration — not samples times the nominal interval (a sampler
 * that manages 200 ticks a second still totals the seconds it ran). Judged
 * against the recording's own stated duration, so a loaded machine (fewer
 * ticks, longer gaps) does not change the answer.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProfile } from '../../../lib/formats/index';
import { aggregate } from '../../../lib/query/aggregate';
import { ProfileReader } from '../../../lib/tachyon/index';
import { buildForTests } from '../../support/build';
import { SLOWDOWN } from '../../support/environment';

describe('a recording written as pprof and speedscope keeps its real time', () => {
  const { build, dir: work } = buildForTests('profpack-real-time-');

  it(
    'pprof totals the recording span in wall nanoseconds; speedscope spans it',
    () => {
      const app = path.join(work, 'busy.js');
      writeFileSync(
        app,
        `const end = Date.now() + ${1500 * SLOWDOWN}; let x = 0; function spin() { for (let i = 0; i < 1e5; i++) x += Math.sqrt(i); } while (Date.now() < end) spin(); console.log(x > 0);`,
      );
      const cli = (...args: string[]) =>
        spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8', cwd: work, timeout: 120_000 * SLOWDOWN });
      expect(cli('record', '-o', 'busy.tach', '--', process.execPath, app).status).toBe(0);
      const reader = ProfileReader.open(path.join(work, 'busy.tach'));
      const durationNs = reader.info.durationSec! * 1e9;
      reader.close();
      expect(durationNs).toBeGreaterThan(1e9);
      expect(cli('convert', 'busy.tach', '-o', 'busy.pb.gz', '-q').status).toBe(0);
      expect(cli('convert', 'busy.tach', '-o', 'busy.speedscope.json', '-q').status).toBe(0);
      // pprof: the default type is the time (go tool pprof shows it first), and it adds up to the span.
      const pprof = openProfile(path.join(work, 'busy.pb.gz'));
      const top = aggregate(pprof);
      pprof.close();
      expect(top.sampleType).toEqual({ type: 'wall', unit: 'nanoseconds' });
      expect(Math.abs(top.total - durationNs)).toBeLessThan(durationNs * 0.05);
      // speedscope: the one profile's axis, end minus start, is the span; its weights add up to it.
      const ss = JSON.parse(readFileSync(path.join(work, 'busy.speedscope.json'), 'utf8')) as {
        profiles: { unit: string; startValue: number; endValue: number; weights: number[] }[];
      };
      const [profile] = ss.profiles;
      expect(profile!.unit).toBe('nanoseconds');
      expect(Math.abs(profile!.endValue - profile!.startValue - durationNs)).toBeLessThan(durationNs * 0.05);
      expect(Math.abs(profile!.weights.reduce((a, b) => a + b, 0) - durationNs)).toBeLessThan(durationNs * 0.05);
    },
    240_000 * SLOWDOWN,
  );
});
