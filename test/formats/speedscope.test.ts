import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Ajv from 'ajv';
import type { Browser } from 'playwright-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapsedAdapter } from '../../lib/formats/collapsed';
import { cpuprofileAdapter } from '../../lib/formats/devtools/cpuprofile';
import { speedscopeAdapter } from '../../lib/formats/speedscope';
import { ProfileBuilder, SampleTypes, makeFrame, sampleTypeName } from '../../lib/profile/index';
import { sharedPath } from '../support/environment';
import { launch } from '../view/browser';
import { expectCoded, fuzzJson, read, stacksOf, totals, write } from './helpers';
import { sandwichRows, speedscopeTable } from './speedscope-app';
import { nearestExactSum, spannedValues, tenthsOrHalves } from '../support/exact-sum';

const sample = sharedPath('data', 'outside', 'speedscope_0.6.0_two-sampled.speedscope.json');
const schema = JSON.parse(
  readFileSync(sharedPath('data', 'outside', 'speedscope-1.25.0-file-format-schema.json'), 'utf8'),
) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

interface Sampled {
  type: string;
  name: string;
  unit: string;
  startValue: number;
  endValue: number;
  samples: number[][];
  weights: number[];
}
interface File {
  shared: { frames: { name: string }[] };
  profiles: Sampled[];
}

const file = (unit: string, weights: unknown[], extra: object = {}) =>
  JSON.stringify({
    $schema: 'https://www.speedscope.app/file-format-schema.json',
    shared: { frames: [{ name: 'main' }, { name: 'work', file: 'w.js', line: 3, col: 7 }] },
    profiles: [
      {
        type: 'sampled',
        name: 'p',
        unit,
        startValue: 0,
        endValue: 10,
        samples: weights.map(() => [0, 1]),
        weights,
        ...extra,
      },
    ],
  });

describe('speedscope read: weights in their unit', () => {
  it("speedscope's two-sampled sample: weights in seconds are time/nanoseconds, one record each", () => {
    const json = JSON.parse(readFileSync(sample, 'utf8')) as File;
    const src = read(speedscopeAdapter, readFileSync(sample));
    expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['time/nanoseconds']);
    const t = totals(src);
    expect(t.records).toBe(json.profiles[0]!.samples.length + json.profiles[1]!.samples.length);
    const seconds = json.profiles.flatMap((p) => p.weights).reduce((a, b) => a + b, 0);
    expect(t.total).toBe(seconds * 1e9);
    expect(src.threads.map((x) => x.name)).toEqual(['one', 'two']);
  });

  it('a weight of 10^15 is one record with the exact total, in little memory', () => {
    const before = process.memoryUsage();
    const src = read(speedscopeAdapter, file('none', [1e15, 1, 2]));
    const t = totals(src);
    const after = process.memoryUsage();
    expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['samples/count']);
    expect(t.records).toBe(3);
    expect(t.total).toBe(1e15 + 3);
    expect(after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)).toBeLessThan(
      100 * 1024 * 1024,
    );
  });

  it('bytes, nanoseconds and milliseconds keep their meaning', () => {
    expect(totals(read(speedscopeAdapter, file('bytes', [1024, 3]))).total).toBe(1027);
    expect(read(speedscopeAdapter, file('bytes', [1])).meta.sampleTypes).toEqual([{ type: 'space', unit: 'bytes' }]);
    expect(totals(read(speedscopeAdapter, file('milliseconds', [1.5, 2]))).total).toBe(3_500_000);
    expect(totals(read(speedscopeAdapter, file('nanoseconds', [7, 8]))).total).toBe(15);
    // Decimal weights whose ns are whole read exactly despite binary noise in weight × 10^9
    // (0.07 * 1e9 is 70000000.00000001 in doubles); the oracle is the decimal itself.
    const decimal = [0.07, 0.001, 1.234567891, 123456.000000001];
    const got = read(speedscopeAdapter, file('seconds', decimal));
    const ns = [...got.batches()].flatMap((b) => [...b.values[0]!.subarray(0, b.length)]);
    expect(ns).toEqual([70_000_000, 1_000_000, 1_234_567_891, 123_456_000_000_001]);
    const frames = read(speedscopeAdapter, file('none', [1])).frames;
    expect(frames[1]).toMatchObject({ funcname: 'work', filename: 'w.js', lineno: 3, column: 7 });
  });

  it('a refused weight points at its byte in the file', () => {
    const text = file('none', [1, 2, -3]).replace('"weights":[1,2,-3]', '"weights": [ 1, 2,\n -3 ]');
    const err = expectCoded(
      () => read(speedscopeAdapter, text),
      'ERR_CONVERT_BAD_INPUT',
      /weights\[2\] is negative/,
    ) as Error & {
      offset: number;
    };
    expect(text.slice(err.offset, err.offset + 2)).toBe('-3');
    const two = JSON.stringify({
      shared: { frames: [{ name: 'é' }] },
      profiles: [
        { type: 'sampled', name: 'a', unit: 'bytes', startValue: 0, endValue: 1, samples: [[0]], weights: [1] },
        {
          type: 'sampled',
          name: 'b',
          unit: 'bytes',
          startValue: 0,
          endValue: 1,
          samples: [[0], [0]],
          weights: ['é', 0.5],
        },
      ],
    });
    const second = expectCoded(
      () => read(speedscopeAdapter, two),
      'ERR_CONVERT_BAD_INPUT',
      /profile 1 \("b"\) weights\[0\]/,
    ) as Error & {
      offset: number;
    };
    expect(
      Buffer.from(two)
        .subarray(second.offset, second.offset + 4)
        .toString(),
    ).toBe('"é"');
  });

  it('refuses negative, fractional and non-numeric weights, naming the profile and index', () => {
    expectCoded(
      () => read(speedscopeAdapter, file('none', [1, 1, -1e15])),
      'ERR_CONVERT_BAD_INPUT',
      /profile 0 \("p"\) weights\[2\] is negative/,
    );
    expectCoded(
      () => read(speedscopeAdapter, file('bytes', [1, 0.5])),
      'ERR_CONVERT_BAD_INPUT',
      /weights\[1\] is 0\.5, not a whole number of bytes/,
    );
    expectCoded(
      () => read(speedscopeAdapter, file('none', [1, '2'])),
      'ERR_CONVERT_BAD_INPUT',
      /weights\[1\] is "2", not a number/,
    );
    expectCoded(() => read(speedscopeAdapter, file('none', [null])), 'ERR_CONVERT_BAD_INPUT', /weights\[0\] is null/);
    // Sub-nanosecond weights are refused, not rounded (the model's time unit is the ns).
    expectCoded(
      () => read(speedscopeAdapter, file('microseconds', [1, 0.0015])),
      'ERR_CONVERT_BAD_INPUT',
      /weights\[1\] is 0\.0015 microseconds, not a whole number of ns/,
    );
    expectCoded(
      () => read(speedscopeAdapter, file('nanoseconds', [0.4])),
      'ERR_CONVERT_BAD_INPUT',
      /weights\[0\] is 0\.4 nanoseconds, not a whole number of ns/,
    );
    expectCoded(() => read(speedscopeAdapter, file('seconds', [1e10])), 'ERR_CONVERT_BAD_INPUT', /past 2\^53 ns/);
    expectCoded(() => read(speedscopeAdapter, file('parsecs', [1])), 'ERR_CONVERT_BAD_INPUT', /unit "parsecs"/);
  });

  it('py-spy\'s profile names (`Thread TID "NAME"`, `Process PID Thread TID "NAME"`) are threads, not odd names', () => {
    // Named as py-spy's speedscope writer names them (src/speedscope.rs): the OS thread id in decimal, or the
    // pthread id as {:#X}; --subprocesses adds the process. The oracle is the names themselves.
    const profile = (name: string, n: number) => ({
      type: 'sampled',
      name,
      unit: 'seconds',
      startValue: 0,
      endValue: n / 100,
      samples: Array.from({ length: n }, () => [0]),
      weights: Array.from({ length: n }, () => 0.01),
    });
    const text = JSON.stringify({
      $schema: 'https://www.speedscope.app/file-format-schema.json',
      exporter: 'py-spy@0.4.0',
      shared: { frames: [{ name: 'main', file: 'm.py' }] },
      profiles: [
        profile('Process 99 Thread 0x7F3A2B1C4740 "worker"', 2),
        profile('Thread 4243 "MainThread"', 3),
        profile('Thread 4250 ""', 1),
      ],
    });
    const src = read(speedscopeAdapter, text);
    expect(src.threads.map((x) => [x.threadId, x.name])).toEqual([
      [0x7f3a2b1c4740n, 'worker'],
      [4243n, 'MainThread'],
      [4250n, undefined],
    ]);
    expect(src.labelSets.slice(1)).toEqual([[{ key: 'pid', num: 99 }]]);
    expect(totals(src).perThread).toEqual(
      new Map([
        [String(0x7f3a2b1c4740n), 20_000_000],
        ['4243', 30_000_000],
        ['4250', 10_000_000],
      ]),
    );
  });

  it('refuses damage with coded errors (any value of the wrong type)', () => {
    fuzzJson(speedscopeAdapter, JSON.parse(readFileSync(sample, 'utf8')));
  });

  it('refuses "evented" profiles naming what they are', () => {
    const evented = JSON.stringify({
      $schema: 'https://www.speedscope.app/file-format-schema.json',
      shared: { frames: [{ name: 'a' }] },
      profiles: [{ type: 'evented', name: 'e', unit: 'milliseconds', startValue: 0, endValue: 1, events: [] }],
    });
    expectCoded(
      () => read(speedscopeAdapter, evented),
      'ERR_CONVERT_BAD_INPUT',
      /speedscope profile 0 is "evented" \(open\/close events, what speedscope's Export writes\)/,
    );
  });
});

describe('speedscope write: the chosen type, real time', () => {
  function recording(): ProfileBuilder {
    const b = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples, SampleTypes.cpu],
      defaultSampleType: 1,
      startTimeUs: 5_000_000n,
      sampleIntervalUs: 1000n,
    });
    const f = ['main', 'a', 'b'].map((n) => b.internFrame(makeFrame(n, 'x.js', 1)));
    const t1 = b.internThread(11n, 0, 'main');
    const t2 = b.internThread(12n);
    // 32 s of thread 11 sampled every 160 ms, each sample weighing its real gap (not the 1 ms interval).
    for (let i = 0; i < 200; i++)
      b.add(b.stacks.internOutermostFirst([f[0]!, f[1 + (i % 2)]!]), t1, 5_000_000 + i * 160_000, 0, [1, 160_000_000]);
    b.add(b.stacks.internOutermostFirst([f[0]!]), t2, 5_000_500, 0, [1, 3_000_000]);
    return b;
  }

  it('weights are the values of the type, in its unit; the axis spans the real duration; the schema accepts it', () => {
    const out = write(speedscopeAdapter, recording());
    const json = JSON.parse(out.text) as File;
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
    const [main, other] = json.profiles;
    expect(main!.unit).toBe('nanoseconds');
    expect(main!.name).toBe('thread 11 (main)');
    expect(main!.weights.every((w) => w === 160_000_000)).toBe(true);
    expect(main!.endValue - main!.startValue).toBe(32e9);
    expect(other!.weights).toEqual([3_000_000]);
    const counts = JSON.parse(write(speedscopeAdapter, recording(), { sampleType: 'samples' }).text) as File;
    expect(counts.profiles[0]!.unit).toBe('none');
    expect(counts.profiles[0]!.weights.every((w) => w === 1)).toBe(true);
  });

  it("speedscope's own importer (Chromium) shows the real time: 32 s of 160-ms samples, not 200 intervals", async () => {
    const browser: Browser = await launch();
    const work = mkdtempSync(path.join(tmpdir(), 'profpack-speedscope-'));
    try {
      const file = path.join(work, 'rec.speedscope.json');
      writeFileSync(file, write(speedscopeAdapter, recording()).text);
      const { table, log } = await speedscopeTable(browser, work, file);
      expect(log.filter((l) => /^(error|pageerror|dialog)/.test(l))).toEqual([]);
      const rows = sandwichRows(table);
      expect(rows.get('a')![1]).toBeCloseTo(16_000, 6);
      expect(rows.get('b')![1]).toBeCloseTo(16_000, 6);
      expect(rows.get('main')![0]).toBeCloseTo(32_000, 6);
    } finally {
      await browser.close();
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('round trip keeps the sample type, threads, stacks, totals and start', () => {
    const back = read(speedscopeAdapter, write(speedscopeAdapter, recording()).text);
    expect(back.meta.sampleTypes).toEqual([SampleTypes.cpu]);
    expect(back.threads.map((t) => [t.threadId, t.name])).toEqual([
      [11n, 'main'],
      [12n, undefined],
    ]);
    const t = totals(back);
    expect(t.total).toBe(200 * 160_000_000 + 3_000_000);
    expect(back.meta.startTimeUs).toBe(5_000_000n);
    expect(stacksOf(back)[1]).toEqual(['main', 'b']);
  });

  it('bytes go out in bytes; collapsed counts as none; a real .cpuprofile validates', () => {
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    b.add(b.stacks.push(0, b.internFrame(makeFrame('alloc', 'a.js'))), b.internThread(0n), NaN, 0, [1 << 30]);
    const heap = JSON.parse(write(speedscopeAdapter, b).text) as File;
    expect(heap.profiles[0]).toMatchObject({ unit: 'bytes', weights: [1 << 30], startValue: 0, endValue: 1 << 30 });
    const folded = JSON.parse(write(speedscopeAdapter, read(collapsedAdapter, 'a;b 30000000000\n')).text) as File;
    expect(folded.profiles[0]).toMatchObject({ unit: 'none', weights: [30_000_000_000] });
    const cpu = JSON.parse(
      write(
        speedscopeAdapter,
        read(cpuprofileAdapter, readFileSync(sharedPath('data', 'outside', 'node-cpu-prof.heavy.cpuprofile'))),
      ).text,
    ) as File;
    expect(validate(cpu), JSON.stringify(validate.errors)).toBe(true);
    const p = cpu.profiles[0]!;
    expect(Math.abs(p.endValue - p.startValue - p.weights.reduce((a, w) => a + w, 0))).toBeLessThan(20e6);
  });
});

describe('speedscope write: the axis ends at the exact sum of the weights, rounded once', () => {
  /** One thread's records of wall time in ns, with times (µs) or without. */
  function wall(values: number[], timesUs?: number[]): ProfileBuilder {
    const b = new ProfileBuilder({
      sampleTypes: [SampleTypes.wall],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1n,
    });
    const s = b.stacks.internOutermostFirst([b.internFrame(makeFrame('a', ''))]);
    const t = b.internThread(0n);
    values.forEach((v, i) => b.add(s, t, timesUs?.[i] ?? NaN, 0, [v]));
    return b;
  }
  const profileOf = (b: ProfileBuilder) => (JSON.parse(write(speedscopeAdapter, b).text) as File).profiles[0]!;

  it("untimed: endValue is the weights' exact sum rounded to the nearest double (property)", () => {
    fc.assert(
      fc.property(fc.array(spannedValues(1e9), { minLength: 1, maxLength: 40 }), (values) => {
        const p = profileOf(wall(values));
        expect(p.weights).toEqual(values);
        expect([p.startValue, p.endValue]).toEqual([0, nearestExactSum(values)]);
      }),
      { numRuns: 300 },
    );
  });

  it('timed: the start plus the weights, rounded once, where the last sample ends sooner (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.array(tenthsOrHalves(1e6), { minLength: 1, maxLength: 40 }),
        (startUs, values) => {
          // Every record at one time: the last one ends at the start plus its own weight, never past the sum.
          const p = profileOf(
            wall(
              values,
              values.map(() => startUs),
            ),
          );
          expect(p.startValue).toBe(startUs * 1000);
          expect(p.endValue).toBe(nearestExactSum([startUs * 1000, ...values]));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('0.1 + 0.2 + 0.3 ns ends at 0.6, not the float sum 0.6000000000000001', () => {
    expect(0.1 + 0.2 + 0.3).toBe(0.6000000000000001);
    expect(nearestExactSum([0.1, 0.2, 0.3])).toBe(0.6);
    expect(profileOf(wall([0.1, 0.2, 0.3])).endValue).toBe(0.6);
  });
});

describe('speedscope detect', () => {
  it('knows its own files and not others', () => {
    expect(speedscopeAdapter.detect(readFileSync(sample).subarray(0, 4096))).toBe(true);
    expect(speedscopeAdapter.detect(Buffer.from('{"nodes":[]}'))).toBe(false);
  });
});
