/**
 * Every Stream VByte implementation the suite can reach in this process: the
 * JS twin always, and under the native backend the addon at each kernel level
 * this CPU has (switched per call through the setKernelLevel test hook, so the
 * scalar, SSE4.1 and AVX2 kernels all run in one process).
 */
import { jsCodec } from '../../lib/svb/js';
import type { Mode, SvbCodec } from '../../lib/svb/modes';
import { svbNative, type KernelLevel } from '../../lib/svb/native';

export interface NamedCodec {
  name: string;
  codec: SvbCodec;
}

function atLevel(level: KernelLevel): SvbCodec {
  const native = svbNative!;
  const run = <R>(body: () => R): R => {
    const previous = native.setKernelLevel(level);
    try {
      return body();
    } finally {
      native.setKernelLevel(previous);
    }
  };
  return {
    encode: (values, out, mode: Mode, prev) => run(() => native.encode(values, out, mode, prev)),
    decode: (bytes, count, out, mode: Mode, prev) => run(() => native.decode(bytes, count, out, mode, prev)),
    encodedLength: (values, mode: Mode, prev) => run(() => native.encodedLength(values, mode, prev)),
    validate: (bytes, count, mode: Mode) => run(() => native.validate(bytes, count, mode)),
  };
}

export const nativeLevels: KernelLevel[] = svbNative === null ? [] : svbNative.kernelLevels();

export const allCodecs: NamedCodec[] = [
  { name: 'js', codec: jsCodec },
  ...nativeLevels.map((level) => ({ name: `native/${level}`, codec: atLevel(level) })),
];

export function maxEncodedLength(n: number): number {
  return Math.ceil(n / 4) + 4 * n;
}

/** Encodes with `codec` and returns exactly the encoded bytes (a copy). */
export function encodeWith(codec: SvbCodec, values: Uint32Array, mode: Mode, prev: number): Uint8Array {
  const out = new Uint8Array(maxEncodedLength(values.length));
  const length = codec.encode(values, out, mode, prev);
  return out.slice(0, length);
}

export function words(bytes: Uint8Array): Uint32Array {
  const copy = bytes.slice();
  return new Uint32Array(copy.buffer, 0, copy.length / 4);
}

/** Fast exact comparison of two typed arrays' bytes (vitest's toEqual is slow on 10^5 elements). */
export function sameBytes(actual: ArrayBufferView, expected: ArrayBufferView): string | true {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (actual.constructor !== expected.constructor) return `${actual.constructor.name} vs ${expected.constructor.name}`;
  if (a.equals(b)) return true;
  if (a.length !== b.length) return `${a.length} bytes vs ${b.length} expected`;
  const at = a.findIndex((byte, i) => byte !== b[i]);
  return `first difference at byte ${at}: ${a[at]} vs ${b[at]} expected`;
}
