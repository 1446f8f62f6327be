/**
 * Format version 2 through the public API: ProfileWriter({ formatVersion: 2 })
 * → ProfileReader, for both stack codings, every writer backend and every
 * reader backend this process can load; the same samples, strings and frames
 * as the same input written as version 1; bad input through the reader.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, isProfpackError } from '../../../lib/errors';
import { ProfileReader, type Sample } from '../../../lib/tachyon/read/reader';
import { FOOTER_SIZE, HEADER_SIZE, Header } from '../../../lib/tachyon/format';
import { ProfileWriter, type ProfileWriterOptions } from '../../../lib/tachyon/write/index';
import { ByteSink } from '../../../lib/tachyon/codec/bytes';
import { BLOCK_COLUMNS, BlockKind, HEADER_FLAGS_OFFSET, HeaderFlag } from '../../../lib/tachyon/codec/format';
import { thrown } from '../../support/refusals';
import { recordCalls } from '../../support/replay-calls';
import { rng } from '../../support/rng.mjs';
import { testedBackends } from '../../support/backends';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-api-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
const tmp = (name: string): string => path.join(dir, `${fileNo++}-${name}`);

const CODINGS = ['predict', 'stacktable'] as const;
/** Backends this process can use: the JS twin always, the addon when the native backend loaded it. */
interface TestSample {
  threadId: bigint;
  interpreterId: number;
  timestampUs: bigint;
  status: number;
  /** Frame ids, innermost first (may be deeper than 256). */
  stack: number[];
}

interface TestProfile {
  frameCount: number;
  samples: TestSample[];
  intervalUs: bigint;
  startTimeUs: bigint;
}

function frameOf(i: number) {
  return {
    filename: `src/m${i % 11}.py`,
    funcname: `f${i}`,
    lineno: 1 + (i % 500),
    endLineno: i % 3 ? -1 : 2 + (i % 500),
    column: i % 7 === 0 ? -1 : i % 40,
    endColumn: (i % 40) + 5,
    opcode: i % 5 === 0 ? null : i % 255,
  };
}

function write(
  file: string,
  p: TestProfile,
  options: Partial<ProfileWriterOptions>,
  via: 'writeStack' | 'writeStacks' = 'writeStack',
): ProfileWriter {
  const w = new ProfileWriter(file, { sampleIntervalUs: p.intervalUs, startTimeUs: p.startTimeUs, ...options });
  for (let i = 0; i < p.frameCount; i++) expect(w.internFrame(frameOf(i))).toBe(i);
  if (via === 'writeStack') {
    for (const s of p.samples) w.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, s.stack);
  } else {
    // One tick per sample: the engines' batch path.
    for (const s of p.samples) {
      w.writeStacks(s.timestampUs, {
        threadIds: [s.threadId],
        interpreterIds: s.interpreterId,
        statuses: [s.status],
        stackEnds: Uint32Array.of(s.stack.length),
        frameIds: Uint32Array.from(s.stack),
      });
    }
  }
  w.setStats(1.25, 800, 0.5, 3);
  w.finalize();
  return w;
}

const plain = (s: Sample) => ({
  threadId: s.threadId,
  interpreterId: s.interpreterId,
  timestampUs: s.timestampUs,
  status: s.status,
  stack: [...s.stack],
});

/** What reads back: an 8-bit status and the innermost 4,096 frames (version 2's limit). */
function expected(p: TestProfile) {
  return p.samples.map((s) => ({ ...s, status: s.status & 0xff, stack: s.stack.slice(0, 4096) }));
}

function byThread<T extends { threadId: bigint; interpreterId: number }>(samples: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const s of samples) {
    const key = `${s.threadId}/${s.interpreterId}`;
    if (!out.has(key)) out.set(key, []);
    out.get(key)!.push(s);
  }
  return out;
}

const U64 = (1n << 64n) - 1n;
const FRAMES = 48;

const profileArb: fc.Arbitrary<TestProfile> = fc
  .record({
    threads: fc.uniqueArray(
      fc.record({
        threadId: fc.oneof(fc.bigInt({ min: 0n, max: 50n }), fc.bigInt({ min: 0n, max: U64 })),
        interpreterId: fc.oneof(fc.nat({ max: 3 }), fc.constant(0xffff_ffff)),
      }),
      {
        minLength: 1,
        maxLength: 24,
        selector: (t) => `${t.threadId}/${t.interpreterId}`,
      },
    ),
    ops: fc.array(
      fc.record({
        thread: fc.nat(),
        step: fc.oneof(
          { weight: 8, arbitrary: fc.bigInt({ min: 0n, max: 3000n }) },
          { weight: 1, arbitrary: fc.bigInt({ min: -U64, max: U64 }) },
        ),
        status: fc.nat({ max: 300 }),
        op: fc.oneof(
          { weight: 4, arbitrary: fc.constant({ kind: 'same' as const }) },
          {
            weight: 3,
            arbitrary: fc
              .array(fc.nat({ max: FRAMES - 1 }), { minLength: 1, maxLength: 5 })
              .map((frames) => ({ kind: 'push' as const, frames })),
          },
          { weight: 2, arbitrary: fc.nat({ max: 6 }).map((count) => ({ kind: 'pop' as const, count })) },
          // stack churn: a whole new stack
          {
            weight: 2,
            arbitrary: fc
              .array(fc.nat({ max: FRAMES - 1 }), { maxLength: 30 })
              .map((frames) => ({ kind: 'replace' as const, frames })),
          },
          // deep recursion, past version 1's 256-frame limit (version 2 keeps it whole)
          {
            weight: 1,
            arbitrary: fc
              .record({
                depth: fc.integer({ min: 200, max: 320 }),
                a: fc.nat({ max: FRAMES - 1 }),
                b: fc.nat({ max: FRAMES - 1 }),
              })
              .map((o) => ({ kind: 'deep' as const, ...o })),
          },
        ),
      }),
      { maxLength: 120 },
    ),
    intervalUs: fc.bigInt({ min: 0n, max: 20000n }),
    startTimeUs: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.constant(U64)),
  })
  .map(({ threads, ops, intervalUs, startTimeUs }) => {
    const stacks = threads.map(() => [] as number[]);
    let ts = startTimeUs;
    const samples = ops.map(({ thread, step, status, op }) => {
      const t = thread % threads.length;
      let s = stacks[t]!;
      if (op.kind === 'push') s = [...op.frames, ...s];
      else if (op.kind === 'pop') s = s.slice(Math.min(op.count, s.length));
      else if (op.kind === 'replace') s = op.frames;
      else if (op.kind === 'deep') s = Array.from({ length: op.depth }, (_, i) => (i % 2 ? op.a : op.b));
      stacks[t] = s;
      ts = BigInt.asUintN(64, ts + step);
      return { ...threads[t]!, timestampUs: ts, status, stack: s };
    });
    return { frameCount: FRAMES, samples, intervalUs, startTimeUs };
  });

describe('ProfileWriter formatVersion option', () => {
  it('defaults to version 1 and validates formatVersion and stackCoding (ERR_INVALID_ARGUMENT, no file created)', () => {
    const v1 = tmp('default.bin');
    const w = new ProfileWriter(v1, { sampleIntervalUs: 1000 });
    expect(w.formatVersion).toBe(1);
    w.finalize();
    expect(ProfileReader.open(v1).info.version).toBe(1);
    const cases: Partial<ProfileWriterOptions>[] = [
      { formatVersion: 3 as never },
      { formatVersion: '2' as never },
      { formatVersion: 0 as never },
      { stackCoding: 'stacktable' },
      { formatVersion: 1, stackCoding: 'predict' },
      { formatVersion: 2, stackCoding: 'memtrace' as never },
    ];
    for (const options of cases) {
      const file = tmp('refused.bin');
      const err = thrown(() => new ProfileWriter(file, { sampleIntervalUs: 1000, ...options }));
      expect(err.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(existsSync(file)).toBe(false);
    }
  });

  for (const coding of CODINGS) {
    it(`writes a version-2 header, flags and tables (${coding})`, () => {
      const file = tmp(`${coding}.bin`);
      const p: TestProfile = {
        frameCount: 3,
        intervalUs: 1000n,
        startTimeUs: 7n,
        samples: [{ threadId: 9n, interpreterId: 0, timestampUs: 1007n, status: 1, stack: [2, 1, 0] }],
      };
      const w = write(file, p, { formatVersion: 2, stackCoding: coding, mode: 'cpu', captureFeatures: 3 });
      expect(w.formatVersion).toBe(2);
      expect(w.stats.totalSamples).toBe(1);
      expect(w.stats.threadCount).toBe(1);
      const bytes = readFileSync(file);
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      expect(view.getUint32(Header.version, true)).toBe(2);
      expect(bytes[HEADER_FLAGS_OFFSET]).toBe(
        HeaderFlag.TablesZstd | HeaderFlag.FrameTableColumns | HeaderFlag.StringsNulTerminated,
      );
      // The region is one zstd frame; its first block, once decompressed, names the coding (ProfileReader.stackCoding).
      const r = ProfileReader.open(file);
      expect(r.stackCoding).toBe(coding);
      expect(r.info).toMatchObject({
        version: 2,
        pythonVersion: [3, 15, 2],
        startTimeUs: 7n,
        sampleIntervalUs: 1000n,
        sampleCount: 1n,
        threadCount: 1,
        stringCount: 6,
        frameCount: 3,
        compressionType: 1,
        mode: 1,
        captureFeatures: 3,
        durationSec: 1.25,
        sampleRate: 800,
        errorRate: 0.5,
        missedSamples: 3,
      });
      expect(r.layout.fileSize).toBe(bytes.length);
      r.close();
      const raw = tmp(`${coding}-raw.bin`);
      write(raw, p, { formatVersion: 2, stackCoding: coding, compression: 'none' });
      const rawBytes = readFileSync(raw);
      expect(rawBytes[HEADER_FLAGS_OFFSET]! & HeaderFlag.TablesZstd).toBe(0);
      expect(rawBytes[HEADER_SIZE + 12]).toBe(coding === 'predict' ? BlockKind.Predict : BlockKind.StackTableRecent);
    });
  }
});

describe('version 2 round trips through ProfileWriter and ProfileReader', () => {
  for (const coding of CODINGS) {
    for (const writerBackend of testedBackends) {
      it(`${coding}, ${writerBackend} writer: every reader backend gets the samples, strings and frames of the same input written as version 1`, () => {
        fc.assert(
          fc.property(
            profileArb,
            fc.constantFrom<'zstd' | 'none'>('zstd', 'none'),
            fc.constantFrom<'writeStack' | 'writeStacks'>('writeStack', 'writeStacks'),
            (p, compression, via) => {
              const v2 = tmp('v2.bin');
              const v1 = tmp('v1.bin');
              write(v2, p, { formatVersion: 2, stackCoding: coding, compression, backend: writerBackend }, via);
              write(v1, p, { compression, backend: writerBackend }, via);
              const want = expected(p);
              const reference = ProfileReader.open(v1);
              const v1Samples = [...reference.samples()].map(plain);
              for (const readerBackend of testedBackends) {
                const r = ProfileReader.open(v2, { backend: readerBackend });
                expect(r.backend).toBe(readerBackend);
                // Version 2 keeps the order samples were written in.
                expect([...r.samples()].map(plain)).toEqual(want);
                // Version 1 may interleave threads differently (deferred REPEAT runs); each thread's samples are the same,
                // but for the frames past 256 that version 1 cuts and version 2 keeps.
                const atV1Cap = (s: ReturnType<typeof plain>) => ({ ...s, stack: s.stack.slice(0, 256) });
                expect(byThread([...r.samples()].map(plain).map(atV1Cap))).toEqual(byThread(v1Samples));
                expect(r.strings).toEqual(reference.strings);
                expect(r.frames).toEqual(reference.frames);
                const { version: _v, compressionType: _c, ...info } = r.info;
                const { version: _v1, compressionType: _c1, ...info1 } = reference.info;
                expect(info).toEqual(info1);
                expect(r.stats?.totalSamples).toBe(want.length);
                r.close();
              }
              reference.close();
            },
          ),
          { numRuns: 25 },
        );
      });
    }

    it(`${coding}: replay() delivers CPython's collector shape with resolved frames and progress`, () => {
      const p: TestProfile = { frameCount: 30, intervalUs: 500n, startTimeUs: 0n, samples: [] };
      for (let i = 0; i < 2500; i++)
        p.samples.push({
          threadId: BigInt(i % 3),
          interpreterId: i % 2,
          timestampUs: BigInt(1000 + i * 500),
          status: i % 4,
          stack: [i % 30, (i >> 3) % 30, 0],
        });
      const file = tmp('replay.bin');
      write(file, p, { formatVersion: 2, stackCoding: coding });
      for (const readerBackend of testedBackends) {
        const r = ProfileReader.open(file, { backend: readerBackend });
        const { collector, calls: got } = recordCalls();
        const progress: number[] = [];
        const n = r.replay(collector, { onProgress: (cur) => progress.push(cur) });
        expect(n).toBe(2500);
        expect(got).toEqual(
          p.samples.map((s) => ({
            threadId: s.threadId,
            interpreterId: s.interpreterId,
            status: s.status,
            funcs: s.stack.map((f) => `f${f}`),
            ts: [s.timestampUs],
          })),
        );
        expect(progress).toEqual([0, 1000, 2000, 2500]);
        expect(r.stats).toMatchObject({ totalSamples: 2500, totalRecords: 0 });
        r.close();
        expect(thrown(() => r.replay({ collect() {} })).code).toBe(ErrorCode.TACHYON_READER_CLOSED);
        expect(thrown(() => [...r.samples()]).code).toBe(ErrorCode.TACHYON_READER_CLOSED);
      }
    });

    for (const writerBackend of testedBackends) {
      it(`${coding}, ${writerBackend} writer: many threads, stack churn and cache eviction pressure (20,000 frames, more than the 16,384 buckets)`, () => {
        const p: TestProfile = { frameCount: 20000, intervalUs: 1000n, startTimeUs: 1n, samples: [] };
        const random = rng(12345);
        const rand = (n: number) => Math.floor(random() * n);
        for (let i = 0; i < 6000; i++) {
          const depth = 1 + rand(i % 50 === 0 ? 300 : 40);
          p.samples.push({
            threadId: BigInt(rand(200)) << 20n,
            interpreterId: rand(2),
            timestampUs: BigInt(1000 * i + rand(900)),
            status: rand(256),
            stack: Array.from({ length: depth }, () => rand(20000)),
          });
        }
        const file = tmp('pressure.bin');
        write(file, p, { formatVersion: 2, stackCoding: coding, backend: writerBackend });
        for (const readerBackend of testedBackends) {
          const r = ProfileReader.open(file, { backend: readerBackend });
          expect([...r.samples()].map(plain)).toEqual(expected(p));
          r.close();
        }
      });
    }
  }

  it('close() before finalize leaves a file readers call not finalized, on every writer backend', () => {
    for (const b of testedBackends) {
      for (const coding of CODINGS) {
        const file = tmp('closed.bin');
        const w = new ProfileWriter(file, {
          sampleIntervalUs: 1000,
          formatVersion: 2,
          stackCoding: coding,
          backend: b,
        });
        const f = w.internFrame(frameOf(1));
        for (let i = 0; i < 100; i++) w.writeStack(1, 0, i * 1000, 0, [f]);
        w.close();
        expect(w.state).toBe('closed');
        expect(thrown(() => ProfileReader.open(file)).code).toBe(ErrorCode.TACHYON_NOT_FINALIZED);
      }
    }
  });

  it('reads a version-2 file from a buffer as from a path', () => {
    const p: TestProfile = {
      frameCount: 5,
      intervalUs: 100n,
      startTimeUs: 0n,
      samples: [{ threadId: 1n, interpreterId: 0, timestampUs: 100n, status: 0, stack: [4, 3] }],
    };
    const file = tmp('buffer.bin');
    write(file, p, { formatVersion: 2 });
    const fromPath = ProfileReader.open(file);
    const fromBuffer = ProfileReader.fromBuffer(readFileSync(file));
    expect([...fromBuffer.samples()]).toEqual([...fromPath.samples()]);
    expect(fromBuffer.info).toEqual(fromPath.info);
    // The default stack coding is the stack table.
    expect(fromPath.stackCoding).toBe('stacktable');
  });
});

describe('version 2: native and JS readers agree', () => {
  it('on info, tables, samples() and replay() of the same files', () => {
    if (testedBackends.length === 1) {
      // The JS backend cannot load the addon: asking for the native reader must say so.
      expect(thrown(() => ProfileReader.open(tmp('none.bin'), { backend: 'native' })).code).toBe(
        ErrorCode.NATIVE_UNAVAILABLE,
      );
      return;
    }
    fc.assert(
      fc.property(profileArb, fc.constantFrom(...CODINGS), (p, coding) => {
        const file = tmp('agree.bin');
        write(file, p, { formatVersion: 2, stackCoding: coding });
        const read = (b: 'native' | 'js') => {
          const r = ProfileReader.open(file, { backend: b });
          const calls: unknown[] = [];
          r.replay({ collect: (sf, ts) => calls.push({ sf, ts }) });
          const out = {
            info: r.info,
            layout: r.layout,
            strings: r.strings,
            frames: r.frames,
            samples: [...r.samples()],
            calls,
            stats: r.stats,
          };
          r.close();
          return out;
        };
        expect(read('native')).toEqual(read('js'));
      }),
      { numRuns: 30 },
    );
  });
});

/** A block of `kind` with one new thread and `n` samples at the interval, and the given stack columns. */
function block(
  kind: BlockKind,
  n: number,
  stackColumns: Partial<Record<(typeof BLOCK_COLUMNS)[number], number[]>>,
): { bytes: Uint8Array; columnStart: (name: (typeof BLOCK_COLUMNS)[number]) => number } {
  const columns: Record<string, number[]> = {
    threads: new Array<number>(n).fill(0),
    threadDefinitions: [7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    deltas: new Array<number>(n).fill(0),
    deltasHigh: new Array<number>(n).fill(0),
    statuses: new Array<number>(n).fill(0),
    stacks: [],
    stacksHigh: [],
    parents: [],
    parentsHigh: [],
    stackFrames: [],
    ...stackColumns,
  };
  const sink = new ByteSink();
  sink.append(new Uint8Array(12));
  sink.u8(kind);
  sink.uvarint(n);
  for (const name of BLOCK_COLUMNS) sink.uvarint(columns[name]!.length);
  const head = sink.length;
  for (const name of BLOCK_COLUMNS) sink.append(Uint8Array.from(columns[name]!));
  const bytes = sink.take();
  return {
    bytes,
    columnStart: (name) => {
      let at = head;
      for (const c of BLOCK_COLUMNS) {
        if (c === name) return at;
        at += columns[c]!.length;
      }
      throw new Error(name);
    },
  };
}

/** A version-2 file written by ProfileWriter (raw region), with its region replaced by `region`. */
function withRegion(region: Uint8Array, sampleCount: number): Uint8Array {
  const file = tmp('base.bin');
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, formatVersion: 2, compression: 'none' });
  for (let i = 0; i < 10; i++) w.internFrame(frameOf(i));
  w.finalize();
  const base = readFileSync(file);
  const view = new DataView(base.buffer, base.byteOffset);
  const stringTable = Number(view.getBigUint64(Header.stringTableOffset, true));
  const frameTable = Number(view.getBigUint64(Header.frameTableOffset, true));
  const out = new Uint8Array(base.length - (stringTable - HEADER_SIZE) + region.length);
  out.set(base.subarray(0, HEADER_SIZE));
  out.set(region, HEADER_SIZE);
  out.set(base.subarray(stringTable), HEADER_SIZE + region.length);
  const v = new DataView(out.buffer);
  const shift = HEADER_SIZE + region.length - stringTable;
  v.setBigUint64(Header.stringTableOffset, BigInt(stringTable + shift), true);
  v.setBigUint64(Header.frameTableOffset, BigInt(frameTable + shift), true);
  v.setBigUint64(Header.sampleCount, BigInt(sampleCount), true);
  v.setUint32(Header.threadCount, 1, true);
  v.setBigUint64(out.length - FOOTER_SIZE + 8, BigInt(out.length), true);
  return out;
}

describe('version-2 bad input through ProfileReader', () => {
  // The stack columns of test/tachyon/codec/stacktable.test.ts and predict.test.ts, now inside whole files.
  const cases: {
    what: string;
    kind: BlockKind;
    n: number;
    columns: Partial<Record<(typeof BLOCK_COLUMNS)[number], number[]>>;
    code: string;
    column: (typeof BLOCK_COLUMNS)[number];
    at: number;
    before: number;
  }[] = [
    {
      what: 'a stack id never defined',
      kind: BlockKind.StackTable,
      n: 1,
      columns: { stacks: [5], stacksHigh: [0] },
      code: ErrorCode.V2_UNDEFINED_STACK,
      column: 'stacks',
      at: 0,
      before: 0,
    },
    {
      what: 'a parent never defined',
      kind: BlockKind.StackTable,
      n: 1,
      columns: { stacks: [1], stacksHigh: [0], parents: [2], parentsHigh: [0], stackFrames: [9] },
      code: ErrorCode.V2_UNDEFINED_STACK,
      column: 'parents',
      at: 0,
      before: 0,
    },
    {
      what: 'an inline definition that is its own parent (a cycle)',
      kind: BlockKind.StackTable,
      n: 2,
      columns: { stacks: [1, 2], stacksHigh: [0, 0], parents: [1, 0], parentsHigh: [0, 0], stackFrames: [9, 8] },
      code: ErrorCode.V2_STACK_CYCLE,
      column: 'parents',
      at: 1,
      before: 1,
    },
    {
      what: 'a stack-table chain longer than the stack limit',
      kind: BlockKind.StackTable,
      n: 2,
      columns: {
        stacks: [1, 1],
        stacksHigh: [0, 16],
        parents: [1, 1],
        parentsHigh: [0, 0],
        stackFrames: new Array<number>(4098).fill(1),
      },
      code: ErrorCode.V2_STACK_TOO_DEEP,
      column: 'stacks',
      at: 1,
      before: 1,
    },
    {
      what: 'a cache bucket never filled',
      kind: BlockKind.Predict,
      n: 1,
      columns: { stacks: [0, 1, (5 << 2) & 0xff, 5 >> 6] },
      code: ErrorCode.V2_UNDEFINED_BUCKET,
      column: 'stacks',
      at: 2,
      before: 0,
    },
    {
      what: 'a prediction chain longer than the stack limit',
      kind: BlockKind.Predict,
      n: 1,
      // Bucket 4 predicts itself: every hit-255 adds 256 frames, the 16th passes 4,096.
      columns: { stacks: [0, 17, (4 << 2) | 3, 0, 1, ...new Array<number[]>(16).fill([(4 << 2) | 2, 0, 255]).flat()] },
      code: ErrorCode.V2_STACK_TOO_DEEP,
      column: 'stacks',
      at: 5 + 15 * 3,
      before: 0,
    },
  ];

  for (const c of cases) {
    for (const compression of ['none', 'zstd'] as const) {
      it(`${c.what}: ${c.code} with its offset, on every backend (${compression === 'none' ? 'raw region: a file offset' : 'zstd region: 64 + the decompressed offset'})`, () => {
        const b = block(c.kind, c.n, c.columns);
        let bytes = withRegion(b.bytes, c.n);
        if (compression === 'zstd') {
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          const zstd = require('zstd-napi') as { compress(data: Uint8Array): Uint8Array };
          bytes = withRegion(zstd.compress(b.bytes), c.n);
          new DataView(bytes.buffer).setUint32(Header.compressionType, 1, true);
        }
        const file = tmp('bad.bin');
        writeFileSync(file, bytes);
        const offset = HEADER_SIZE + b.columnStart(c.column) + c.at;
        for (const b2 of testedBackends) {
          const delivered: number[] = [];
          const err = thrown(() => {
            for (const s of ProfileReader.open(file, { backend: b2 }).samples()) delivered.push(s.stack.length);
          });
          expect(err.code).toBe(c.code);
          expect(err.offset).toBe(offset);
          expect(err.details).toMatchObject({ stage: 'replay', samplesDelivered: c.before });
          expect(delivered.length).toBe(c.before);
          const replayErr = thrown(() => ProfileReader.open(file, { backend: b2 }).replay({ collect() {} }));
          expect([replayErr.code, replayErr.offset]).toEqual([c.code, offset]);
        }
      });
    }
  }

  it('a stack naming a frame the table does not have: ERR_TACHYON_FRAME_INDEX, as in version 1', () => {
    const file = tmp('frame-index.bin');
    // Frame 57 of a 10-frame table, defined inline by the stack table.
    writeFileSync(
      file,
      withRegion(
        block(BlockKind.StackTable, 1, {
          stacks: [1],
          stacksHigh: [0],
          parents: [1],
          parentsHigh: [0],
          stackFrames: [57],
        }).bytes,
        1,
      ),
    );
    for (const b of testedBackends) {
      expect(thrown(() => [...ProfileReader.open(file, { backend: b }).samples()]).code).toBe(
        ErrorCode.TACHYON_FRAME_INDEX,
      );
      expect(thrown(() => ProfileReader.open(file, { backend: b }).replay({ collect() {} })).code).toBe(
        ErrorCode.TACHYON_FRAME_INDEX,
      );
    }
  });

  it('corrupted version-2 files never hang or crash the reader: every failure is a ProfpackError', () => {
    const p: TestProfile = { frameCount: 12, intervalUs: 1000n, startTimeUs: 0n, samples: [] };
    for (let i = 0; i < 200; i++)
      p.samples.push({
        threadId: BigInt(i % 5),
        interpreterId: 0,
        timestampUs: BigInt(i * 1000),
        status: 0,
        stack: Array.from({ length: 1 + (i % 9) }, (_, k) => (i + k * k) % 12),
      });
    for (const coding of CODINGS) {
      const file = tmp('good.bin');
      write(file, p, { formatVersion: 2, stackCoding: coding, compression: 'none' });
      const good = readFileSync(file);
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.nat({ max: good.length - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 4 }),
          (edits) => {
            const bytes = Uint8Array.from(good);
            for (const [at, value] of edits) bytes[at] = value;
            for (const b of testedBackends) {
              try {
                const r = ProfileReader.fromBuffer(bytes, { backend: b });
                for (const _ of r.samples());
                r.replay({ collect() {} });
              } catch (err) {
                if (!isProfpackError(err)) throw err;
              }
            }
          },
        ),
        { numRuns: 150 },
      );
    }
  });
});
