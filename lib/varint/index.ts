/**
 * LEB128 and zigzag: single values (leb128.ts), batches that cross N-API once
 * (native twin chosen by the backend probe), and fixed-width slots (slots.ts).
 */
import { ErrorCode, ProfpackError, invalidArgument } from '../errors';
import { Scratch } from '../scratch';
import * as js from './js';
import { VarintKind, kindInfo, type BatchArray } from './kinds';
import { varintNative } from './native';

export * from './leb128';
export { SlotWriter, BufferSink, type PatchableSink, type Slot, type SlotWidth } from './slots';
export { VarintKind } from './kinds';

const impl: Pick<typeof js, 'decodeMany' | 'encodeMany'> = varintNative ?? js;

export interface DecodedMany<T extends BatchArray> {
  values: T;
  /** Offset just after the last varint read. */
  end: number;
}

function checkRange(bytes: Uint8Array, offset: number, count: number): void {
  if (!(bytes instanceof Uint8Array))
    throw new ProfpackError('bytes must be a Uint8Array', { code: ErrorCode.INVALID_ARGUMENT });
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
    throw new ProfpackError(`offset ${offset} is outside the buffer of ${bytes.length} bytes`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  }
  if (!Number.isInteger(count) || count < 0) {
    throw new ProfpackError(`count must be a non-negative integer, got ${count}`, { code: ErrorCode.INVALID_ARGUMENT });
  }
  // Every varint is at least one byte: a count the input cannot hold is truncated input.
  if (count > bytes.length - offset) {
    throw new ProfpackError(`${count} varints cannot fit in the ${bytes.length - offset} bytes left`, {
      code: ErrorCode.VARINT_TRUNCATED,
      offset: bytes.length,
      expected: `at least ${count} more bytes`,
    });
  }
}

const arrayClasses = { Uint32Array, Int32Array, BigUint64Array, BigInt64Array } as const;

/** The typed array of the kind, exactly: the native twin reads its raw words, the JS twin its elements. */
function checkBatchArray(kind: VarintKind, array: unknown, name: 'values' | 'out'): void {
  const wanted = kindInfo[kind].array;
  if (!(array instanceof arrayClasses[wanted])) {
    const got = array === null ? 'null' : ArrayBuffer.isView(array) ? array.constructor.name : typeof array;
    throw invalidArgument(`${name} must be a ${wanted}, not ${got}`, wanted);
  }
}

function allocate<T extends BatchArray>(kind: VarintKind, count: number): T {
  switch (kindInfo[kind].array) {
    case 'Uint32Array':
      return new Uint32Array(count) as T;
    case 'Int32Array':
      return new Int32Array(count) as T;
    case 'BigUint64Array':
      return new BigUint64Array(count) as T;
    default:
      return new BigInt64Array(count) as T;
  }
}

/**
 * @internal The argument checks of decode…Many, shared by both backends so a
 * wrong argument is the same ProfpackError whichever decodes: returns the out array.
 */
export function checkDecodeMany<T extends BatchArray>(
  kind: VarintKind,
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: T,
): T {
  checkRange(bytes, offset, count);
  if (out !== undefined) checkBatchArray(kind, out, 'out');
  const values = out ?? allocate<T>(kind, count);
  if (values.length < count)
    throw new ProfpackError(`out holds ${values.length} values, fewer than ${count}`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  return values;
}

function decodeManyOf<T extends BatchArray>(
  kind: VarintKind,
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: T,
): DecodedMany<T> {
  const values = checkDecodeMany(kind, bytes, offset, count, out);
  const end = impl.decodeMany(kind, bytes, offset, count, values);
  return { values, end };
}

/** Worst-case output of the allocating encodes (lib/scratch.ts says why). */
const encodeScratch = new Scratch(32 << 20);

function encodeManyOf(kind: VarintKind, values: BatchArray): Uint8Array {
  checkBatchArray(kind, values, 'values');
  const need = values.length * kindInfo[kind].maxBytes;
  const out = encodeScratch.bytes(need) ?? new Uint8Array(need);
  return out.slice(0, impl.encodeMany(kind, values, out, 0));
}

/** @internal The argument checks of encode…ManyInto, shared by both backends (see checkDecodeMany). */
export function checkEncodeManyInto(kind: VarintKind, values: BatchArray, out: Uint8Array, offset: number): void {
  // The values first: the JS twin would write garbage for a Float64Array, the native one throw a bare TypeError.
  checkBatchArray(kind, values, 'values');
  if (!(out instanceof Uint8Array))
    throw new ProfpackError('out must be a Uint8Array', { code: ErrorCode.INVALID_ARGUMENT, expected: 'Uint8Array' });
  if (!Number.isInteger(offset) || offset < 0 || offset > out.length) {
    throw new ProfpackError(`offset ${offset} is outside the buffer of ${out.length} bytes`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  }
  const need = values.length * kindInfo[kind].maxBytes;
  if (out.length - offset < need) {
    throw new ProfpackError(
      `out has ${out.length - offset} bytes after offset ${offset}, fewer than the worst case ${need}`,
      {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `at least ${need} bytes (values.length × ${kindInfo[kind].maxBytes})`,
      },
    );
  }
}

function encodeManyInto(kind: VarintKind, values: BatchArray, out: Uint8Array, offset: number): number {
  checkEncodeManyInto(kind, values, out, offset);
  return impl.encodeMany(kind, values, out, offset);
}

/**
 * Decodes `count` unsigned u32 varints starting at `offset`, in one N-API
 * crossing. Passing `out` is the output-buffer form: values land in
 * out[0..count) and nothing is allocated (every decode…Many takes one).
 */
export function decodeU32Many(
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: Uint32Array,
): DecodedMany<Uint32Array> {
  return decodeManyOf(VarintKind.U32, bytes, offset, count, out);
}
export function decodeU64Many(
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: BigUint64Array,
): DecodedMany<BigUint64Array> {
  return decodeManyOf(VarintKind.U64, bytes, offset, count, out);
}
export function decodeI32Many(
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: Int32Array,
): DecodedMany<Int32Array> {
  return decodeManyOf(VarintKind.I32, bytes, offset, count, out);
}
export function decodeI64Many(
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: BigInt64Array,
): DecodedMany<BigInt64Array> {
  return decodeManyOf(VarintKind.I64, bytes, offset, count, out);
}
export function decodeZigzag32Many(
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: Int32Array,
): DecodedMany<Int32Array> {
  return decodeManyOf(VarintKind.Zigzag32, bytes, offset, count, out);
}
export function decodeZigzag64Many(
  bytes: Uint8Array,
  offset: number,
  count: number,
  out?: BigInt64Array,
): DecodedMany<BigInt64Array> {
  return decodeManyOf(VarintKind.Zigzag64, bytes, offset, count, out);
}

/** Encodes a typed array as consecutive varints, in one N-API crossing. */
export function encodeU32Many(values: Uint32Array): Uint8Array {
  return encodeManyOf(VarintKind.U32, values);
}
export function encodeU64Many(values: BigUint64Array): Uint8Array {
  return encodeManyOf(VarintKind.U64, values);
}
export function encodeI32Many(values: Int32Array): Uint8Array {
  return encodeManyOf(VarintKind.I32, values);
}
export function encodeI64Many(values: BigInt64Array): Uint8Array {
  return encodeManyOf(VarintKind.I64, values);
}
export function encodeZigzag32Many(values: Int32Array): Uint8Array {
  return encodeManyOf(VarintKind.Zigzag32, values);
}
export function encodeZigzag64Many(values: BigInt64Array): Uint8Array {
  return encodeManyOf(VarintKind.Zigzag64, values);
}

/**
 * Output-buffer forms of the encoders: write at out[offset..) and return the
 * offset after the last byte. `out` must hold the worst case after `offset`
 * (values.length × 5 bytes for 32-bit kinds, × 10 for 64-bit ones).
 */
function intoFor<T extends BatchArray>(kind: VarintKind): (values: T, out: Uint8Array, offset?: number) => number {
  return (values, out, offset = 0) => encodeManyInto(kind, values, out, offset);
}
export const encodeU32ManyInto = intoFor<Uint32Array>(VarintKind.U32);
export const encodeU64ManyInto = intoFor<BigUint64Array>(VarintKind.U64);
export const encodeI32ManyInto = intoFor<Int32Array>(VarintKind.I32);
export const encodeI64ManyInto = intoFor<BigInt64Array>(VarintKind.I64);
export const encodeZigzag32ManyInto = intoFor<Int32Array>(VarintKind.Zigzag32);
export const encodeZigzag64ManyInto = intoFor<BigInt64Array>(VarintKind.Zigzag64);
