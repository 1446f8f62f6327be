// The model section's producer fields (docs/format-v2.md §8, presence bit 64):
// what recorded a version-2 file, field by field, read back as written;
// damaged fields refused with a code and an offset inside the section.
import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../../lib/backend';
import { ErrorCode } from '../../../../lib/errors';
import { ModelWriter, ProfileReader } from '../../../../lib/tachyon/index';
import { decodeModelSection } from '../../../../lib/tachyon/codec/model/section';
import { ModelSectionEncoder } from '../../../../lib/tachyon/codec/model/encoder';
import { ProducerKind, type ProducerFields } from '../../../../lib/tachyon/codec/model/producer-fields';
import { thrown } from '../../../support/refusals';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-producer-'));
let n = 0;

const value = fc.oneof(
  fc.string(),
  fc.integer({ min: -(2 ** 52), max: 2 ** 52 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 5 }),
);

/** A file of three samples whose model section carries `producer`, read back. */
function roundTrip(producer: ProducerFields, compression: 'zstd' | 'none'): ProducerFields | undefined {
  const out = path.join(dir, `p${n++}.bin`);
  const w = new ModelWriter(out, {
    sampleIntervalUs: 1000n,
    startTimeUs: 1_000_000n,
    compression,
    backend: backend.name,
    meta: { sampleTypes: [{ type: 'samples', unit: 'count' }], defaultSampleType: 0, producer },
  });
  const f = w.internFrame({ filename: 'app.js', funcname: 'main', lineno: 1 });
  const values = [Float64Array.of(1, 2, 3)];
  for (let i = 0; i < 3; i++) w.writeSample(0n, 0, 1_000_000 + i * 1000, 2, Uint32Array.of(f), values, i, 0);
  w.finalize();
  const reader = ProfileReader.open(out);
  try {
    expect(reader.model!.values[0]).toEqual(Float64Array.of(1, 2, 3));
    return reader.model!.producer;
  } finally {
    reader.close();
  }
}

describe(`version 2 producer fields (${backend.name} backend)`, () => {
  it('read back as written: strings, integers, numbers, flags, string lists (fast-check)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), value), fc.boolean(), (fields, zstd) => {
        expect(roundTrip(fields, zstd ? 'zstd' : 'none')).toEqual(fields);
      }),
      { numRuns: 40 },
    );
  });

  it('a key named like an Object member stays a field of its own', () => {
    const fields: ProducerFields = { ['__proto__']: 'x', constructor: 3 };
    const back = roundTrip(fields, 'none')!;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toBe('x');
    expect(back.constructor).toBe(3);
  });

  it('a file without them has none', () => {
    const out = path.join(dir, `p${n++}.bin`);
    const w = new ModelWriter(out, {
      sampleIntervalUs: 1000n,
      startTimeUs: 0n,
      meta: { sampleTypes: [{ type: 'samples', unit: 'count' }], defaultSampleType: 0 },
    });
    w.finalize();
    const reader = ProfileReader.open(out);
    expect(reader.model!.producer).toBeUndefined();
    reader.close();
  });

  it('an unknown kind, and every cut, is refused with a code and an offset inside the section', () => {
    const section = new ModelSectionEncoder({
      sampleTypes: [{ type: 'samples', unit: 'count' }],
      defaultSampleType: 0,
      producer: { runtime: 'node', ok: true },
    });
    const bytes = section.encode(null);
    const at = 5000;
    expect(decodeModelSection(bytes, at, 0, 1 << 20).producer).toEqual({ runtime: 'node', ok: true });
    // The last byte is the last field's kind (true).
    expect(bytes[bytes.length - 1]).toBe(ProducerKind.True);
    const damaged = Uint8Array.from(bytes);
    damaged[damaged.length - 1] = 9;
    const err = thrown(() => decodeModelSection(damaged, at, 0, 1 << 20));
    expect(err.code).toBe(ErrorCode.V2_BAD_MODEL);
    expect(err.offset).toBe(at + bytes.length - 1);
    expect(err.message).toMatch(/producer field kind 9/);
    for (let cut = 1; cut < bytes.length; cut++) {
      const e = thrown(() => decodeModelSection(bytes.subarray(0, cut), at, 0, 1 << 20));
      expect(e.code).toMatch(/^ERR_(V2_|VARINT_)/);
      expect(e.offset).toBeGreaterThanOrEqual(at);
      expect(e.offset).toBeLessThanOrEqual(at + bytes.length);
    }
  });
});
