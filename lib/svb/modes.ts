/**
 * Stream kinds shared by the JS twin and the addon (native/svb/svb_napi.cc):
 * 0..3 are the 1234 layout holding x[i] through a transform (plain, delta,
 * zigzag, zigzag of the delta; `prev` is x[-1]), 4 is the 0124 layout.
 */
export const Mode = {
  Plain1234: 0,
  Delta1234: 1,
  Zigzag1234: 2,
  ZigzagDelta1234: 3,
  Plain0124: 4,
} as const;

export type Mode = (typeof Mode)[keyof typeof Mode];

/** Both twins' batch contract (lib/svb/js.ts and the addon's `svb` module). */
export interface SvbCodec {
  /** Encodes into `out` (at least maxEncodedLength(n) bytes); returns the encoded length. */
  encode(values: Uint32Array, out: Uint8Array, mode: Mode, prev: number): number;
  /** Decodes `count` values into out[0..count); returns the bytes the stream took. */
  decode(bytes: Uint8Array, count: number, out: Uint32Array, mode: Mode, prev: number): number;
  encodedLength(values: Uint32Array, mode: Mode, prev: number): number;
  validate(bytes: Uint8Array, count: number, mode: Mode): boolean;
}

/** ceil(n/4) control bytes plus 4 bytes per value. */
export function maxEncodedLength(n: number): number {
  return Math.ceil(n / 4) + 4 * n;
}
