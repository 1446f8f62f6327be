/**
 * The library's one growable byte buffer (the Tachyon writer's tables, the
 * version-2 codings, BufferSink's slots, pprof's protobuf). The hot paths inline LEB128
 * (lib/varint/leb128.ts has the single-value reference forms; these agree with it byte
 * for byte). It sits beside lib/ entry files, not in lib/varint, so importing it adds
 * nothing to the public `varint` namespace.
 */

/** The library's growable byte buffer: append-only, doubles when full, LEB128 appenders inline. */
export class ByteSink {
  bytes: Uint8Array;
  length = 0;

  constructor(initialCapacity = 256) {
    this.bytes = new Uint8Array(Math.max(16, initialCapacity));
  }

  reserve(extra: number): void {
    const need = this.length + extra;
    if (need <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < need) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  u8(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value & 0xff;
  }

  /** u16 little-endian (memtrace's codeword width). */
  u16(value: number): void {
    this.reserve(2);
    this.bytes[this.length++] = value & 0xff;
    this.bytes[this.length++] = (value >>> 8) & 0xff;
  }

  /** Unsigned LEB128 of a non-negative integer up to 2^53 (callers keep u32 values u32). */
  uvarint(value: number): void {
    this.reserve(8);
    const b = this.bytes;
    let n = this.length;
    if (value < 0x80) {
      b[n++] = value;
    } else {
      while (value >= 0x80) {
        b[n++] = (value & 0x7f) | 0x80;
        value = value > 0xffff_ffff ? Math.floor(value / 128) : value >>> 7;
      }
      b[n++] = value;
    }
    this.length = n;
  }

  /** zigzag + LEB128 of an int32 (version 1's frame table stores positions so). */
  zigzag32(value: number): void {
    this.uvarint(((value << 1) ^ (value >> 31)) >>> 0);
  }

  /** Unsigned LEB128 of a u64 given as bigint (10 bytes at most). */
  uvarint64(value: bigint): void {
    if (value < 0x20_0000_0000_0000n) {
      this.uvarint(Number(value));
      return;
    }
    this.reserve(10);
    while (value >= 0x80n) {
      this.bytes[this.length++] = Number(value & 0x7fn) | 0x80;
      value >>= 7n;
    }
    this.bytes[this.length++] = Number(value);
  }

  append(data: Uint8Array): void {
    this.reserve(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }

  /** A view of what was written (valid until the next write). */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** A copy of what was written. */
  take(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  clear(): void {
    this.length = 0;
  }
}
