import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { ProfpackError } from '../../../lib/errors';
import { HEADER_SIZE, Header } from '../../../lib/tachyon/format';
import { SampleBlockWriter } from '../../../lib/tachyon/codec/blocks';
import { SampleBlockReader } from '../../../lib/tachyon/codec/block-reader';
import { BlockKind, blockKindOf } from '../../../lib/tachyon/codec/format';
import { zstdDecompress } from '../../../lib/tachyon/file/zstd/index';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../support/environment';
import { memoryWriter } from '../../support/memory-writer';
import { v2Native } from '../../../lib/tachyon/codec/native';

interface Outcome {
  samples: { threadId: bigint; interpreterId: number; timestampUs: bigint; status: number; stack: number[] }[];
  error: { code: string; offset: number | undefined } | null;
}

function viaJs(region: Uint8Array): Outcome {
  const out: Outcome = { samples: [], error: null };
  try {
    new SampleBlockReader({ sampleIntervalUs: 1000n, startTimeUs: 0n }).decodeRegion(
      region,
      HEADER_SIZE,
      (threadId, interpreterId, timestampUs, status, stack, depth) => {
        out.samples.push({ threadId, interpreterId, timestampUs, status, stack: Array.from(stack.subarray(0, depth)) });
      },
    );
  } catch (err) {
    if (!(err instanceof ProfpackError)) throw err;
    out.error = { code: err.code, offset: err.offset };
  }
  return out;
}

function viaNative(region: Uint8Array): Outcome {
  const d = v2Native!.decodeRegion(region, HEADER_SIZE, 0n, 1000n);
  const samples = Array.from(d.sampleThread, (t, i) => ({
    threadId: d.threadIds[t]!,
    interpreterId: d.interpreterIds[t]!,
    timestampUs: d.timestamps[i]!,
    status: d.statuses[i]!,
    stack: Array.from(d.frames.subarray(d.stackOffsets[i], d.stackOffsets[i + 1])),
  }));
  return { samples, error: d.error ? { code: d.error.code, offset: d.error.offset } : null };
}

function region(stackCoding: 'predict' | 'stacktable'): Uint8Array {
  const { writer: w, bytes } = memoryWriter(
    { sampleIntervalUs: 1000, startTimeUs: 0, formatVersion: 2, stackCoding, compression: 'none' },
    { compressTables: false, blockMaxSamples: 16 },
  );
  const frames = Array.from({ length: 12 }, (_, i) =>
    w.internFrame({ filename: 'f.py', funcname: `fn${i}`, lineno: i }),
  );
  for (let i = 0; i < 60; i++) {
    const depth = 1 + ((i * 7) % 9);
    w.writeStack(
      BigInt(i % 4) << 40n,
      i % 2,
      BigInt(i * 997 + (i % 3) * 50),
      i & 0x3f,
      Array.from({ length: depth }, (_, j) => frames[(i + j * j) % 12]!),
    );
  }
  w.finalize();
  const file = bytes();
  const end = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(Header.stringTableOffset, true));
  return file.slice(HEADER_SIZE, end);
}

describe('version-2 backends', () => {
  it('uses the native region decoder exactly when the native backend is loaded', () => {
    expect(v2Native !== null).toBe(backend.name === 'native');
  });

  // Block kind 5 is no longer written: its region comes from the fixture written before issue 19.
  const kind5 = (): Uint8Array => {
    const file = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'v2', 'stacktable-kind5.tach'));
    const end = Number(file.readBigUInt64LE(Header.stringTableOffset));
    return zstdDecompress(file.subarray(HEADER_SIZE, end), HEADER_SIZE, 'sample region');
  };
  const regions = {
    predict: () => region('predict'),
    stacktable: () => region('stacktable'),
    'stacktable kind 5': kind5,
  };
  for (const [coding, make] of Object.entries(regions)) {
    it(`native and JS decoders agree on samples and on the error code and offset of corrupted input (${coding})`, () => {
      const good = make();
      expect(good[12]).toBe(
        coding === 'predict'
          ? BlockKind.Predict
          : coding === 'stacktable'
            ? BlockKind.StackTableRecent
            : BlockKind.StackTable,
      );
      const reference = viaJs(good);
      expect(reference.error).toBeNull();
      expect(reference.samples.length).toBe(coding === 'stacktable kind 5' ? 600 : 60);
      if (v2Native !== null) expect(viaNative(good)).toEqual(reference);
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.nat({ max: good.length - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 3 }),
          fc.nat({ max: good.length }),
          (edits, cut) => {
            const bytes = good.slice(0, Math.max(cut, good.length - 40));
            for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
            const js = viaJs(bytes);
            // Every failure is a ProfpackError with an offset inside the region.
            if (js.error !== null) expect(js.error.offset).toBeGreaterThanOrEqual(HEADER_SIZE);
            if (js.error !== null) expect(js.error.offset).toBeLessThanOrEqual(HEADER_SIZE + bytes.length);
            if (v2Native !== null) expect(viaNative(bytes)).toEqual(js);
          },
        ),
        { numRuns: 400 },
      );
    });
  }
});

describe('version-2 block encoders', () => {
  const sampleArb = fc.record({
    thread: fc.oneof(
      fc.nat({ max: 3 }).map((t) => ({ threadId: BigInt(t), interpreterId: t % 2 })),
      fc.record({
        threadId: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        interpreterId: fc.nat({ max: 0xffff_ffff }),
      }),
    ),
    timestamp: fc.oneof(fc.bigInt({ min: 0n, max: 100_000n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })),
    status: fc.nat({ max: 255 }),
    stack: fc.oneof(
      fc.array(fc.nat({ max: 40 }), { maxLength: 30 }),
      fc.array(fc.nat({ max: 0xffff_ffff }), { maxLength: 256 }),
      fc.tuple(fc.nat({ max: 5 }), fc.integer({ min: 200, max: 256 })).map(([f, n]) => new Array<number>(n).fill(f)),
      // deeper than version 1 keeps, up to version 2's 4,096 frames
      fc
        .tuple(fc.nat({ max: 50 }), fc.integer({ min: 257, max: 4096 }))
        .map(([f, n]) => Array.from({ length: n }, (_, i) => f + (i % 7))),
    ),
  });

  for (const coding of ['predict', 'stacktable'] as const) {
    it(`native blocks are byte-identical to the JS twin's (${coding})`, () => {
      fc.assert(
        fc.property(fc.array(sampleArb, { maxLength: 80 }), fc.integer({ min: 1, max: 30 }), (samples, blockMax) => {
          const threadIds = BigUint64Array.from(samples, (s) => s.thread.threadId);
          const interpreterIds = Uint32Array.from(samples, (s) => s.thread.interpreterId);
          const timestamps = BigUint64Array.from(samples, (s) => s.timestamp);
          const statuses = Uint8Array.from(samples, (s) => s.status);
          let end = 0;
          const stackEnds = Uint32Array.from(samples, (s) => (end += s.stack.length));
          const frames = Uint32Array.from(samples.flatMap((s) => s.stack));
          const options = { sampleIntervalUs: 997n, startTimeUs: 5n };
          const perSample: Uint8Array[] = [];
          const one = new SampleBlockWriter(coding, options, (b) => perSample.push(b), blockMax);
          samples.forEach((s) => one.add(s.thread.threadId, s.thread.interpreterId, s.timestamp, s.status, s.stack));
          one.flush();
          const batched: Uint8Array[] = [];
          const many = new SampleBlockWriter(coding, options, (b) => batched.push(b), blockMax);
          many.addMany(threadIds, interpreterIds, timestamps, statuses, stackEnds, frames);
          many.flush();
          expect(batched).toEqual(perSample);
          if (v2Native !== null) {
            const handle = v2Native.createEncoder(
              blockKindOf(coding),
              options.sampleIntervalUs,
              options.startTimeUs,
              blockMax,
            );
            const native = v2Native.encodeSamples(
              handle,
              threadIds,
              interpreterIds,
              timestamps,
              statuses,
              stackEnds,
              frames,
            );
            const last = v2Native.flushEncoder(handle);
            if (last.length > 0) native.push(last);
            expect(native.map((b) => Buffer.from(b).toString('hex'))).toEqual(
              perSample.map((b) => Buffer.from(b).toString('hex')),
            );
            expect(v2Native.encoderCounts(handle)).toEqual([
              samples.length,
              new Set(samples.map((s) => `${s.thread.threadId}:${s.thread.interpreterId}`)).size,
            ]);
          }
          // And the JS reader gets every sample back.
          const region = Buffer.concat(perSample);
          const decoded: string[] = [];
          new SampleBlockReader(options).decodeRegion(
            region,
            64,
            (threadId, interpreterId, timestampUs, status, stack, depth) => {
              decoded.push(
                `${threadId}/${interpreterId}/${timestampUs}/${status}/${Array.from(stack.subarray(0, depth))}`,
              );
            },
          );
          expect(decoded).toEqual(
            samples.map((s) => `${s.thread.threadId}/${s.thread.interpreterId}/${s.timestamp}/${s.status}/${s.stack}`),
          );
        }),
        { numRuns: 150 },
      );
    });
  }

  it('the native encoder refuses a bad batch before coding any of it', () => {
    if (v2Native === null) {
      expect(backend.name).toBe('js');
      return;
    }
    const handle = v2Native.createEncoder(BlockKind.StackTableRecent, 1000n, 0n, 100);
    expect(() =>
      v2Native!.encodeSamples(
        handle,
        new BigUint64Array([1n, 1n]),
        new Uint32Array(2),
        new BigUint64Array(2),
        new Uint8Array(2),
        new Uint32Array([1, 4098]),
        new Uint32Array(4098),
      ),
    ).toThrow(ProfpackError);
    expect(v2Native.encoderCounts(handle)).toEqual([0, 0]);
  });
});
