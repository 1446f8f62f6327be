import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { ProfpackError } from '../../lib/errors';
import { HEADER_SIZE, Header } from '../../lib/tachyon/format';
import { SampleBlockReader } from '../../lib/tachyon/v2/blocks';
import { V2FileWriter } from '../../lib/tachyon/v2/file';
import { v2Native } from '../../lib/tachyon/v2/native';

interface Outcome {
  samples: { threadId: bigint; interpreterId: number; timestampUs: bigint; status: number; stack: number[] }[];
  error: { code: string; offset: number | undefined } | null;
}

function viaJs(region: Uint8Array): Outcome {
  const out: Outcome = { samples: [], error: null };
  try {
    new SampleBlockReader({ sampleIntervalUs: 1000n, startTimeUs: 0n }).decodeRegion(region, HEADER_SIZE, (threadId, interpreterId, timestampUs, status, stack, depth) => {
      out.samples.push({ threadId, interpreterId, timestampUs, status, stack: Array.from(stack.subarray(0, depth)) });
    });
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
    stack: Array.from(d.frames.subarray(d.stackOffsets[i]!, d.stackOffsets[i + 1]!)),
  }));
  return { samples, error: d.error ? { code: d.error.code, offset: d.error.offset } : null };
}

function region(stackCoding: 'predict' | 'stacktable'): Uint8Array {
  const w = V2FileWriter.inMemory({ sampleIntervalUs: 1000, startTimeUs: 0, stackCoding, compression: 'none', compressTables: false, blockMaxSamples: 16 });
  const frames = Array.from({ length: 12 }, (_, i) => w.internFrame('f.py', `fn${i}`, i));
  for (let i = 0; i < 60; i++) {
    const depth = 1 + ((i * 7) % 9);
    w.writeStack(BigInt(i % 4) << 40n, i % 2, BigInt(i * 997 + (i % 3) * 50), i & 0x3f, Array.from({ length: depth }, (_, j) => frames[(i + j * j) % 12]!));
  }
  const file = w.finalize()!;
  const end = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(Header.stringTableOffset, true));
  return file.slice(HEADER_SIZE, end);
}

describe('version-2 backends', () => {
  it('uses the native region decoder exactly when the native backend is loaded', () => {
    expect(v2Native !== null).toBe(backend.name === 'native');
  });

  for (const coding of ['predict', 'stacktable'] as const) {
    it(`native and JS decoders agree on samples and on the error code and offset of corrupted input (${coding})`, () => {
      const good = region(coding);
      const reference = viaJs(good);
      expect(reference.error).toBeNull();
      expect(reference.samples.length).toBe(60);
      if (v2Native !== null) expect(viaNative(good)).toEqual(reference);
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.nat({ max: good.length - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 3 }), fc.nat({ max: good.length }), (edits, cut) => {
          const bytes = good.slice(0, Math.max(cut, good.length - 40));
          for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
          const js = viaJs(bytes);
          // Every failure is a ProfpackError with an offset inside the region.
          if (js.error !== null) expect(js.error.offset).toBeGreaterThanOrEqual(HEADER_SIZE);
          if (js.error !== null) expect(js.error.offset).toBeLessThanOrEqual(HEADER_SIZE + bytes.length);
          if (v2Native !== null) expect(viaNative(bytes)).toEqual(js);
        }),
        { numRuns: 400 },
      );
    });
  }
});
