import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { HEADER_SIZE, Header } from '../../../lib/tachyon/format';
import { ByteSink, ByteSource } from '../../../lib/tachyon/codec/bytes';
import { HEADER_FLAGS_OFFSET, HeaderFlag } from '../../../lib/tachyon/codec/format';
import { V2FileWriter, isVersion2, readProfileV2, type V2WriterOptions } from '../../../lib/tachyon/v2-api';
import {
  decodeFrameTable,
  decodeStringTable,
  encodeFrameTable,
  encodeStringTable,
  version2Tables,
  type FrameTableCoding,
  type FrameTableEntry,
} from '../../../lib/tachyon/codec/tables';
import { zstdDecompress } from '../../../lib/tachyon/file/zstd/index';

const U64_MAX = (1n << 64n) - 1n;

interface Sample {
  threadId: bigint;
  interpreterId: number;
  timestampUs: bigint;
  status: number;
  stack: number[];
}

const FRAME_COUNT = 40;

function write(samples: Sample[], options: Partial<V2WriterOptions>): Uint8Array {
  const w = V2FileWriter.inMemory({ sampleIntervalUs: 1000, startTimeUs: 5_000_000n, ...options });
  for (let f = 0; f < FRAME_COUNT; f++)
    w.internFrame(`file${f % 7}.py`, `func${f}`, f * 3, f * 3 + (f % 2), f % 5, (f % 5) + 4, f % 3 === 0 ? null : f);
  for (const s of samples) w.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, s.stack);
  return w.finalize()!;
}

function read(bytes: Uint8Array): Sample[] {
  return readProfileV2(bytes)
    .samples()
    .map((s) => ({
      threadId: s.threadId,
      interpreterId: s.interpreterId,
      timestampUs: s.timestampUs,
      status: s.status,
      stack: Array.from(s.stack),
    }));
}

/** What a sample reads back as: the innermost 4,096 frames (version 2's limit), an 8-bit status. */
function expected(samples: Sample[]): Sample[] {
  return samples.map((s) => ({ ...s, status: s.status & 0xff, stack: s.stack.slice(0, 4096) }));
}

const threadKey = fc.oneof(
  fc.constantFrom(
    { threadId: 1n, interpreterId: 0 },
    { threadId: 2n, interpreterId: 0 },
    { threadId: 1n, interpreterId: 1 },
  ),
  fc.record({ threadId: fc.bigInt({ min: 0n, max: U64_MAX }), interpreterId: fc.nat({ max: 0xffff_ffff }) }),
);

const stackArb = fc.oneof(
  fc.array(fc.nat({ max: FRAME_COUNT - 1 }), { maxLength: 20 }),
  // deep recursion, beyond version 1's 256 frames: version 2 keeps it whole
  fc
    .tuple(fc.nat({ max: FRAME_COUNT - 1 }), fc.nat({ max: FRAME_COUNT - 1 }), fc.integer({ min: 100, max: 300 }))
    .map(([a, b, n]) => Array.from({ length: n }, (_, i) => (i % 3 ? a : b))),
);

const timeArb = fc.oneof(
  fc.bigInt({ min: 0n, max: 10_000_000n }),
  fc.bigInt({ min: 0n, max: U64_MAX }),
  fc.constant(U64_MAX),
  fc.constant(0n),
);

const samplesArb = fc.array(
  fc
    .record({ key: threadKey, timestampUs: timeArb, status: fc.nat({ max: 255 }), stack: stackArb })
    .map(({ key, ...rest }) => ({ ...key, ...rest })),
  { maxLength: 60 },
);

describe('version-2 files', () => {
  for (const stackCoding of ['predict', 'stacktable'] as const) {
    it(`round-trips every sample's thread, time, status and stack (${stackCoding})`, () => {
      fc.assert(
        fc.property(
          samplesArb,
          fc.constantFrom<'zstd' | 'none'>('zstd', 'none'),
          fc.boolean(),
          fc.constantFrom<FrameTableCoding>('plain', 'mtf', 'columns'),
          fc.integer({ min: 1, max: 20 }),
          (samples, compression, compressTables, frameTable, blockMaxSamples) => {
            const bytes = write(samples, { stackCoding, compression, compressTables, frameTable, blockMaxSamples });
            expect(read(bytes)).toEqual(expected(samples));
            const profile = readProfileV2(bytes);
            expect(profile.info.sampleCount).toBe(BigInt(samples.length));
            expect(profile.info.threadCount).toBe(new Set(samples.map((s) => `${s.threadId}:${s.interpreterId}`)).size);
            expect(profile.frames.length).toBe(FRAME_COUNT);
            expect(profile.stackCoding).toBe(samples.length ? stackCoding : null);
          },
        ),
        { numRuns: 40 },
      );
    });

    it(`round-trips many threads interleaved with stack churn (${stackCoding})`, () => {
      const samples: Sample[] = [];
      for (let i = 0; i < 5000; i++) {
        const thread = (i * 7919) % 97;
        const depth = 1 + ((i * 13) % 60);
        samples.push({
          threadId: BigInt(thread) * 0x1_0000_0001n,
          interpreterId: thread % 3,
          timestampUs: BigInt(1_000_000 + i * 250 + ((i * 31) % 17)),
          status: i & 0xff,
          stack: Array.from({ length: depth }, (_, j) => (i + j * j + thread) % FRAME_COUNT),
        });
      }
      const bytes = write(samples, { stackCoding, blockMaxSamples: 700 });
      expect(read(bytes)).toEqual(samples);
    });
  }

  it('keeps header facts, stats and tables', () => {
    const w = V2FileWriter.inMemory({
      sampleIntervalUs: 250n,
      startTimeUs: 42n,
      mode: 2,
      captureFeatures: 5,
      stackCoding: 'predict',
    });
    const f = w.internFrame('a.py', 'main', 10, 12, 4, 9, 7);
    w.writeStack(7n, 0, 100n, 3, [f]);
    w.setStats(1.5, 999.5, 0.25, -3);
    const profile = readProfileV2(w.finalize()!);
    expect(profile.info).toMatchObject({
      version: 2,
      pythonVersion: '3.15.2',
      startTimeUs: 42n,
      sampleIntervalUs: 250n,
      sampleCount: 1n,
      threadCount: 1,
      mode: 2,
      captureFeatures: 5,
      durationSec: 1.5,
      sampleRate: 999.5,
      errorRate: 0.25,
      missedSamples: -3,
      compressionType: 1,
    });
    expect(profile.strings).toEqual(['a.py', 'main']);
    expect(profile.frames).toEqual([
      { filenameIndex: 0, funcnameIndex: 1, lineno: 10, endLinenoDelta: 2, column: 4, endColumnDelta: 5, opcode: 7 },
    ]);
    expect(profile.info.flags & HeaderFlag.TablesZstd).toBeTruthy();
  });

  it('reads the footer counts without decompressing anything', () => {
    const bytes = write([{ threadId: 1n, interpreterId: 0, timestampUs: 1n, status: 0, stack: [1, 2] }], {});
    const footer = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 32, 8);
    expect(footer.getUint32(0, true)).toBe(FRAME_COUNT + 7);
    expect(footer.getUint32(4, true)).toBe(FRAME_COUNT);
    expect(isVersion2(bytes)).toBe(true);
  });

  it('stores strings with NUL bytes length-prefixed', () => {
    const w = V2FileWriter.inMemory({ sampleIntervalUs: 1 });
    const f = w.internFrame('a\0b', 'ƒ\n');
    w.writeStack(1n, 0, 1n, 0, [f]);
    const profile = readProfileV2(w.finalize()!);
    expect(profile.strings).toEqual(['a\0b', 'ƒ\n']);
    expect(profile.info.flags & HeaderFlag.StringsNulTerminated).toBe(0);
  });

  it('round-trips every frame-table coding and both string-table codings', () => {
    const entry = fc.record({
      filenameIndex: fc.nat({ max: 300 }),
      funcnameIndex: fc.nat({ max: 0xffff_ffff }),
      lineno: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      endLinenoDelta: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      column: fc.integer({ min: -1, max: 500 }),
      endColumnDelta: fc.integer({ min: -5, max: 500 }),
      opcode: fc.nat({ max: 255 }),
    });
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 80 }),
        fc.constantFrom<FrameTableCoding>('plain', 'mtf', 'columns'),
        (frames: FrameTableEntry[], coding) => {
          const bytes = encodeFrameTable(frames, coding);
          const src = new ByteSource(bytes, 0, bytes.length, 0);
          expect(decodeFrameTable(src, frames.length, coding)).toEqual(frames);
          expect(src.remaining()).toBe(0);
        },
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' })), fc.boolean(), (strings, nul) => {
        const usable = nul ? strings.map((s) => s.replaceAll('\0', '')) : strings;
        const bytes = encodeStringTable(usable, nul);
        expect(decodeStringTable(new ByteSource(bytes, 0, bytes.length, 0), usable.length, nul)).toEqual(usable);
      }),
    );
  });

  it('re-codes version-1 encoded tables as version 2 tables and back', () => {
    const strings = ['app.py', 'main', 'a\u00e9b', 'lib.py', 'load'];
    const frames: FrameTableEntry[] = [
      { filenameIndex: 0, funcnameIndex: 1, lineno: 10, endLinenoDelta: 0, column: 4, endColumnDelta: 4, opcode: 255 },
      { filenameIndex: 3, funcnameIndex: 4, lineno: -1, endLinenoDelta: 0, column: -1, endColumnDelta: 0, opcode: 7 },
      { filenameIndex: 0, funcnameIndex: 1, lineno: 12, endLinenoDelta: 1, column: 0, endColumnDelta: 9, opcode: 100 },
      { filenameIndex: 0, funcnameIndex: 2, lineno: 30, endLinenoDelta: 0, column: 2, endColumnDelta: 3, opcode: 255 },
    ];
    const v1Strings = encodeStringTable(strings);
    const v1Frames = encodeFrameTable(frames, 'plain');
    for (const level of [null, 19]) {
      const t = version2Tables(v1Strings, strings.length, v1Frames, frames.length, level);
      expect(t.flags & HeaderFlag.FrameTableColumns).toBeTruthy();
      expect(t.flags & HeaderFlag.StringsNulTerminated).toBeTruthy();
      expect(Boolean(t.flags & HeaderFlag.TablesZstd)).toBe(level !== null);
      const s = level === null ? t.strings : zstdDecompress(t.strings, 0, 'strings');
      const f = level === null ? t.frames : zstdDecompress(t.frames, 0, 'frames');
      expect(decodeStringTable(new ByteSource(s, 0, s.length, 0), strings.length, true)).toEqual(strings);
      expect(decodeFrameTable(new ByteSource(f, 0, f.length, 0), frames.length, 'columns')).toEqual(frames);
    }
  });

  it('writes plain version-1 rows for the plain frame-table coding', () => {
    const sink = new ByteSink();
    encodeFrameTable(
      [
        {
          filenameIndex: 0,
          funcnameIndex: 1,
          lineno: 10,
          endLinenoDelta: 0,
          column: 4,
          endColumnDelta: 4,
          opcode: 255,
        },
      ],
      'plain',
      sink,
    );
    // notes/tachyon-format.md §3.3: "00 01 14 00 08 08 ff" = app.py, main, line 10, end delta 0, col 4, end-col delta 4, no opcode.
    expect(Array.from(sink.view())).toEqual([0x00, 0x01, 0x14, 0x00, 0x08, 0x08, 0xff]);
  });
});

describe('version-2 bad input', () => {
  const good = write(
    Array.from({ length: 30 }, (_, i) => ({
      threadId: BigInt(i % 3),
      interpreterId: 0,
      timestampUs: BigInt(i * 1000),
      status: 1,
      stack: [i % 5, 7, 8],
    })),
    { compression: 'none', compressTables: false, stackCoding: 'stacktable' },
  );

  function failure(bytes: Uint8Array): ProfpackError {
    try {
      readProfileV2(bytes).forEachSample(() => {});
    } catch (err) {
      expect(err).toBeInstanceOf(ProfpackError);
      return err as ProfpackError;
    }
    throw new Error('no error');
  }

  it('never hangs or crashes on corrupted sample regions: every failure is a ProfpackError with an offset', () => {
    const regionEnd = Number(new DataView(good.buffer, good.byteOffset).getBigUint64(Header.stringTableOffset, true));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: HEADER_SIZE, max: regionEnd - 1 }), fc.nat({ max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (edits) => {
          const bytes = good.slice();
          for (const [at, value] of edits) bytes[at] = value;
          try {
            readProfileV2(bytes).forEachSample(() => {});
          } catch (err) {
            expect(err).toBeInstanceOf(ProfpackError);
            expect(
              typeof (err as ProfpackError).offset === 'number' ||
                (err as ProfpackError).code === ErrorCode.V2_UNDEFINED_THREAD,
            ).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects unknown header flags, another version, and a big-endian file', () => {
    const flags = good.slice();
    flags[HEADER_FLAGS_OFFSET] = 0x80;
    expect(failure(flags).code).toBe(ErrorCode.V2_UNSUPPORTED);
    const v1 = good.slice();
    v1[Header.version] = 1;
    expect(failure(v1).code).toBe(ErrorCode.V2_BAD_HEADER);
    const swapped = good.slice();
    swapped.set([0x54, 0x41, 0x43, 0x48], 0);
    expect(failure(swapped).code).toBe(ErrorCode.V2_UNSUPPORTED);
  });

  it('rejects a block kind of version 1 inside a version-2 region', () => {
    const bytes = good.slice();
    bytes[HEADER_SIZE + 12] = 1;
    const err = failure(bytes);
    expect(err.code).toBe(ErrorCode.V2_BAD_BLOCK);
    expect(err.offset).toBe(HEADER_SIZE + 12);
  });

  it('rejects a header sample count that disagrees with the region', () => {
    const bytes = good.slice();
    new DataView(bytes.buffer).setBigUint64(Header.sampleCount, 31n, true);
    expect(failure(bytes).code).toBe(ErrorCode.V2_BAD_BLOCK);
  });

  it('rejects a truncated zstd region', () => {
    const zstdFile = write([{ threadId: 1n, interpreterId: 0, timestampUs: 1n, status: 0, stack: [1, 2, 3] }], {
      compression: 'zstd',
      compressTables: false,
    });
    const view = new DataView(zstdFile.buffer, zstdFile.byteOffset);
    const stringTable = Number(view.getBigUint64(Header.stringTableOffset, true));
    // Drop the region's last byte and move everything after it down by one.
    const cut = new Uint8Array(zstdFile.length - 1);
    cut.set(zstdFile.subarray(0, stringTable - 1), 0);
    cut.set(zstdFile.subarray(stringTable), stringTable - 1);
    const cv = new DataView(cut.buffer);
    cv.setBigUint64(Header.stringTableOffset, BigInt(stringTable - 1), true);
    cv.setBigUint64(Header.frameTableOffset, view.getBigUint64(Header.frameTableOffset, true) - 1n, true);
    expect(failure(cut).code).toBe(ErrorCode.V2_ZSTD);
  });
});
