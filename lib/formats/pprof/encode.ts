/**
 * profile.proto on the way out: varints (int64 as protobuf writes it, u64
 * from 32-bit halves), fields, Label messages written in place, the string
 * table. write.ts drives them per record, so nothing here allocates
 * for a number that fits in 2^53.
 */
import { ByteSink } from '../../byte-sink';
import { LabelField, SampleField, WireType } from './proto';

export const INT64_MAX = (1n << 63n) - 1n;
export const TWO_POW_63 = 2 ** 63;
export const TWO_POW_32 = 2 ** 32;

export const tagOf = (field: number, wireType: number): number => (field << 3) | wireType;

/** An int64 varint (negative values take 10 bytes, as protobuf encodes them). */
export function int64(sink: ByteSink, value: number): void {
  if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) sink.uvarint(value);
  else if (value > 0) sink.uvarint64(value >= TWO_POW_63 ? INT64_MAX : BigInt(value));
  else sink.uvarint64(BigInt.asUintN(64, value <= -TWO_POW_63 ? -INT64_MAX - 1n : BigInt(value)));
}

export function varintField(sink: ByteSink, field: number, value: number): void {
  if (value === 0) return;
  sink.uvarint(tagOf(field, WireType.varint));
  int64(sink, value);
}

export function bytesField(sink: ByteSink, field: number, payload: Uint8Array): void {
  sink.uvarint(tagOf(field, WireType.bytes));
  sink.uvarint(payload.length);
  sink.append(payload);
}

export class PprofStringTable {
  readonly list: string[] = [''];
  private readonly ids = new Map<string, number>([['', 0]]);

  id(s: string): number {
    let i = this.ids.get(s);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(s);
      this.ids.set(s, i);
    }
    return i;
  }
}

/** Bytes of a varint of a non-negative integer below 2^53. */
export function uvarintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** A numeric Label message in place (no scratch buffer: this runs once or twice per record). */
export function labelNum(sink: ByteSink, key: number, num: number | bigint, unit: number): void {
  if (typeof num === 'bigint' || num < 0 || num > Number.MAX_SAFE_INTEGER) {
    const body = new ByteSink(32);
    varintField(body, LabelField.key, key);
    body.uvarint(tagOf(LabelField.num, WireType.varint));
    body.uvarint64(BigInt.asUintN(64, BigInt(num)));
    varintField(body, LabelField.numUnit, unit);
    bytesField(sink, SampleField.label, body.view());
    return;
  }
  const size =
    (key === 0 ? 0 : 1 + uvarintSize(key)) +
    (num === 0 ? 0 : 1 + uvarintSize(num)) +
    (unit === 0 ? 0 : 1 + uvarintSize(unit));
  sink.uvarint(tagOf(SampleField.label, WireType.bytes));
  sink.uvarint(size);
  varintField(sink, LabelField.key, key);
  varintField(sink, LabelField.num, num);
  varintField(sink, LabelField.numUnit, unit);
}

/** Bytes of the varint of the u64 hi * 2^32 + lo. */
export function varint64Size(lo: number, hi: number): number {
  if (hi === 0) return uvarintSize(lo);
  let size = 5;
  for (let h = hi >>> 3; h !== 0; h >>>= 7) size++;
  return size;
}

/** The varint of the u64 hi * 2^32 + lo (both halves below 2^32). */
export function varint64(sink: ByteSink, lo: number, hi: number): void {
  if (hi === 0) {
    sink.uvarint(lo);
    return;
  }
  sink.reserve(10);
  const b = sink.bytes;
  let n = sink.length;
  for (let i = 0; i < 4; i++) {
    b[n++] = (lo & 0x7f) | 0x80;
    lo >>>= 7;
  }
  // Bits 28-34: the last 4 of lo and the first 3 of hi.
  let rest = hi;
  let byte = (lo & 0x0f) | ((rest & 0x07) << 4);
  rest >>>= 3;
  while (rest !== 0) {
    b[n++] = byte | 0x80;
    byte = rest & 0x7f;
    rest >>>= 7;
  }
  b[n++] = byte;
  sink.length = n;
}

/** A numeric Label whose number is the u64 hi * 2^32 + lo. */
export function labelNumParts(sink: ByteSink, key: number, lo: number, hi: number, unit: number): void {
  const size =
    (key === 0 ? 0 : 1 + uvarintSize(key)) + 1 + varint64Size(lo, hi) + (unit === 0 ? 0 : 1 + uvarintSize(unit));
  sink.uvarint(tagOf(SampleField.label, WireType.bytes));
  sink.uvarint(size);
  varintField(sink, LabelField.key, key);
  sink.uvarint(tagOf(LabelField.num, WireType.varint));
  varint64(sink, lo, hi);
  varintField(sink, LabelField.numUnit, unit);
}

export function labelStr(sink: ByteSink, key: number, str: number): void {
  sink.uvarint(tagOf(SampleField.label, WireType.bytes));
  sink.uvarint((key === 0 ? 0 : 1 + uvarintSize(key)) + (str === 0 ? 0 : 1 + uvarintSize(str)));
  varintField(sink, LabelField.key, key);
  varintField(sink, LabelField.str, str);
}

/** Appends `length` bytes of `from` from `start` on (a loop beats subarray + set for the short runs here). */
export function copyInto(sink: ByteSink, from: Uint8Array, length: number, start = 0): void {
  if (length > 64) {
    // A whole array is set as it is: no view object per record.
    sink.append(start === 0 && length === from.length ? from : from.subarray(start, start + length));
    return;
  }
  sink.reserve(length);
  const to = sink.bytes;
  let at = sink.length;
  for (let i = start; i < start + length; i++) to[at++] = from[i]!;
  sink.length = at;
}
