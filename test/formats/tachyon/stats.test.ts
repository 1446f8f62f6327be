/**
 * Tachyon's statistics block (duration, sample_rate, error_rate, missed_samples: CPython's `set_stats`) through
 * profpack. CPython's sampler counts sampling passes a second in sample_rate (a pass samples every thread and a
 * failed pass counts too) and writes error_rate and missed_samples as percentages (Lib/profiling/sampling/sample.py):
 * none can be derived again from the ticks. Truth: CPython 3.15's reader (get_info) of the CPython-written
 * vectors and of what profpack wrote from them; for a source without a block, the rate by CPython's definition
 * of a profile built here (its samples, threads and duration known).
 */
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backend } from '../../../lib/backend';
import { main } from '../../../lib/cli/main';
import { convert } from '../../../lib/formats/convert';
import { ProfileBuilder, makeFrame } from '../../../lib/profile/index';
import { tachyonAdapter } from '../../../lib/formats/tachyon/index';
import { downgrade } from '../../../lib/tachyon/index';
import { cpythonBeforeTests, cpythonDumps } from '../../support/cpython-dump';
import { sharedPath } from '../../support/environment';
import { scratchDir } from '../../support/scratch-dir';

cpythonBeforeTests();
afterEach(() => vi.restoreAllMocks());
const dir = scratchDir('profpack-tachyon-stats-');
const vector = (name: string): string => sharedPath('vectors', 'tachyon', `${name}.bin`);

interface Stats {
  duration_sec: number | null;
  sample_rate: number | null;
  error_rate: number | null;
  missed_samples: number | null;
}
const statsOf = (info: unknown): Stats => {
  const i = info as Stats;
  return {
    duration_sec: i.duration_sec,
    sample_rate: i.sample_rate,
    error_rate: i.error_rate,
    missed_samples: i.missed_samples,
  };
};

function info(file: string): string {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    expect(main(['node', 'profpack', 'info', file])).toBe(0);
  } finally {
    vi.restoreAllMocks();
  }
  return out;
}

// s16: error 1.25 %, missed 0.5 %; s18: missed -3.5 % alone; r01: a real recording (36 % of its passes failed);
// c02: the original 32-byte block (duration and rate only).
const names = [
  's16_meta_cpu_features_stats_none',
  's18_meta_wall_missed_only_none',
  'r01_cpu_wall_none',
  'c02_legacy_stats32',
];

describe(`Tachyon statistics block (${backend.name} backend)`, () => {
  it('convert to version 1, to version 2 and downgraded back: the block CPython wrote, as CPython reads it', () => {
    const outputs: string[] = [];
    for (const name of names) {
      const v1 = path.join(dir, `${name}.v1.bin`);
      const v2 = path.join(dir, `${name}.v2.bin`);
      const down = path.join(dir, `${name}.down.bin`);
      convert(vector(name), v1, { to: 'tachyon', compression: 'none' });
      convert(vector(name), v2, { to: 'tachyon', version: 2, compression: 'none' });
      downgrade(v2, down);
      outputs.push(vector(name), v1, down);
    }
    const dumps = cpythonDumps(outputs);
    for (const name of names) {
      const want = statsOf(dumps.get(`${name}.bin`)!.info);
      expect(want.sample_rate, `${name}: CPython reads a block`).not.toBeNull();
      for (const out of [`${name}.v1.bin`, `${name}.down.bin`])
        expect(statsOf(dumps.get(out)!.info), out).toEqual(want);
    }
  });

  it('info prints the block as CPython reads it: error rate and missed samples in %', () => {
    const dumps = cpythonDumps(names.map(vector));
    for (const name of names) {
      const want = statsOf(dumps.get(`${name}.bin`)!.info);
      const text = info(vector(name));
      const m = /^duration: +([\d.]+) s \(stats block\), sample rate ([\d.]+)\/s$/m.exec(text);
      expect(m, `${name}: duration line`).not.toBeNull();
      // Printed with 3 and 1 decimals: within half a unit of the last digit.
      expect(Math.abs(Number(m![1]) - want.duration_sec!)).toBeLessThanOrEqual(0.0005 + 1e-12);
      expect(Math.abs(Number(m![2]) - want.sample_rate!)).toBeLessThanOrEqual(0.05 + 1e-12);
      const error = /^error rate: +(-?[\d.]+) %$/m.exec(text);
      const missed = /^missed: +(-?[\d.]+) %$/m.exec(text);
      expect(error === null ? null : Number(error[1]), `${name}: error rate`).toBe(
        want.error_rate === null ? null : Number(want.error_rate.toFixed(2)),
      );
      expect(missed === null ? null : Number(missed[1]), `${name}: missed`).toBe(
        want.missed_samples === null ? null : Number(want.missed_samples.toFixed(2)),
      );
    }
  });

  it('a source without a block: the rate is samples a second per thread, as a CPython pass samples every thread', () => {
    // Two threads sampled together 300 times over 0.3 s (a 1 ms interval): 1,000 passes a second; a record of
    // count 3 is three of those samples.
    const meta = {
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type: 'wall', unit: 'nanoseconds' },
      ],
      defaultSampleType: 0,
      startTimeUs: 5_000_000n,
      sampleIntervalUs: 1000n,
      durationUs: 300_000n,
    };
    const b = new ProfileBuilder(meta);
    const f = b.internFrame(makeFrame('work', 'app.py', 1, 0));
    const stack = b.stacks.internOutermostFirst([f]);
    const threads = [b.internThread(1n), b.internThread(2n)];
    for (let k = 0; k < 100; k++) for (const t of threads) b.add(stack, t, 5_000_000 + k * 3000, 0, [3, 3e6]);
    const passes = 300;
    const rate = passes / 0.3;
    const v1 = path.join(dir, 'built.v1.bin');
    const v2 = path.join(dir, 'built.v2.bin');
    tachyonAdapter.write!(b, { path: v1, write: () => {} }, { compression: 'none' });
    tachyonAdapter.write!(b, { path: v2, write: () => {} }, { compression: 'none', version: 2 });
    const down = path.join(dir, 'built.down.bin');
    downgrade(v2, down);
    const dumps = cpythonDumps([v1, down]);
    for (const out of ['built.v1.bin', 'built.down.bin']) {
      const got = statsOf(dumps.get(out)!.info);
      expect(got.duration_sec, out).toBe(0.3);
      expect(got.sample_rate, out).toBeCloseTo(rate, 9);
    }
  });
});
