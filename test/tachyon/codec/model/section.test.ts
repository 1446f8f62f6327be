// Version 2's model section (docs/format-v2.md §8): its place in the file,
// the same bytes from both writer twins, version-2 files without it read as
// before, downgrade naming what version 1 loses, and damaged sections refused
// with a code and an offset, never a crash.
import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../../lib/backend';
import { ErrorCode, isProfpackError } from '../../../../lib/errors';
import { tachyonAdapter } from '../../../../lib/formats/tachyon/index';
import { FOOTER_SIZE, Header } from '../../../../lib/tachyon/format';
import { ModelWriter, ProfileReader, ProfileWriter, downgrade } from '../../../../lib/tachyon/index';
import { HeaderFlag, MODEL_OFFSET_IN_FOOTER } from '../../../../lib/tachyon/codec/format';
import { decodeDeltas, decodeModelSection } from '../../../../lib/tachyon/codec/model/section';
import { ByteSource } from '../../../../lib/tachyon/codec/bytes';
import type { V2Native } from '../../../../lib/tachyon/codec/native';
import { nativeTwin } from '../../../fuzz/twins';
import { readProfileV2 } from '../../../../lib/tachyon/read/v2/file';
import { thrown } from '../../../support/refusals';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-model-'));
let n = 0;
const file = () => path.join(dir, `m${n++}.bin`);

/** A model file written through ModelWriter with the given encoder and compression. */
function writeModel(out: string, writerBackend: 'native' | 'js', compression: 'zstd' | 'none', samples = 300): void {
  const w = new ModelWriter(out, {
    sampleIntervalUs: 1000n,
    startTimeUs: 10_000n,
    compression,
    backend: writerBackend,
    blockMaxSamples: 64,
    meta: {
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type: 'alloc_space', unit: 'bytes' },
      ],
      defaultSampleType: 1,
      periodType: { type: 'space', unit: 'bytes' },
      period: 512 * 1024,
      durationUs: 9_000_000n,
      comments: ['made by a test'],
    },
  });
  const frames = ['main', 'work', 'alloc', 'leaf'].map((name, i) =>
    w.internFrame({ filename: 'm.py', funcname: name, lineno: 10 * i + 1 }),
  );
  const set = w.internLabels([
    { key: 'span', str: 's1' },
    { key: 'size', num: 4096, unit: 'bytes' },
  ]);
  w.nameThread(2n, 0, 'worker');
  const values = [new Float64Array(samples), new Float64Array(samples)];
  for (let i = 0; i < samples; i++) {
    values[0]![i] = 1 + (i % 3);
    values[1]![i] = i % 7 === 0 ? 0.5 : i * 1_000_003;
  }
  for (let i = 0; i < samples; i++) {
    const depth = 1 + (i % 4);
    const stack = Uint32Array.from(frames.slice(0, depth).reverse());
    w.writeSample(
      BigInt(1 + (i % 2)),
      0,
      i % 11 === 0 ? NaN : 10_000 + i * 1000,
      i % 2 === 0 ? 2 : 32,
      stack,
      values,
      i,
      i % 5 === 0 ? set : 0,
    );
  }
  w.setStats(9, samples / 9);
  w.finalize();
}

/** A written file's bytes, where its footer starts, and the model section's offset the footer gives. */
function modelSectionOf(out: string): { bytes: Buffer; footerAt: number; offset: number } {
  const bytes = readFileSync(out);
  const footerAt = bytes.length - FOOTER_SIZE;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  return { bytes, footerAt, offset: Number(view.getBigUint64(footerAt + MODEL_OFFSET_IN_FOOTER, true)) };
}

describe(`version 2 model section (${backend.name} backend)`, () => {
  it('sits between the frame table and the stats block: flag bit 4, offset in the footer', () => {
    const out = file();
    writeModel(out, backend.name, 'zstd');
    const { bytes, offset } = modelSectionOf(out);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    expect(bytes[11]! & HeaderFlag.ModelSection).toBe(HeaderFlag.ModelSection);
    expect(offset).toBeGreaterThan(Number(view.getBigUint64(Header.frameTableOffset, true)));
    expect(bytes[offset]).toBe(1); // zstd-coded body
    const reader = ProfileReader.open(out);
    expect(reader.model!.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'alloc_space', unit: 'bytes' },
    ]);
    expect(reader.model!.values[1]![7]).toBe(0.5);
    expect(reader.model!.values[1]![8]).toBe(8 * 1_000_003);
    reader.close();
  });

  // The native writer loads only on the native run; the JS run checks its twin is deterministic.
  const other = backend.name === 'native' ? 'js' : backend.name;
  it(`the ${backend.name} and ${other} writers write the same bytes, raw and zstd`, () => {
    for (const compression of ['none', 'zstd'] as const) {
      const a = file();
      const b = file();
      writeModel(a, backend.name, compression);
      writeModel(b, other, compression);
      expect(Buffer.compare(readFileSync(a), readFileSync(b))).toBe(0);
    }
  });

  it('a version-2 file without the section reads as before, with the tick model', () => {
    const out = file();
    const w = new ProfileWriter(out, { sampleIntervalUs: 1000n, formatVersion: 2, mode: 'cpu' });
    const f = w.internFrame({ filename: 'a.py', funcname: 'f' });
    for (let i = 0; i < 5; i++) w.writeStack(1n, 0, 1000 * (i + 1), 2, [f]);
    w.finalize();
    expect(readFileSync(out)[11]! & HeaderFlag.ModelSection).toBe(0);
    const source = tachyonAdapter.read({ path: out }, {});
    expect(source.meta.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ]);
    let ticks = 0;
    let cpu = 0;
    for (const batch of source.batches()) {
      for (let i = 0; i < batch.length; i++) {
        ticks += batch.values[0]![i]!;
        cpu += batch.values[1]![i]!;
      }
    }
    expect([ticks, cpu]).toEqual([5, 5 * 1000 * 1000]);
  });

  it('downgrade writes the samples and says what version 1 could not keep', () => {
    const out = file();
    writeModel(out, backend.name, 'zstd', 40);
    const down = file();
    const result = downgrade(out, down);
    // Each record is as many ticks as its samples/count value says (1 + i % 3).
    const ticks = Array.from({ length: 40 }, (_, i) => 1 + (i % 3)).reduce((a, b) => a + b, 0);
    expect(result.samples).toBe(ticks);
    expect(ProfileReader.open(down).info.sampleCount).toBe(BigInt(ticks));
    expect(result.lost).toEqual([
      'value column alloc_space/bytes (version 1 counts one tick per sample)',
      'labels "span", "size" of 8 samples (1 label sets)',
      'which samples had no time (version 1 stores a time for every sample)',
      '1 thread names',
      'the period (524288 bytes of space)',
      'the duration (kept only as the stats block says it)',
      '1 comments',
    ]);
    expect(ProfileReader.open(down).info.version).toBe(1);
  });

  it('refuses a section that describes another number of samples, and an offset outside the tables', () => {
    const out = file();
    writeModel(out, backend.name, 'none', 20);
    const { bytes, footerAt, offset } = modelSectionOf(out);
    const model = readProfileV2(bytes).model!;
    expect(model.sampleCount).toBe(20);
    const err = thrown(() => decodeModelSection(bytes.subarray(offset, footerAt - 56), offset, 21, 1 << 20));
    expect(err.code).toBe(ErrorCode.V2_BAD_MODEL);
    expect(err.offset).toBeGreaterThan(offset);
    const moved = Uint8Array.from(bytes);
    new DataView(moved.buffer).setBigUint64(footerAt + MODEL_OFFSET_IN_FOOTER, 3n, true);
    const bad = thrown(() => readProfileV2(moved));
    expect(bad.code).toBe(ErrorCode.V2_BAD_HEADER);
    expect(bad.offset).toBe(footerAt + MODEL_OFFSET_IN_FOOTER);
  });

  it('a damaged section is refused with a code and an offset inside it, never a crash (fast-check)', () => {
    const out = file();
    writeModel(out, backend.name, 'none', 30);
    const { bytes, footerAt, offset } = modelSectionOf(out);
    const section = bytes.slice(offset, footerAt - 56);
    fc.assert(
      fc.property(
        fc.nat(section.length - 1),
        fc.integer({ min: 0, max: 255 }),
        fc.nat(section.length),
        (at, value, cut) => {
          const damaged = section.slice(0, Math.max(1, cut));
          if (at < damaged.length) damaged[at] = value;
          try {
            const m = decodeModelSection(damaged, offset, 30, 1 << 20);
            expect(m.values.every((c) => c.length === 30)).toBe(true);
          } catch (err) {
            expect(isProfpackError(err)).toBe(true);
            const e = err as { code: string; offset: number };
            expect(e.code).toMatch(/^ERR_(V2_|VARINT_)/);
            expect(e.offset).toBeGreaterThanOrEqual(offset);
            expect(e.offset).toBeLessThanOrEqual(offset + section.length + 1);
          }
        },
      ),
      { numRuns: 400 },
    );
    // The whole file, damaged in its section: the reader refuses it the same way.
    const whole = Uint8Array.from(bytes);
    whole[offset + 1] = 0xff;
    whole[offset + 2] = 0xff;
    const damagedFile = file();
    writeFileSync(damagedFile, whole);
    expect(thrown(() => ProfileReader.open(damagedFile)).code).toMatch(/^ERR_(V2_|VARINT_)/);
  });

  it('a value code past 2^53 is refused by the JS decoder too, also where a double would round it down to 2^53', () => {
    // LEB128 of 2^53 is 0x80 x7, 0x10; 2^53 + 1 (0x81 first) is 2^53 in a double. The format's bound is the exact code.
    const leb = (first: number, last: number) => Uint8Array.from([first, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, last]);
    // Zigzag code 2^53 is the delta 2^52: the largest the format takes.
    expect(Array.from(decodeDeltas(new ByteSource(leb(0x80, 0x10), 0, 8, 100), 1))).toEqual([2 ** 52]);
    for (const [first, last] of [
      [0x81, 0x10],
      [0x80, 0x11],
      [0xff, 0x7f],
    ]) {
      const refusal = thrown(() => decodeDeltas(new ByteSource(leb(first!, last!), 0, 8, 100), 1));
      expect(refusal.code).toBe(ErrorCode.V2_BAD_MODEL);
      expect(refusal.offset).toBe(100);
    }
  });

  it('the native and JS value-column decoders give the same values, or the same error at the same offset (fast-check)', () => {
    const native = nativeTwin<V2Native>('v2');
    const outcome = (f: () => { values: number[]; used: number }) => {
      try {
        return f();
      } catch (err) {
        expect(isProfpackError(err)).toBe(true);
        const e = err as { code: string; offset: number; message: string; expected: string };
        return { code: e.code, offset: e.offset, message: e.message, expected: e.expected };
      }
    };
    // Mostly well-formed codes (small, large, 2^53 and beyond), then cut or flipped.
    const code = fc.oneof(
      fc.nat(300),
      fc.constantFrom(2 ** 53, 2 ** 53 + 2, 2 ** 52, 2 ** 56 - 1),
      fc.maxSafeInteger(),
    );
    fc.assert(
      fc.property(
        fc.array(code, { maxLength: 40 }),
        fc.nat(45),
        fc.option(fc.tuple(fc.nat(400), fc.nat(255))),
        fc.nat(500),
        (codes, n, flip, base) => {
          const bytes: number[] = [];
          for (let c of codes) {
            while (c >= 128) {
              bytes.push((c % 128) | 0x80);
              c = Math.floor(c / 128);
            }
            bytes.push(c);
          }
          const column = Uint8Array.from(bytes);
          if (flip && flip[0] < column.length) column[flip[0]] = flip[1];
          const count = Math.min(n, column.length);
          const js = outcome(() => {
            const src = new ByteSource(column, 0, column.length, base);
            const values = Array.from(decodeDeltas(src, count));
            return { values, used: src.pos };
          });
          const nat = outcome(() => {
            const r = native.decodeValueColumn(column, base, count);
            if ('error' in r) throw r.error;
            return { values: Array.from(r.values), used: r.used };
          });
          expect(nat).toEqual(js);
        },
      ),
      // The first counterexample found (2^53 with its first byte made 0x81: 2^53 + 1), kept.
      { numRuns: 500, examples: [[[2 ** 53], 1, [0, 129], 0]] },
    );
  });
});
