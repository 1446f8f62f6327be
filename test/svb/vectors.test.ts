/**
 * Every vector in shared/vectors/svb (made by the reference C library, see
 * its index.json): the public API on this run's backend, then every codec
 * (JS twin, and the addon at each kernel level) byte for byte.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import * as svb from '../../lib/svb/index';
import { Mode } from '../../lib/svb/modes';
import { svbNative } from '../../lib/svb/native';
import { readJsonExact, sharedPath } from '../support/environment';
import { allCodecs, encodeWith, nativeLevels, sameBytes, words } from './codecs';

interface FileRef {
  file: string;
  bytes: number;
  sha256: string;
}
interface Output extends FileRef {
  variant: string;
  prev?: number;
}
interface Vector {
  name: string;
  count: number;
  input: FileRef & { type: string };
  outputs: Output[];
}

const index = readJsonExact(sharedPath('vectors', 'svb', 'index.json')) as { vectors: Vector[] };

function read(ref: FileRef): Uint8Array {
  const bytes = new Uint8Array(readFileSync(sharedPath('vectors', 'svb', ref.file)));
  expect(bytes.length).toBe(ref.bytes);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(ref.sha256);
  return bytes;
}

/** The encoded streams of a vector, with the mode that makes them. */
const STREAM_MODES: Record<string, Mode> = {
  '1234': Mode.Plain1234,
  '0124': Mode.Plain0124,
  delta1234: Mode.Delta1234,
  zigzag_svb1234: Mode.Zigzag1234,
  zigzag_delta_svb1234: Mode.ZigzagDelta1234,
};

describe('shared Stream VByte vectors', () => {
  it('covers every file of index.json', () => {
    const variants = new Set(index.vectors.flatMap((v) => v.outputs.map((o) => o.variant)));
    for (const variant of variants) {
      expect(['zigzag_u32', 'zigzag_delta_u32', ...Object.keys(STREAM_MODES)]).toContain(variant);
    }
    const listed = new Set(index.vectors.flatMap((v) => [v.input.file, ...v.outputs.map((o) => o.file)]));
    const present = readdirSync(sharedPath('vectors', 'svb')).filter((f) => f !== 'index.json');
    expect(present.filter((f) => !listed.has(f))).toEqual([]);
    expect(listed.size).toBe(present.length);
  });

  for (const vector of index.vectors) {
    it(`${vector.name}: the public API gives the reference bytes and the input back`, () => {
      const inputBytes = read(vector.input);
      expect(inputBytes.length).toBe(4 * vector.count);
      const unsigned = words(inputBytes);
      const signed = new Int32Array(unsigned.buffer);
      for (const output of vector.outputs) {
        const expected = read(output);
        const prev = output.prev ?? 0;
        const n = vector.count;
        switch (output.variant) {
          case '1234':
          case '0124': {
            const variant = output.variant;
            expect(sameBytes(svb.encode(unsigned, variant), expected)).toBe(true);
            expect(sameBytes(svb.decode(expected, n, variant), unsigned)).toBe(true);
            expect(svb.encodedLength(unsigned, variant)).toBe(expected.length);
            expect(svb.validate(expected, n, variant)).toBe(true);
            const out = new Uint32Array(n);
            expect(svb.decodeInto(expected, n, out, variant)).toBe(expected.length);
            expect(sameBytes(out, unsigned)).toBe(true);
            break;
          }
          case 'delta1234':
            expect(sameBytes(svb.deltaEncode(unsigned, prev), expected)).toBe(true);
            expect(sameBytes(svb.deltaDecode(expected, n, prev), unsigned)).toBe(true);
            expect(svb.validate(expected, n)).toBe(true);
            break;
          case 'zigzag_svb1234':
            expect(sameBytes(svb.zigzagEncode(signed), expected)).toBe(true);
            expect(sameBytes(svb.zigzagDecode(expected, n), signed)).toBe(true);
            break;
          case 'zigzag_delta_svb1234':
            expect(sameBytes(svb.zigzagDeltaEncode(signed, prev), expected)).toBe(true);
            expect(sameBytes(svb.zigzagDeltaDecode(expected, n, prev), signed)).toBe(true);
            break;
          case 'zigzag_u32': {
            // The zigzagged values, plainly 1234-encoded, are the zigzag stream.
            const stream = vector.outputs.find((o) => o.variant === 'zigzag_svb1234')!;
            expect(sameBytes(svb.decode(read(stream), n), words(expected))).toBe(true);
            break;
          }
          case 'zigzag_delta_u32': {
            const stream = vector.outputs.find((o) => o.variant === 'zigzag_delta_svb1234' && (o.prev ?? 0) === prev)!;
            expect(sameBytes(svb.decode(read(stream), n), words(expected))).toBe(true);
            break;
          }
          default:
            throw new Error(`unknown variant ${output.variant}`);
        }
      }
    });
  }

  for (const { name, codec } of allCodecs) {
    it(`every vector, byte for byte, on ${name}`, () => {
      let checked = 0;
      for (const vector of index.vectors) {
        const input = words(read(vector.input));
        for (const output of vector.outputs) {
          const mode = STREAM_MODES[output.variant];
          if (mode === undefined) continue;
          const expected = read(output);
          const prev = output.prev ?? 0;
          expect(sameBytes(encodeWith(codec, input, mode, prev), expected), output.file).toBe(true);
          const decoded = new Uint32Array(vector.count);
          expect(codec.decode(expected, vector.count, decoded, mode, prev)).toBe(expected.length);
          expect(sameBytes(decoded, input), output.file).toBe(true);
          expect(codec.encodedLength(input, mode, prev)).toBe(expected.length);
          expect(codec.validate(expected, vector.count, mode === Mode.Plain0124 ? mode : Mode.Plain1234)).toBe(true);
          checked++;
        }
      }
      const streams = index.vectors.flatMap((v) => v.outputs).filter((o) => STREAM_MODES[o.variant] !== undefined);
      expect(checked).toBe(streams.length);
      expect(checked).toBeGreaterThanOrEqual(130);
    });
  }

  it('runs every kernel level this CPU has (native run) or none (JS run)', () => {
    if (backend.name === 'native') {
      const expected = ['scalar'];
      if (backend.features.sse41) expected.push('sse41');
      if (backend.features.avx2) expected.push('avx2');
      if (backend.features.neon) expected.push('neon');
      expect(nativeLevels).toEqual(expected);
      expect(allCodecs.map((c) => c.name)).toEqual(['js', ...expected.map((l) => `native/${l}`)]);
      expect(backend.features.simd).toBe(svbNative!.kernelLevel());
    } else {
      expect(svbNative).toBeNull();
      expect(allCodecs.map((c) => c.name)).toEqual(['js']);
    }
  });
});
