// The pprof adapter's reader: the real Go and Datadog files read as go tool
// pprof reads them (every sample type's sum, records, defaults, labels), and
// hand-built profiles for what those files do not show (packed and unpacked
// fields, inline frames, address-only locations, thread and time labels,
// values beyond 2^32, negatives). Hostile input is in pprof/hostile.test.ts.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  Function as PFunction,
  Label,
  Line,
  Location,
  Mapping,
  Profile,
  Sample,
  StringTable,
  ValueType,
} from 'pprof-format';
import { describe, expect, it } from 'vitest';
import { detectPprof, pprofAdapter, readPprof } from '../../../lib/formats/pprof/index';
import type { OutsideExpectations } from '../../support/outside-expected';
import { sharedPath } from '../../support/environment';
import { goPprofRaw, goPprofTop } from '../../support/outside-tools';
import { outsideDir, pprofFixtures, totals } from './support';
import { expectCoded } from '../helpers';

const expected = JSON.parse(readFileSync(path.join(outsideDir, 'expected.json'), 'utf8')) as OutsideExpectations;

describe("pprof read: the real tools' files as go tool pprof reads them", () => {
  for (const name of pprofFixtures) {
    it(`${name}: every sample type, its sum, the default type, period and records`, () => {
      const file = path.join(outsideDir, name);
      const bytes = readFileSync(file);
      const source = pprofAdapter.read({ bytes }, {});
      const raw = goPprofRaw(file);
      const { records, sums } = totals(source);
      expect(source.meta.sampleTypes).toEqual(raw.totals.map(({ type, unit }) => ({ type, unit })));
      expect(sums).toEqual(raw.totals.map((t) => t.total));
      // The type go tool pprof shows by default (-top's "Type:"), whether the file names it or not.
      expect(source.meta.sampleTypes[source.meta.defaultSampleType]!.type).toBe(goPprofTop(file).type);
      expect(source.meta.periodType ?? null).toEqual(raw.header.periodType);
      if (raw.header.period !== null) expect(source.meta.period).toBe(raw.header.period);
      const fromTools = expected.pprof[name];
      if (fromTools !== undefined) {
        // One record per Sample in the file, never expanded by value.
        expect(records).toBe(fromTools.fileSamples);
        expect(source.sampleCount).toBe(fromTools.fileSamples);
        if (fromTools.durationNanos > 0)
          expect(source.meta.durationUs).toBe(BigInt(Math.floor(fromTools.durationNanos / 1000)));
      }
    });
  }

  it('Go pprof.Do labels stay on their records as label sets, whatever order Go wrote them in', () => {
    const source = readPprof(readFileSync(path.join(outsideDir, 'go', 'go.cpu.pb.gz')));
    const used = new Set<number>();
    // Label sets are interned as the batches are read.
    for (const b of source.batches()) for (let i = 0; i < b.length; i++) used.add(b.labels[i]!);
    const sets = source.labelSets.map((s) => s.map((l) => `${l.key}=${l.str}`).join(','));
    expect(sets).toContain('phase=checksum,tenant=acme');
    expect(sets).toContain('phase=sort');
    expect(new Set(sets).size).toBe(sets.length);
    // countPrimes runs outside pprof.Do: some records have no labels.
    expect(used.has(0)).toBe(true);
  });

  it("Datadog: end_timestamp_ns is each record's time, the thread labels its thread, span ids stay labels", () => {
    const source = readPprof(readFileSync(path.join(outsideDir, 'datadog', 'datadog.wall.pb.gz')));
    const start = Number(source.meta.startTimeUs);
    let timed = 0;
    let records = 0;
    for (const b of source.batches()) {
      for (let i = 0; i < b.length; i++) {
        records++;
        if (!Number.isNaN(b.time[i]!)) {
          timed++;
          // On the epoch clock of time_nanos, within the minute the fixture was recorded in.
          expect(b.time[i]!).toBeGreaterThanOrEqual(start - 60e6);
          expect(b.time[i]!).toBeLessThanOrEqual(start + 60e6);
        }
      }
    }
    expect(timed).toBeGreaterThan(records / 2);
    expect(source.threads.some((t) => t.name !== undefined && t.name !== '')).toBe(true);
    const keys = new Set(source.labelSets.flat().map((l) => l.key));
    expect(keys.has('span id')).toBe(true);
    expect(keys.has('thread id')).toBe(true);
    expect(keys.has('end_timestamp_ns')).toBe(false);
    expect(source.meta.origin).toEqual({ format: 'pprof', producer: '@datadog/pprof' });
  });

  // @datadog/pprof sets time_nanos to Date.now() when it serialises (the end) and duration_nanos to the span;
  // each sample's end_timestamp_ns falls in between. Oracle: the fields as pprof-format decodes them.
  const datadogWall = [
    path.join(outsideDir, 'datadog', 'datadog.wall.pb.gz'),
    sharedPath('data', 'outside', 'datadog-pprof-5.20.0-wall-labels.pb.gz'),
  ];
  for (const file of datadogWall) {
    it(`Datadog ${path.basename(file)}: time_nanos is the end, the start is duration_nanos before, samples fall in it`, () => {
      const bytes = gunzipSync(readFileSync(file));
      const decoded = Profile.decode(bytes);
      const endNs = BigInt(decoded.timeNanos);
      const durationNs = BigInt(decoded.durationNanos);
      const source = readPprof(bytes);
      expect(source.meta.startTimeUs).toBe((endNs - durationNs) / 1000n);
      expect(source.meta.durationUs).toBe(durationNs / 1000n);
      const key = decoded.stringTable.strings.indexOf('end_timestamp_ns');
      const stamps = decoded.sample.flatMap((s) =>
        // A label of number 0 and no unit says nothing (Go's parser drops it).
        s.label.filter((l) => Number(l.key) === key && Number(l.num) !== 0).map((l) => Number(BigInt(l.num) / 1000n)),
      );
      expect(stamps.length).toBeGreaterThan(50);
      const times: number[] = [];
      for (const b of source.batches())
        for (let i = 0; i < b.length; i++) if (!Number.isNaN(b.time[i]!)) times.push(Math.round(b.time[i]!));
      expect(times.sort((a, b) => a - b)).toEqual(stamps.sort((a, b) => a - b));
      for (const t of times) {
        expect(t).toBeGreaterThanOrEqual(Number(source.meta.startTimeUs));
        expect(t).toBeLessThanOrEqual(Number(endNs / 1000n));
      }
    });
  }
});

interface Built {
  strings: StringTable;
  functions: PFunction[];
  locations: Location[];
}

function table(): Built {
  return { strings: new StringTable(), functions: [], locations: [] };
}

/** A location of one or more inlined functions (innermost first, as pprof lists them). */
function location(t: Built, names: string[]): number {
  const lines = names.map((name, k) => {
    const id = t.functions.length + 1;
    t.functions.push(new PFunction({ id, name: t.strings.dedup(name), filename: t.strings.dedup('app.go') }));
    return new Line({ functionId: id, line: 10 + k });
  });
  const id = t.locations.length + 1;
  t.locations.push(new Location({ id, line: lines }));
  return id;
}

function encode(t: Built, fields: Partial<ConstructorParameters<typeof Profile>[0]>): Uint8Array {
  return new Profile({
    location: t.locations,
    function: t.functions,
    stringTable: t.strings,
    ...fields,
  }).encode();
}

describe('pprof read: hand-built profiles', () => {
  it('a value past 2^53 is refused naming the sample, the value and its byte, never rounded', () => {
    const t = table();
    const a = location(t, ['a']);
    const k = (s: string) => t.strings.dedup(s);
    const fields = (big: bigint) => ({
      sampleType: [new ValueType({ type: k('alloc_space'), unit: k('bytes') })],
      sample: [new Sample({ locationId: [a], value: [1] }), new Sample({ locationId: [a], value: [big] })],
    });
    // 2^53 - 1 is the largest exact value: read as is.
    const edge = readPprof(encode(t, fields(2n ** 53n - 1n)));
    expect([...edge.batches()][0]!.values[0]!.slice(0, 2)).toEqual(Float64Array.from([1, 2 ** 53 - 1]));
    for (const big of [2n ** 53n + 1n, -(2n ** 60n) - 3n]) {
      const bytes = encode(t, fields(big));
      const err = expectCoded(
        () => [...readPprof(bytes).batches()],
        'ERR_CONVERT_BAD_INPUT',
        new RegExp(`sample 1 value 0 is ${big}, past 2\\^53`),
      ) as Error & { offset: number };
      // The offset is the value's varint: it decodes to the value itself (the oracle is protobuf's encoding).
      let n = 0n;
      for (let i = 0, shift = 0n; ; i++, shift += 7n) {
        const byte = bytes[err.offset + i]!;
        n |= BigInt(byte & 0x7f) << shift;
        if (byte < 0x80) break;
      }
      expect(BigInt.asIntN(64, n)).toBe(big);
    }
  });

  it('a count of 10^9 and a value beyond 2^32 are one record each, summed exactly; negatives are kept', () => {
    const t = table();
    const a = location(t, ['a']);
    const bytes = encode(t, {
      sampleType: [
        new ValueType({ type: t.strings.dedup('contentions'), unit: t.strings.dedup('count') }),
        new ValueType({ type: t.strings.dedup('delay'), unit: t.strings.dedup('nanoseconds') }),
      ],
      sample: [
        new Sample({ locationId: [a], value: [1_000_000_000, 824_648_531_000] }),
        new Sample({ locationId: [a], value: [-5, -1] }),
      ],
    });
    const before = process.memoryUsage().rss;
    const source = readPprof(gzipSync(bytes));
    const { records, sums } = totals(source);
    expect(records).toBe(2);
    expect(sums).toEqual([999_999_995, 824_648_530_999]);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('default_sample_type is honoured; without it the last type is the default', () => {
    const t = table();
    const types = () =>
      ['alloc_space', 'inuse_space'].map(
        (n) => new ValueType({ type: t.strings.dedup(n), unit: t.strings.dedup('bytes') }),
      );
    expect(readPprof(encode(t, { sampleType: types() })).meta.defaultSampleType).toBe(1);
    expect(
      readPprof(encode(t, { sampleType: types(), defaultSampleType: t.strings.dedup('alloc_space') })).meta
        .defaultSampleType,
    ).toBe(0);
  });

  it('inline frames innermost first; an address-only location is named after its mapping, or its address', () => {
    const t = table();
    const inlined = location(t, ['leaf', 'inlinedInto']);
    const main = location(t, ['main']);
    const mapping = new Mapping({ id: 1, filename: t.strings.dedup('/lib/x86_64-linux-gnu/libc.so.6') });
    t.locations.push(new Location({ id: 3, mappingId: 1, address: 0x7f00 }), new Location({ id: 4, address: 0xbeef }));
    const bytes = encode(t, {
      mapping: [mapping],
      sampleType: [new ValueType({ type: t.strings.dedup('samples'), unit: t.strings.dedup('count') })],
      sample: [new Sample({ locationId: [3, inlined, main], value: [1] }), new Sample({ locationId: [4], value: [1] })],
    });
    const source = readPprof(bytes);
    const [batch] = [...source.batches()];
    const names = (row: number) => source.stacks.toArray(batch!.stack[row]!).map((f) => source.frames[f]!.funcname);
    expect(names(0)).toEqual(['[libc.so.6]', 'leaf', 'inlinedInto', 'main']);
    expect(names(1)).toEqual(['0xbeef']);
    expect(source.frames.find((f) => f.funcname === 'leaf')).toMatchObject({
      filename: 'app.go',
      lineno: 10,
      column: null,
    });
  });

  it('thread labels: the best id key wins, text ids count, names and interpreters kept; time, status leave', () => {
    const t = table();
    const a = location(t, ['a']);
    const k = (s: string) => t.strings.dedup(s);
    const bytes = encode(t, {
      sampleType: [new ValueType({ type: k('samples'), unit: k('count') })],
      sample: [
        new Sample({
          locationId: [a],
          value: [1],
          label: [
            new Label({ key: k('os thread id'), str: k('99') }),
            new Label({ key: k('thread id'), str: k('7') }),
            new Label({ key: k('thread name'), str: k('Main') }),
          ],
        }),
        new Sample({
          locationId: [a],
          value: [1],
          label: [
            new Label({ key: k('thread_id'), num: 9, numUnit: k('id') }),
            new Label({ key: k('interpreter_id'), num: 2, numUnit: k('id') }),
            new Label({ key: k('timestamp_us'), num: 1_700_000_000_123_456, numUnit: k('microseconds') }),
            new Label({ key: k('status'), num: 3 }),
          ],
        }),
        new Sample({
          locationId: [a],
          value: [1],
          label: [
            new Label({ key: k('tid'), str: k('not-a-number') }),
            new Label({ key: k('big'), num: 2n ** 60n + 1n, numUnit: k('bytes') }),
          ],
        }),
      ],
    });
    const source = readPprof(bytes);
    const [b] = [...source.batches()];
    const thread = (row: number) => source.threads[b!.thread[row]!]!;
    expect(thread(0)).toEqual({ threadId: 7n, interpreterId: 0, name: 'Main' });
    expect(thread(1)).toEqual({ threadId: 9n, interpreterId: 2 });
    expect(thread(2)).toEqual({ threadId: 0n, interpreterId: 0 });
    expect([b!.time[0], b!.time[1]]).toEqual([NaN, 1_700_000_000_123_456]);
    expect([b!.status[0], b!.status[1]]).toEqual([0, 3]);
    expect(source.labelSets[b!.labels[1]!]).toEqual([
      { key: 'interpreter_id', num: 2, unit: 'id' },
      { key: 'thread_id', num: 9, unit: 'id' },
    ]);
    // Beyond 2^53 a label number keeps its exact decimal text.
    expect(source.labelSets[b!.labels[2]!]).toEqual([
      { key: 'big', str: '1152921504606846977' },
      { key: 'tid', str: 'not-a-number' },
    ]);
  });

  it('packed and unpacked repeated fields read alike (proto2 writers do not pack)', () => {
    // A profile written field by field: string table, one sample type, one function, one location, one sample unpacked.
    const bytes = Buffer.from([
      ...[0x32, 0x00, 0x32, 0x01, 0x73, 0x32, 0x01, 0x63, 0x32, 0x01, 0x66], // strings "", "s", "c", "f"
      ...[0x0a, 0x04, 0x08, 0x01, 0x10, 0x02], // sample_type s/c
      ...[0x2a, 0x04, 0x08, 0x01, 0x10, 0x03], // function 1 "f"
      ...[0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01], // location 1 → function 1
      ...[0x12, 0x06, 0x08, 0x01, 0x08, 0x01, 0x10, 0x05], // sample: location 1, location 1, value 5 (unpacked)
      ...[0x12, 0x06, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x06], // sample: packed location [1], packed value [6]
    ]);
    expect(detectPprof(bytes)).toBe(true);
    const source = readPprof(bytes);
    const [b] = [...source.batches()];
    expect(b!.length).toBe(2);
    expect([b!.values[0]![0], b!.values[0]![1]]).toEqual([5, 6]);
    expect(source.stacks.depth(b!.stack[0]!)).toBe(2);
    expect(source.frames[source.stacks.frame(b!.stack[1]!)]!.funcname).toBe('f');
  });

  it('a repeated stack is found by its packed bytes, and a second location_id field still extends it', () => {
    const t = table();
    const [a, b, c] = [location(t, ['a']), location(t, ['b']), location(t, ['c'])];
    const bytes = Buffer.from(
      encode(t, {
        sampleType: [new ValueType({ type: t.strings.dedup('samples'), unit: t.strings.dedup('count') })],
        sample: [new Sample({ locationId: [a, b], value: [1] }), new Sample({ locationId: [a, b], value: [2] })],
      }),
    );
    // A third sample by hand: packed [a, b] (cached by now), then packed [c].
    const third = Buffer.from([0x12, 0x09, 0x0a, 0x02, a, b, 0x0a, 0x01, c, 0x10, 0x03]);
    const source = readPprof(Buffer.concat([bytes, third]));
    const [batch] = [...source.batches()];
    const names = (row: number) => source.stacks.toArray(batch!.stack[row]!).map((f) => source.frames[f]!.funcname);
    expect(batch!.stack[0]).toBe(batch!.stack[1]);
    expect(names(1)).toEqual(['a', 'b']);
    expect(names(2)).toEqual(['a', 'b', 'c']);
    expect([...batch!.values[0]!]).toEqual([1, 2, 3]);
  });
});
