/**
 * Bounds-checked input for the version-2 codings: a cursor whose errors are
 * version 2's (ERR_V2_TRUNCATED, lib/varint's overflow errors) with the file
 * offset. Their output goes to lib/byte-sink.ts's ByteSink.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { overflow, truncated } from '../../varint/index';
export { ByteSink } from '../../byte-sink';

/**
 * A cursor over one span of input. `base` is the span's offset in the data an
 * error should point into (the file, or the decompressed sample region), so
 * every ProfpackError carries an offset a reader can look up.
 */
export class ByteSource {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly start: number,
    readonly end: number,
    readonly base: number,
  ) {
    this.pos = start;
  }

  /** Offset of the cursor as errors report it. */
  offset(at = this.pos): number {
    return this.base + at;
  }

  remaining(): number {
    return this.end - this.pos;
  }

  fail(code: string, message: string, expected?: string, at = this.pos): ProfpackError {
    return new ProfpackError(message, { code, offset: this.offset(at), expected });
  }

  u8(what: string): number {
    if (this.pos >= this.end)
      throw this.fail(ErrorCode.V2_TRUNCATED, `${what} cut off by the end of its span`, 'one more byte');
    return this.bytes[this.pos++]!;
  }

  u16(what: string): number {
    if (this.end - this.pos < 2)
      throw this.fail(ErrorCode.V2_TRUNCATED, `${what} cut off by the end of its span`, 'two more bytes');
    const b = this.bytes;
    const v = b[this.pos]! | (b[this.pos + 1]! << 8);
    this.pos += 2;
    return v;
  }

  /** Unsigned LEB128 into a u32, exactly as lib/varint decodeU32 (same errors). */
  uvarint32(): number {
    const b = this.bytes;
    const start = this.pos;
    if (start < this.end && b[start]! < 0x80) {
      this.pos = start + 1;
      return b[start]!;
    }
    let value = 0;
    let pos = start;
    for (let i = 0; i < 5; i++) {
      if (pos >= this.end) throw truncated(this.base + start, 'u32');
      const byte = b[pos++]!;
      if (i === 4) {
        if (byte & 0x80) throw overflow(this.base + start, 'u32', 'at most 5 bytes');
        if (byte > 0x0f) throw overflow(this.base + start, 'u32', 'the 5th byte to carry at most 4 bits');
        this.pos = pos;
        return value + byte * 0x1000_0000;
      }
      value |= (byte & 0x7f) << (7 * i);
      if (!(byte & 0x80)) {
        this.pos = pos;
        return value >>> 0;
      }
    }
    /* c8 ignore next */
    throw overflow(this.base + start, 'u32', 'at most 5 bytes');
  }

  /** Unsigned LEB128 of at most 7 bytes (49 bits) as a number, for codes that may exceed u32. */
  uvarint49(): number {
    const b = this.bytes;
    const start = this.pos;
    let value = 0;
    let pos = start;
    for (let i = 0; i < 7; i++) {
      if (pos >= this.end) throw truncated(this.base + start, 'u49');
      const byte = b[pos++]!;
      value += (byte & 0x7f) * 2 ** (7 * i);
      if (!(byte & 0x80)) {
        this.pos = pos;
        return value;
      }
    }
    throw overflow(this.base + start, 'u49', 'at most 7 bytes');
  }

  /** Unsigned LEB128 into a u64 (bigint), at most 10 bytes. */
  uvarint64(): bigint {
    const b = this.bytes;
    const start = this.pos;
    if (start < this.end && b[start]! < 0x80) {
      this.pos = start + 1;
      return BigInt(b[start]!);
    }
    let low = 0; // bits 0..48 exactly, as a number
    let pos = start;
    let i = 0;
    for (; i < 7; i++) {
      if (pos >= this.end) throw truncated(this.base + start, 'u64');
      const byte = b[pos++]!;
      low += (byte & 0x7f) * 2 ** (7 * i);
      if (!(byte & 0x80)) {
        this.pos = pos;
        return BigInt(low);
      }
    }
    let value = BigInt(low);
    for (; i < 10; i++) {
      if (pos >= this.end) throw truncated(this.base + start, 'u64');
      const byte = b[pos++]!;
      if (i === 9) {
        if (byte & 0x80) throw overflow(this.base + start, 'u64', 'at most 10 bytes');
        if (byte > 0x01) throw overflow(this.base + start, 'u64', 'the 10th byte to carry at most 1 bit');
      }
      value |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if (!(byte & 0x80)) {
        this.pos = pos;
        return value;
      }
    }
    /* c8 ignore next */
    throw overflow(this.base + start, 'u64', 'at most 10 bytes');
  }
}
