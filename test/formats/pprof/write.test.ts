// test tier: slow (the pprof writer against go tool pprof, ~11 s)
// The pprof adapter's writer, judged by go tool pprof: the real files read
// and written back show the same -raw (values, stacks, labels, header) and
// -tags; aggregated output keeps every total; a model built in memory comes
// out with its types, units, real-time totals, threads and times; the output
// streams in bounded chunks.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapsedAdapter } from '../../../lib/formats/collapsed';
import { convert } from '../../../lib/formats/convert';
import { ProfileWriter } from '../../../lib/tachyon/index';
import { NOT_EPOCH_COMMENT, readPprof } from '../../../lib/formats/pprof/index';
import { makeFrame, ProfileBuilder } from '../../../lib/profile/index';
import { goPprof, goPprofRaw, goPprofRawTotals } from '../../support/outside-tools';
import { outsideDir, pprofFixtures, rawView, tagsView, totals, writeFile } from './support';
import { scratchDir } from '../../support/scratch-dir';
import { Profile } from 'pprof-format';
import { expectCoded } from '../helpers';
import { nearHalves, roundedExactSum } from '../../support/exact-sum';

const work = scratchDir('profpack-pprof-write-');

/** Time labels: per record in the input, gone from aggregated output. */
const TIME_KEYS = ['end_timestamp_ns', 'timestamp_us'];

describe('pprof → model → pprof: go tool pprof sees the same on both sides', () => {
  for (const name of pprofFixtures) {
    it(`${name}: -raw (values, stacks, labels, header) and -tags, per record; totals and -tags aggregated`, () => {
      const input = path.join(outsideDir, name);
      const out = path.join(work, `${name.replace('/', '-')}.rt.pb.gz`);
      writeFile(readPprof(readFileSync(input)), out);
      const before = rawView(input);
      const after = rawView(out);
      expect(after.header).toEqual(before.header);
      expect(after.samples).toEqual(before.samples);
      // Time to the ns: time_nanos's digits below the µs (Go's, Datadog's) are kept, not truncated.
      expect(after.time).not.toBeNull();
      expect(after.time).toBe(before.time);
      expect(tagsView(out)).toBe(tagsView(input));
      expect(goPprof(['-comments', out])).toBe(goPprof(['-comments', input]));

      const aggregated = path.join(work, `${name.replace('/', '-')}.agg.pb.gz`);
      writeFile(readPprof(readFileSync(input)), aggregated, { aggregate: true });
      expect(goPprofRawTotals(aggregated)).toEqual(goPprofRawTotals(input));
      expect(goPprofRaw(aggregated).header).toEqual(goPprofRaw(input).header);
      expect(tagsView(aggregated, TIME_KEYS)).toBe(tagsView(input, TIME_KEYS));
    });
  }

  it('a raw (not gzipped) profile.proto written and read back is the same model', () => {
    const source = readPprof(readFileSync(path.join(outsideDir, 'go', 'go.heap.pb.gz')));
    const out = path.join(work, 'heap.pb');
    writeFile(source, out, { gzip: false });
    const again = readPprof(readFileSync(out));
    expect(again.meta.sampleTypes).toEqual(source.meta.sampleTypes);
    expect(totals(again)).toEqual(totals(source));
    expect(goPprofRawTotals(out)).toEqual(goPprofRawTotals(path.join(outsideDir, 'go', 'go.heap.pb.gz')));
  });
});

function recording(records: number, gapNs: (i: number) => number): ProfileBuilder {
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'wall', unit: 'nanoseconds' },
    ],
    defaultSampleType: 1,
    startTimeUs: 5_000_000n, // a monotonic clock, not the epoch
    sampleIntervalUs: 1000n,
  });
  const main = b.internFrame(makeFrame('main', 'app.js', 1, 5));
  const work = b.internFrame(makeFrame('', 'app.js', 7));
  const t1 = b.internThread(1n, 0, 'main');
  const t2 = b.internThread(2n ** 64n - 1n, 3);
  const stacks = [b.stacks.intern([main]), b.stacks.intern([work, main])];
  for (let i = 0; i < records; i++)
    b.add(stacks[i % 2]!, i % 3 === 0 ? t2 : t1, 5_000_000 + i * 1000, i % 5 === 0 ? 1 : 0, [1, gapNs(i)]);
  return b;
}

/** A gap in ns. */
const gapNs = nearHalves(5e6);

describe('pprof out of a model built in memory', () => {
  const totalsOut = (gaps: number[]) => {
    const b = recording(gaps.length, (i) => gaps[i]!);
    const out = path.join(work, 'gaps.pb.gz');
    writeFile(b, out);
    const perRecord = goPprofRawTotals(out).map((t) => t.total);
    writeFile(b, out, { aggregate: true });
    return { perRecord, aggregated: goPprofRawTotals(out).map((t) => t.total) };
  };

  it('fractional real times total their exact sum rounded once in go tool pprof, per record and aggregated', () => {
    fc.assert(
      fc.property(fc.array(gapNs, { minLength: 1, maxLength: 40 }), (gaps) => {
        const want = [gaps.length, roundedExactSum(gaps)];
        expect(totalsOut(gaps)).toEqual({ perRecord: want, aggregated: want });
      }),
      { numRuns: 8 },
    );
  });

  it('a sum near a half rounds as the exact sum does, not as a float sum does', () => {
    // 34.8 + 22.7 is 57.5 in float64 but 57.4999999999999964… exactly: 57, not Math.round(57.5).
    expect(roundedExactSum([34.8, 22.7])).toBe(57);
    expect(totalsOut([34.8, 22.7])).toEqual({ perRecord: [2, 57], aggregated: [2, 57] });
    // A carried remainder held in one double lost 15.1's last bits beside 1976143.5: pprof totalled 4518349.
    const gaps = [17.5, 19, 15.1, 1976143.5, 20.9, 2542132.5];
    expect(roundedExactSum(gaps)).toBe(4518348);
    expect(totalsOut(gaps)).toEqual({ perRecord: [6, 4518348], aggregated: [6, 4518348] });
  });

  it('threads, interpreters, times and status go out as labels Go shows; a non-epoch clock says so', () => {
    const b = recording(30, () => 1_000_000);
    const out = path.join(work, 'threads.pb.gz');
    writeFile(b, out);
    const tags = goPprof(['-tags', out]);
    // Weights are the records' wall values (1 ms each); a u64 id beyond int64 went out as text.
    expect(tags).toMatch(
      /thread_id: Total 30\.0ms\n\s+20\.0ms \(66\.67%\): 1\n\s+10\.0ms \(33\.33%\): 18446744073709551615\n/,
    );
    expect(tags).toMatch(/thread_name: Total 20\.0ms\n\s+20\.0ms \(\s*100%\): main\n/);
    expect(tags).toMatch(/interpreter_id: Total 10\.0ms\n\s+10\.0ms \(\s*100%\): 3\n/);
    expect(tags).toMatch(/status: Total 6\.0ms\n\s+6\.0ms \(\s*100%\): 1\n/);
    expect(tags).toMatch(/timestamp_us: Total 30\.0ms\n/);
    expect(goPprof(['-comments', out])).toContain(NOT_EPOCH_COMMENT);
    const raw = goPprofRaw(out);
    expect(raw.header.periodType).toEqual({ type: 'wall', unit: 'nanoseconds' });
    expect(raw.header.period).toBe(1_000_000);
    expect(raw.header.defaultType).toBe(null); // the last type, so not written
    // Read back: the same threads (a u64 id beyond int64 went out as text), times and status.
    const again = readPprof(readFileSync(out));
    const [batch] = [...again.batches()];
    expect(again.threads[batch!.thread[0]!]).toMatchObject({ threadId: 2n ** 64n - 1n, interpreterId: 3 });
    expect(again.threads[batch!.thread[1]!]).toMatchObject({ threadId: 1n, name: 'main' });
    expect([...batch!.time.subarray(0, 3)]).toEqual([5_000_000, 5_001_000, 5_002_000]);
    expect([...batch!.status.subarray(0, 6)]).toEqual([1, 0, 0, 0, 0, 1]);
    expect(again.frames.map((f) => f.funcname).sort()).toEqual(['', 'main']);
    expect(goPprof(['-top', '-nodecount=1', out])).toContain('(anonymous)');
  });

  it('units and the default type: a heap model reads in bytes, and a default other than the last is marked', () => {
    const b = new ProfileBuilder({
      sampleTypes: [
        { type: 'inuse_space', unit: 'bytes' },
        { type: 'inuse_objects', unit: 'count' },
      ],
      defaultSampleType: 0,
      startTimeUs: 1_764_000_000_000_000n,
      sampleIntervalUs: 0n,
      periodType: { type: 'space', unit: 'bytes' },
      period: 524288,
      durationUs: 2_500_000n,
    });
    const f = b.internFrame(makeFrame('alloc', 'heap.go', 3));
    b.add(
      b.stacks.intern([f]),
      b.internThread(0n),
      NaN,
      0,
      [1_048_576, 3],
      b.internLabels([{ key: 'bytes', num: 349525, unit: 'bytes' }]),
    );
    const out = path.join(work, 'heap.pb.gz');
    writeFile(b, out);
    const raw = goPprofRaw(out);
    expect(raw.header.defaultType).toBe('inuse_space');
    expect(raw.header.periodType).toEqual({ type: 'space', unit: 'bytes' });
    expect(raw.header.duration).toBe('2.5s');
    expect(goPprof(['-top', out])).toMatch(/Showing nodes accounting for 1MB, 100% of 1MB total/);
    expect(goPprof(['-tags', out])).toMatch(/bytes: Total 1\.0MB\n\s+1\.0MB \(\s*100%\): 341\.33kB/);
    expect(goPprof(['-raw', out])).toMatch(/Time: 2025-11-24 /);
    // No thread labels for thread 0 without a name: what a sample without them reads as.
    expect(goPprof(['-tags', out])).not.toContain('thread_id');
  });

  it('duration_nanos without a stated duration reaches the last tick of a record of many (go tool pprof reads it)', () => {
    // Ticks at 1,001,000 µs, then 500 from 1,002,500 µs one 1 ms interval apart (the record's count): the last
    // at 1,501,500 µs; the span from the first tick plus the last one's interval is 501.5 ms.
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'samples', unit: 'count' }],
      defaultSampleType: 0,
      startTimeUs: 1_001_000n,
      sampleIntervalUs: 1000n,
    });
    const loop = b.stacks.intern([b.internFrame(makeFrame('loop', 'loop.py', 2))]);
    const thread = b.internThread(1n);
    b.add(loop, thread, 1_001_000, 0, [1]);
    b.add(loop, thread, 1_002_500, 0, [500]);
    const out = path.join(work, 'run-last.pb.gz');
    writeFile(b, out);
    // -raw prints the duration cut to 4 characters ('501.' of 501.5ms); the proto's field exactly.
    expect(goPprofRaw(out).header.duration).toBe('501.');
    expect(Number(Profile.decode(gunzipSync(readFileSync(out))).durationNanos)).toBe(501_500_000);
  });

  it('collapsed stacks (counts only) go out as samples/count with no invented period', () => {
    const out = path.join(work, 'folded.pb.gz');
    writeFile(collapsedAdapter.read({ bytes: Buffer.from('main;work 3\nmain;idle 2\n') }, {}), out);
    const raw = goPprofRaw(out);
    expect(raw.header.sampleTypes).toEqual([{ type: 'samples', unit: 'count' }]);
    // Go prints an absent period type as "PeriodType: " (empty).
    expect(raw.header.periodType).toEqual({ type: '', unit: '' });
    expect(raw.header.period).toBe(0);
    expect(raw.totals.map((t) => t.total)).toEqual([5]);
  });

  it('negative values (a diff profile) go out as int64 and total exactly in go tool pprof', () => {
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'alloc_space', unit: 'bytes' }],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    const f = b.stacks.intern([b.internFrame(makeFrame('grow', 'diff.go', 9))]);
    const values = [-(2 ** 40), 5, -1, 2 ** 52, -(2 ** 52)];
    for (const v of values) b.add(f, b.internThread(0n), NaN, 0, [v]);
    const out = path.join(work, 'diff.pb.gz');
    writeFile(b, out);
    expect(goPprofRawTotals(out)).toEqual([{ type: 'alloc_space', unit: 'bytes', total: -(2 ** 40) + 4 }]);
    expect(totals(readPprof(readFileSync(out))).sums).toEqual([-(2 ** 40) + 4]);
  });

  it('values up to int64 go out exactly; a value beyond int64 (a Tachyon f64 column) is refused, never wrapped', () => {
    const model = (values: number[]) => {
      const b = new ProfileBuilder({
        sampleTypes: [{ type: 'alloc_space', unit: 'bytes' }],
        defaultSampleType: 0,
        startTimeUs: 0n,
        sampleIntervalUs: 0n,
      });
      const f = b.stacks.intern([b.internFrame(makeFrame('grow', 'big.go', 9))]);
      for (const v of values) b.add(f, b.internThread(0n), NaN, 0, [v]);
      return b;
    };
    // The oracle: pprof-format's own decoder, as bigints (the largest doubles below ±2^63 are exact integers).
    const fits = [2 ** 62, 2 ** 63 - 1024, -(2 ** 63), 2 ** 53 + 2];
    const out = path.join(work, 'int64.pb.gz');
    writeFile(model(fits), out);
    const decoded = Profile.decode(gunzipSync(readFileSync(out)));
    // pprof-format hands a 64-bit varint back unsigned; int64 is its two's complement.
    expect(decoded.sample.map((s) => BigInt.asIntN(64, BigInt(s.value[0]!)))).toEqual(fits.map((v) => BigInt(v)));
    for (const v of [2 ** 63, 1e19, -(2 ** 64)])
      expectCoded(
        () => writeFile(model([1, v]), path.join(work, 'beyond.pb.gz')),
        'ERR_CONVERT_BAD_INPUT',
        new RegExp(`sample 1's alloc_space/bytes value ${v} is beyond int64`),
      );
  });

  it('streams: 60,000 records come out in gzip members of about 1 MiB, never one buffer', () => {
    const b = recording(60_000, (i) => 1000 + (i % 7));
    const out = path.join(work, 'many.pb.gz');
    const chunks = writeFile(b, out);
    expect(chunks.length).toBeGreaterThan(1);
    // A member holds at most ~1.25 MiB of protobuf; gzip only shrinks it.
    expect(Math.max(...chunks)).toBeLessThan(1.3 * 1024 * 1024);
    expect(gunzipSync(readFileSync(out)).length).toBeGreaterThan(1.3 * 1024 * 1024);
    const raw = goPprofRaw(out);
    expect(raw.totals.map((t) => t.total)).toEqual(totals(b).sums);
    expect(totals(readPprof(readFileSync(out)))).toEqual(totals(b));
  });

  it('convert() to pprof streams: more records than maxSamples go out (go tool pprof counts them all)', () => {
    // Gaps unlike the interval: every tick is its own record (docs/formats.md, Times), each with its time label.
    const input = path.join(work, 'records.tach');
    const w = new ProfileWriter(input, { sampleIntervalUs: 1000, compression: 'none' });
    const main = w.internFrame({ filename: 'app.py', funcname: 'main', lineno: 1 });
    const spin = w.internFrame({ filename: 'app.py', funcname: 'spin', lineno: 2 });
    const records = 3_000;
    for (let i = 0; i < records; i++)
      w.writeStack(1, 0, 1_000_000 + i * 1500 + (i % 3), 0, i % 2 ? [spin, main] : [main]);
    w.finalize();
    const out = path.join(work, 'records.pb.gz');
    const summary = convert(input, out, { maxSamples: 100 });
    expect(summary.samples).toBe(records);
    const raw = goPprofRaw(out);
    expect(raw.samples).toBe(records);
    expect(raw.totals.find((t) => t.type === 'samples')?.total).toBe(records);
    // An output that holds every record still has the limit.
    expectCoded(
      () => convert(input, path.join(work, 'records.speedscope.json'), { maxSamples: 100 }),
      'ERR_CONVERT_TOO_MANY_SAMPLES',
    );
  });
});
