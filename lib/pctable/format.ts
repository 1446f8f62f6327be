/**
 * Constants of Go's varint-delta pcvalue tables and of the linear-index
 * encoding (seed 000, ../shared/notes/go-pcvalue.md); the twin of
 * native/pctable/format.h.
 */

/** runtime.pcvalue starts from value -1 at the function entry. */
export const START_VALUE = -1;
/** A Go varint that fits 32 bits: at most 5 bytes, the 5th carrying bits 28..31. */
export const MAX_VARINT_BYTES = 5;
/** pcHeader.minLC is a u8. */
export const MAX_QUANTUM = 255;

/** A chunk covers 256 PC quanta (256 bytes on amd64, 1024 on arm64). */
export const CHUNK_SHIFT = 8;
export const CHUNK_QUANTA = 1 << CHUNK_SHIFT;
/** First byte of the u16 / u32 chunk index forms; a u8 index never starts with them. */
export const INDEX_MARKER_U16 = 0xfe;
export const INDEX_MARKER_U32 = 0xff;

/** Chunk index entry width in bytes (0: one chunk, no index). */
export type IndexWidth = 0 | 1 | 2 | 4;

/** 2-bit vlen codes, low bits first: 0b01 int8, 0b10 int16, 0b11 int32; 0b00 marks unused fields. */
export const LENGTH_UNUSED = 0;
export const LENGTH_1 = 1;
export const LENGTH_2 = 2;
export const LENGTH_4 = 3;
export const VALUE_BYTES: readonly number[] = [0, 1, 2, 4];

/** Sum of the value lengths of the four codes of one vlen byte (unused fields count 0). */
export const VLEN_BYTE_SUMS: Uint8Array = (() => {
  const sums = new Uint8Array(256);
  for (let b = 0; b < 256; b++)
    sums[b] = VALUE_BYTES[b & 3]! + VALUE_BYTES[(b >> 2) & 3]! + VALUE_BYTES[(b >> 4) & 3]! + VALUE_BYTES[b >> 6]!;
  return sums;
})();

/** A run of a varint table: `value` holds for PCs in [startPc, endPc) (bytes from the entry). */
export interface VarintRun {
  value: number;
  startPc: number;
  endPc: number;
}
