// fromPprof and convert() on pprof input: sample types, counts as lazy
// repeats (Tachyon REPEAT runs, bounded memory), labels kept or dropped, time
// for profiles without timestamps, epoch handling on output.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { Function as PFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { afterAll, describe, expect, it } from 'vitest';
import { convert } from '../../lib/convert/convert';
import { MemoryProfile } from '../../lib/convert/model';
import { NOT_EPOCH_COMMENT, toPprofProfile } from '../../lib/convert/pprof';
import { fromPprof } from '../../lib/convert/pprof-read';
import { openTachyon } from '../../lib/convert/tachyon';
import { ProfileReader } from '../../lib/tachyon/index';
import { thrown } from '../helpers';

const work = mkdtempSync(path.join(tmpdir(), 'profpack-pprof-read-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Spec {
  types: [string, string][];
  period?: [string, string, number];
  timeNanos?: bigint;
  durationNanos?: bigint;
  /** Per sample: function name (one location each), values, labels [key, str | num]. */
  samples: { fn: string; values: number[]; labels?: [string, string | number][] }[];
}

/** A profile.proto built field by field, as another tool would write it. */
function build(spec: Spec): Uint8Array {
  const strings = new StringTable();
  const fns = new Map<string, number>();
  const functions: PFunction[] = [];
  const locations: Location[] = [];
  const samples = spec.samples.map((s) => {
    let id = fns.get(s.fn);
    if (id === undefined) {
      id = functions.length + 1;
      fns.set(s.fn, id);
      functions.push(new PFunction({ id, name: strings.dedup(s.fn), filename: strings.dedup('main.go') }));
      locations.push(new Location({ id, line: [new Line({ functionId: id, line: 1 })] }));
    }
    const label = (s.labels ?? []).map(([k, v]) => (typeof v === 'string' ? new Label({ key: strings.dedup(k), str: strings.dedup(v) }) : new Label({ key: strings.dedup(k), num: v })));
    return new Sample({ locationId: [id], value: s.values, label });
  });
  const sampleType = spec.types.map(([t, u]) => new ValueType({ type: strings.dedup(t), unit: strings.dedup(u) }));
  const period = spec.period ?? ['cpu', 'nanoseconds', 10_000_000];
  return new Profile({
    sampleType,
    sample: samples,
    location: locations,
    function: functions,
    stringTable: strings,
    periodType: new ValueType({ type: strings.dedup(period[0]), unit: strings.dedup(period[1]) }),
    period: period[2],
    timeNanos: spec.timeNanos ?? 1_700_000_000_000_000_000n,
    durationNanos: spec.durationNanos ?? 0,
  }).encode();
}

const CPU: [string, string][] = [
  ['samples', 'count'],
  ['cpu', 'nanoseconds'],
];

describe('fromPprof', () => {
  it('string labels are read by key: thread ids from text or numbers, names kept, the rest dropped and counted', () => {
    const src = fromPprof(
      build({
        types: CPU,
        samples: [
          { fn: 'a', values: [2, 20_000_000], labels: [['thread id', '7'], ['thread name', 'main'], ['span id', 'x'], ['phase', 'sort']] },
          { fn: 'b', values: [1, 10_000_000], labels: [['thread_id', 9], ['os thread id', '123'], ['phase', 'hash']] },
          { fn: 'c', values: [1, 10_000_000], labels: [['tid', 'not-a-number']] },
        ],
      }),
    );
    const samples = [...src.samples()];
    expect(samples.map((s) => s.threadId)).toEqual([7n, 7n, 9n, 0n]);
    expect([...src.meta.threadNames!]).toEqual([['7', 'main']]);
    // span id, phase ×2, the os thread id that lost to thread_id, and a tid that is not a number.
    expect(src.droppedLabels).toBe(5);
    expect(src.droppedLabelKeys.sort()).toEqual(['os thread id', 'phase', 'span id', 'tid']);
  });

  it('chooses the CPU/wall sample type, or the named one; refuses a profile without one, naming its types', () => {
    const heap = build({ types: [['alloc_objects', 'count'], ['alloc_space', 'bytes']], period: ['space', 'bytes', 524288], samples: [{ fn: 'a', values: [3, 96] }] });
    const err = thrown(() => fromPprof(heap));
    expect(err.code).toBe('ERR_CONVERT_SAMPLE_TYPE');
    expect(err.message).toContain('alloc_objects/count, alloc_space/bytes');
    expect(fromPprof(heap, { sampleType: 'alloc_objects' }).sampleCount).toBe(3);
    expect(fromPprof(heap, { sampleType: 'alloc_space/bytes' }).sampleCount).toBe(96);
    expect(thrown(() => fromPprof(heap, { sampleType: 'inuse_space' })).code).toBe('ERR_CONVERT_SAMPLE_TYPE');
    // A cpu-only profile counts its time over the period; a wall one too.
    expect(fromPprof(build({ types: [['cpu', 'nanoseconds']], samples: [{ fn: 'a', values: [70_000_000] }] })).sampleCount).toBe(7);
    expect(fromPprof(build({ types: [['wall', 'microseconds']], period: ['wall', 'microseconds', 500], samples: [{ fn: 'a', values: [2000] }] })).sampleCount).toBe(4);
  });

  it('untimed samples are one period apart per thread from time_nanos (epoch µs); the stated duration is kept', () => {
    const start = 1_795_514_325_381_782_646n;
    const src = fromPprof(
      build({
        types: CPU,
        timeNanos: start,
        durationNanos: 2_111_563_323n,
        samples: [
          { fn: 'a', values: [2, 0], labels: [['thread_id', 1]] },
          { fn: 'b', values: [1, 0], labels: [['thread_id', 2]] },
          { fn: 'c', values: [1, 0], labels: [['thread_id', 1]] },
        ],
      }),
    );
    const us = start / 1000n;
    expect(src.meta.startTimeUs).toBe(us);
    expect(src.meta.durationUs).toBe(2_111_563n);
    expect([...src.samples()].map((s) => [s.threadId, s.timestampUs - us])).toEqual([
      [1n, 0n],
      [1n, 10_000n],
      [2n, 0n],
      [1n, 20_000n],
    ]);
  });

  it('property: total samples = Σ counts, per function, whatever the counts', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.nat({ max: 50 })), { maxLength: 20 }), (rows) => {
        const src = fromPprof(build({ types: CPU, samples: rows.map(([fn, n]) => ({ fn, values: [n, n * 10_000_000] })) }));
        const want = new Map<string, number>();
        for (const [fn, n] of rows) want.set(fn, (want.get(fn) ?? 0) + n);
        const got = new Map<string, number>();
        for (const s of src.samples()) {
          const fn = src.frames[s.stack[0]!]!.funcname;
          got.set(fn, (got.get(fn) ?? 0) + 1);
        }
        expect(src.sampleCount).toBe(rows.reduce((n, [, c]) => n + c, 0));
        expect([...got].sort()).toEqual([...want].filter(([, n]) => n > 0).sort());
      }),
      { numRuns: 100 },
    );
  });

  it('a large count becomes REPEAT runs in Tachyon, not memory', () => {
    const input = path.join(work, 'big.pb');
    writeFileSync(input, build({ types: CPU, samples: [{ fn: 'hot', values: [2_000_000, 0] }, { fn: 'cold', values: [1, 0] }] }));
    const out = path.join(work, 'big.tach');
    const summary = convert(input, out);
    expect(summary.samples).toBe(2_000_001);
    const reader = ProfileReader.open(out);
    try {
      expect(reader.replay({ collect() {} })).toBe(2_000_001);
      // A few hundred records (each REPEAT run is bounded) carry two million samples.
      expect(reader.stats!.totalRecords).toBeLessThan(1000);
      expect(reader.stats!.repeatSamples).toBeGreaterThan(1_999_000);
    } finally {
      reader.close();
    }
  });

  it('a count that would take hours to visit is refused, not looped over', () => {
    const err = thrown(() => fromPprof(build({ types: CPU, samples: [{ fn: 'a', values: [2 ** 40, 0] }] })));
    expect(err.code).toBe('ERR_CONVERT_SAMPLE_TYPE');
    expect(err.message).toContain('more than 1000000000 samples');
  });

  it('convert() reports dropped labels; a pprof without the chosen type is a coded error', () => {
    const input = path.join(work, 'labels.pb');
    writeFileSync(input, build({ types: CPU, samples: [{ fn: 'a', values: [1, 0], labels: [['phase', 'x'], ['worker', 'w1']] }] }));
    const summary = convert(input, path.join(work, 'labels.speedscope.json'));
    expect(summary.droppedLabels).toBe(2);
    expect(summary.droppedLabelKeys).toEqual(['phase', 'worker']);
    expect(thrown(() => convert(input, path.join(work, 'x.tach'), { sampleType: 'alloc_space' })).code).toBe('ERR_CONVERT_SAMPLE_TYPE');
  });
});

describe('toPprof', () => {
  it('time_nanos is the epoch only when the source clock is; otherwise 0 and a comment says so', () => {
    const model = new MemoryProfile({ startTimeUs: 2_000_000n, sampleIntervalUs: 1000n });
    const f = model.internFrame({ filename: 'a.py', funcname: '', lineno: 1, endLineno: null, column: null, endColumn: null, opcode: null });
    model.writeStack(0n, 0, 2_000_000n, 0, [f]);
    const mono = toPprofProfile(model);
    expect(Number(mono.timeNanos)).toBe(0);
    expect(mono.comment.map((i) => mono.stringTable.strings[Number(i)])).toEqual([NOT_EPOCH_COMMENT]);
    // Anonymous functions are named as V8 names them.
    expect(mono.stringTable.strings).toContain('(anonymous)');
    const epochModel = MemoryProfile.from(model);
    epochModel.meta.startTimeUs = 1_795_514_325_381_782n;
    const epoch = toPprofProfile(epochModel);
    expect(BigInt(epoch.timeNanos)).toBe(1_795_514_325_381_782_000n);
    expect(epoch.comment).toEqual([]);
  });

  it('Tachyon keeps a pprof profile\'s duration (stats block) for the way back', () => {
    const input = path.join(work, 'dur.pb');
    writeFileSync(input, build({ types: CPU, durationNanos: 3_000_000_000n, samples: [{ fn: 'a', values: [5, 0] }] }));
    const tach = path.join(work, 'dur.tach');
    convert(input, tach);
    const src = openTachyon(tach);
    try {
      expect(src.meta.durationUs).toBe(3_000_000n);
      expect(BigInt(toPprofProfile(src).durationNanos)).toBe(3_000_000_000n);
    } finally {
      src.close();
    }
  });
});
