/**
 * The compatibility shims (lib/compat) on real files: each gives what the new API gives for the same input, and the
 * old shapes (an object with samples(), MemoryProfile as a sink) still go in.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  MemoryProfile,
  ProfileReader,
  copyProfile,
  createTachyonSink,
  fromCollapsed,
  fromCpuProfile,
  fromPprof,
  fromSpeedscope,
  openProfile,
  openTachyon,
  parseProfile,
  readProfile,
  serializeProfile,
  toCollapsed,
  toCpuProfile,
  toPprof,
  toSpeedscope,
  writeProfile,
  type FormatName,
  type LegacyProfileSource,
  type ProfileSource,
} from '../../lib/index';
import { makeFrame } from '../../lib/profile/index';
import { repoRoot, sharedPath } from '../support/environment';

const PPROF = path.join(repoRoot, 'test/fixtures/outside/go-labels-threads.cpu.pb.gz');
const CPUPROFILE = path.join(repoRoot, 'test/fixtures/outside/node-small.cpuprofile');
const SPEEDSCOPE = sharedPath('data/outside/speedscope_0.6.0_two-sampled.speedscope.json');
const TACHYON = sharedPath('vectors/tachyon/c01_big_endian_s02_zstd.bin');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-compat-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Weight by (thread, stack of frame keys) from the new API's batches, in a column. */
function byStackNew(source: ProfileSource, column: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of source.batches())
    for (let i = 0; i < b.length; i++) {
      const t = source.threads[b.thread[i]!]!;
      const frames = source.stacks.toArray(b.stack[i]!).map((f) => JSON.stringify(source.frames[f]));
      const key = `${t.threadId}@${t.interpreterId} ${frames.join('|')}`;
      out.set(key, (out.get(key) ?? 0) + b.values[column]![i]!);
    }
  return out;
}

/** The same from the old surface: samples() with their weights. */
function byStackOld(source: LegacyProfileSource): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of source.samples()) {
    const frames = Array.from(s.stack, (f) => JSON.stringify(source.frames[f]));
    const key = `${s.threadId}@${s.interpreterId} ${frames.join('|')}`;
    out.set(key, (out.get(key) ?? 0) + (s.weight ?? 1));
  }
  return out;
}

/** Records of a source, counted as its batches go by (a batch object may be reused for the next). */
function records(source: ProfileSource): number {
  let n = 0;
  for (const b of source.batches()) n += b.length;
  return n;
}

function countColumn(source: ProfileSource): number {
  return source.meta.sampleTypes.findIndex((t) => t.type === 'samples' && t.unit === 'count');
}

/** What the new writer puts in a file for `source`. */
function written(source: ProfileSource, format: FormatName, options = {}): Buffer {
  const file = path.join(tmp, `out-${Math.random().toString(36).slice(2)}.${format}`);
  writeProfile(source, file, format, options);
  return fs.readFileSync(file);
}

describe('pprof shims', () => {
  const bytes = fs.readFileSync(PPROF);

  it('fromPprof reads what readProfile reads, one record per sample with its weight', () => {
    const old = fromPprof(bytes);
    const fresh = readProfile(bytes, { format: 'pprof' });
    const column = fresh.meta.defaultSampleType;
    expect(old.sampleCount).toBe(fresh.sampleCount);
    expect([...old.samples()].length).toBe(fresh.sampleCount);
    expect(old.frames).toEqual(fresh.frames);
    expect(byStackOld(old)).toEqual(byStackNew(fresh, countColumn(fresh) >= 0 ? countColumn(fresh) : column));
    const names = [...old.meta.threadNames!.values()].sort();
    expect(names).toEqual(fresh.threads.flatMap((t) => (t.name === undefined ? [] : [t.name])).sort());
  });

  it('fromPprof sampleType picks the weights and the default type', () => {
    const fresh = readProfile(bytes, { format: 'pprof' });
    const last = fresh.meta.sampleTypes.length - 1;
    const type = fresh.meta.sampleTypes[last]!.type;
    const old = fromPprof(bytes, { sampleType: type });
    expect(old.meta.defaultSampleType).toBe(last);
    expect(byStackOld(old)).toEqual(byStackNew(fresh, last));
    expect(() => fromPprof(bytes, { sampleType: 'no-such-type' })).toThrow(
      expect.objectContaining({ code: ErrorCode.CONVERT_SAMPLE_TYPE }),
    );
  });

  it('toPprof gives the bytes writeProfile writes, for new and old-style sources', () => {
    const out = toPprof(fromPprof(bytes));
    expect(Buffer.from(out)).toEqual(written(readProfile(bytes, { format: 'pprof' }), 'pprof'));
    const memory = MemoryProfile.from(fromPprof(bytes));
    const legacy: LegacyProfileSource = { meta: memory.meta, frames: memory.frames, samples: () => memory.samples() };
    expect(Buffer.from(toPprof(legacy))).toEqual(written(memory, 'pprof'));
    expect(gunzipSync(toPprof(legacy, { aggregate: true })).length).toBeGreaterThan(0);
  });
});

describe('cpuprofile shims', () => {
  const text = fs.readFileSync(CPUPROFILE, 'utf8');

  it('fromCpuProfile takes the parsed document and matches readProfile', () => {
    const old = fromCpuProfile(JSON.parse(text));
    expect(old).toBeInstanceOf(MemoryProfile);
    const fresh = readProfile(Buffer.from(text), { format: 'cpuprofile' });
    expect(byStackOld(old)).toEqual(byStackNew(fresh, countColumn(fresh)));
    expect(old.sampleList.length).toBe(fresh.sampleCount);
  });

  it('fromCpuProfile threadId names the thread of a plain profile', () => {
    const old = fromCpuProfile(JSON.parse(text), { threadId: 77n });
    // A plain Node .cpuprofile has no thread metadata: it reads as thread 0, which threadId renames.
    expect(fromCpuProfile(JSON.parse(text)).threads.map((t) => t.threadId)).toEqual([0n]);
    expect(old.threads.map((t) => t.threadId)).toEqual([77n]);
    expect(byStackOld(old).size).toBe(byStackOld(fromCpuProfile(JSON.parse(text))).size);
  });

  it('toCpuProfile is the document the cpuprofile writer writes', () => {
    const source = readProfile(Buffer.from(text), { format: 'cpuprofile' });
    expect(toCpuProfile(fromCpuProfile(JSON.parse(text)))).toEqual(
      JSON.parse(written(fromCpuProfile(JSON.parse(text)), 'cpuprofile').toString('utf8')),
    );
    const doc = toCpuProfile(source) as { nodes: unknown[]; samples: number[] };
    expect(doc.nodes.length).toBeGreaterThan(1);
    expect(doc).toEqual(JSON.parse(written(source, 'cpuprofile').toString('utf8')));
  });
});

describe('speedscope and collapsed shims', () => {
  it('fromSpeedscope / toSpeedscope match the new reader and writer; a name is kept', () => {
    const text = fs.readFileSync(SPEEDSCOPE, 'utf8');
    const old = fromSpeedscope(JSON.parse(text));
    const fresh = readProfile(Buffer.from(text), { format: 'speedscope' });
    const column = countColumn(fresh) >= 0 ? countColumn(fresh) : fresh.meta.defaultSampleType;
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    expect(total(byStackOld(old))).toBe(total(byStackNew(fresh, column)));
    expect(toSpeedscope(fresh)).toEqual(JSON.parse(written(fresh, 'speedscope').toString('utf8')));
    expect(toSpeedscope(fresh, 'mine').name).toBe('mine');
  });

  it("toCollapsed / fromCollapsed: the writer's text, and its counts as weights", () => {
    const source = fromPprof(fs.readFileSync(PPROF));
    const text = toCollapsed(source);
    expect(text).toBe(written(readProfile(fs.readFileSync(PPROF), { format: 'pprof' }), 'collapsed').toString('utf8'));
    const back = fromCollapsed(text, 5000n);
    expect(back.meta.sampleIntervalUs).toBe(5000n);
    const fresh = readProfile(Buffer.from(text), { format: 'collapsed', sampleIntervalUs: 5000n });
    expect(byStackOld(back)).toEqual(byStackNew(fresh, countColumn(fresh)));
    expect(back.sampleCount).toBe(text.trim().split('\n').length);
  });
});

describe('registry shims', () => {
  it('parseProfile detects like readProfile; serializeProfile writes like writeProfile', () => {
    for (const file of [PPROF, CPUPROFILE, SPEEDSCOPE, TACHYON]) {
      const bytes = fs.readFileSync(file);
      const old = parseProfile(bytes);
      const fresh = readProfile(bytes);
      expect((old as unknown as { format: string }).format).toBe(fresh.format);
      expect([...old.samples()].length).toBe(records(fresh));
    }
    const cpu = fs.readFileSync(CPUPROFILE);
    expect(Buffer.from(serializeProfile(parseProfile(cpu, 'cpuprofile'), 'collapsed'))).toEqual(
      written(readProfile(cpu), 'collapsed'),
    );
    expect(() => serializeProfile(parseProfile(cpu), 'tachyon' as 'collapsed')).toThrow(
      expect.objectContaining({ code: ErrorCode.CONVERT_UNKNOWN_FORMAT }),
    );
    expect(() => toPprof({} as LegacyProfileSource)).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }),
    );
  });
});

describe('Tachyon shims', () => {
  it('openTachyon streams a file or a buffer like openProfile, with its reader', () => {
    for (const input of [TACHYON, fs.readFileSync(TACHYON)]) {
      const old = openTachyon(input);
      const fresh = openProfile(TACHYON);
      try {
        expect(byStackOld(old)).toEqual(byStackNew(fresh, 0));
        const ticks = [...old.samples()].reduce((n, s) => n + (s.weight ?? 1), 0);
        expect(BigInt(ticks)).toBe(old.reader.info.sampleCount);
        expect(old.meta.sampleIntervalUs).toBe(fresh.meta.sampleIntervalUs);
      } finally {
        old.close();
        fresh.close();
      }
    }
  });

  it('createTachyonSink + copyProfile write ticks a reader counts back, weights as runs', () => {
    const source = fromCpuProfile(JSON.parse(fs.readFileSync(CPUPROFILE, 'utf8')));
    const file = path.join(tmp, 'copy.tach');
    const sink = createTachyonSink(file, { sampleIntervalUs: 1000n, startTimeUs: source.meta.startTimeUs });
    const copied = copyProfile(source, sink);
    sink.writeStack(1n, 0, source.meta.startTimeUs, 0, [], 3);
    sink.finalize();
    expect(copied).toBe(source.sampleCount);
    const back = ProfileReader.open(file);
    try {
      const weights = [...source.samples()].reduce((n, s) => n + (s.weight ?? 1), 0);
      expect(back.info.sampleCount).toBe(BigInt(weights + 3));
    } finally {
      back.close();
    }
    const bad = createTachyonSink(path.join(tmp, 'bad.tach'), { sampleIntervalUs: 1000n, startTimeUs: 0n });
    expect(() => bad.writeStack(1n, 0, 0n, 0, [], 1.5)).toThrow(
      expect.objectContaining({ code: ErrorCode.TACHYON_V1_WEIGHTED }),
    );
    bad.close();
  });
});

describe('MemoryProfile as the old sink and a new source', () => {
  it('is filled the old way and written by the new writers', () => {
    const m = new MemoryProfile({ startTimeUs: 1000n, sampleIntervalUs: 100n, threadNames: new Map([['5', 'main']]) });
    const f = m.internFrame(makeFrame('f', 'a.js', 1));
    const g = m.internFrame(makeFrame('g', 'a.js', 2));
    expect(m.internFrame({ ...m.frames[f]! })).toBe(f);
    m.writeStack(5n, 0, 1000n, 0, [g, f]);
    m.writeStack(5n, 0, 1100n, 0, [f], 2);
    expect(m.sampleList).toEqual([
      { threadId: 5n, interpreterId: 0, timestampUs: 1000n, status: 0, stack: [g, f], weight: 1 },
      { threadId: 5n, interpreterId: 0, timestampUs: 1100n, status: 0, stack: [f], weight: 2 },
    ]);
    expect(m.threads).toEqual([{ threadId: 5n, interpreterId: 0, name: 'main' }]);
    expect(toCollapsed(m)).toBe(written(m, 'collapsed').toString('utf8'));
    expect(toCollapsed(m)).toBe('f (a.js:1);g (a.js:2) 1\nf (a.js:1) 2\n');
    // The wall column is each sample's gap to its thread's next (the last: the nominal interval).
    expect(Array.from([...m.batches()][0]!.values[1]!)).toEqual([100_000, 100_000]);
    expect(() => m.writeStack(5n, 0, 0n, 0, [9])).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }),
    );
    const copy = new MemoryProfile(m.meta);
    expect(copyProfile(m, copy)).toBe(2);
    // Frames are re-interned in order of first use, so compare what the stacks name.
    const named = (p: MemoryProfile) =>
      p.sampleList.map((s) => ({ ...s, stack: Array.from(s.stack, (i) => p.frames[i]) }));
    expect(named(copy)).toEqual(named(m));
    expect(copy.frames.map((fr) => fr.funcname)).toEqual(['g', 'f']);
  });
});

describe('bad input through the shims', () => {
  it('is a coded ProfpackError, never a raw TypeError', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as { code?: string }).code;
      }
      return 'no error';
    };
    expect(code(() => fromCpuProfile(circular))).toBe(ErrorCode.CONVERT_BAD_INPUT);
    expect(code(() => fromSpeedscope({ big: 1n }))).toBe(ErrorCode.CONVERT_BAD_INPUT);
    expect(code(() => fromCpuProfile(undefined))).toMatch(/^ERR_/);
    expect(code(() => parseProfile(Buffer.from([0xff, 0xfe, 0x00, 0x01])))).toBe(ErrorCode.CONVERT_UNKNOWN_FORMAT);
    expect(code(() => fromPprof(Buffer.from('not a profile')))).toMatch(/^ERR_/);
    expect(code(() => new MemoryProfile().writeStack(1n, 0, 0n, 0, [], Infinity))).toBe(ErrorCode.INVALID_ARGUMENT);
    const sink = createTachyonSink(path.join(tmp, 'cap.tach'), { sampleIntervalUs: 1n, startTimeUs: 0n });
    expect(code(() => sink.writeStack(1n, 0, 0n, 0, [], 60_000_000))).toBe(ErrorCode.TACHYON_V1_WEIGHTED);
    sink.close();
  });
});

describe('collapsed counts as weights (property)', () => {
  it("fromCollapsed keeps each stack's total, and toCollapsed writes what the new writer writes", () => {
    const stack = fc.array(fc.constantFrom('main', 'f', 'g', 'h'), { minLength: 1, maxLength: 4 });
    const lines = fc.array(fc.tuple(stack, fc.integer({ min: 1, max: 2 ** 40 })), { minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(lines, (rows) => {
        const text = rows.map(([s, n]) => `${s.join(';')} ${n}`).join('\n') + '\n';
        const totals = new Map<string, number>();
        for (const [s, n] of rows) totals.set(s.join(';'), (totals.get(s.join(';')) ?? 0) + n);
        const m = fromCollapsed(text);
        const got = new Map<string, number>();
        for (const s of m.samples()) {
          const key = Array.from(s.stack, (f) => m.frames[f]!.funcname)
            .reverse()
            .join(';');
          got.set(key, (got.get(key) ?? 0) + s.weight!);
        }
        expect(got).toEqual(totals);
        expect(m.sampleCount).toBeLessThanOrEqual(rows.length);
        expect(toCollapsed(m)).toBe(written(m, 'collapsed').toString('utf8'));
      }),
      { numRuns: 40 },
    );
  });
});
