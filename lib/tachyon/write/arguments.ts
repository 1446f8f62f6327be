/**
 * ProfileWriter's argument conversion, as CPython's BinaryWriter converts its
 * Python arguments: u64 / u32 values (a value out of range is a format limit,
 * like CPython's OverflowError), status bytes, the options' mode and features.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { TWO_POW_32 } from '../../varint/index';
import { MAX_PROFILING_MODE, PROFILING_MODE_NAMES, ProfilingConfig, U32_MAX, U64_MAX } from '../format';
import type { StackCoding } from '../codec/index';
import type { ProfileWriterOptions } from './types';

export function invalid(message: string, expected: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.INVALID_ARGUMENT, expected });
}

export function limit(message: string, expected: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.TACHYON_WRITE_LIMIT, expected });
}

/** A u64 argument as u32 halves; negative or >= 2^64 is a format limit, like CPython's OverflowError. */
export function u64Halves(value: unknown, what: string, out: Uint32Array, at: number): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      if (Number.isInteger(value) && value < 0) throw limit(`${what} ${value} is negative`, 'a u64');
      throw invalid(`${what} must be an integer (a bigint beyond 2^53), got ${value}`, 'a safe integer or a bigint');
    }
    if (value < 0) throw limit(`${what} ${value} is negative`, 'a u64');
    out[at] = Math.floor(value / TWO_POW_32);
    out[at + 1] = value >>> 0;
    return;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > U64_MAX) throw limit(`${what} ${value} does not fit a u64`, 'an integer in [0, 2^64)');
    out[at] = Number(value >> 32n);
    out[at + 1] = Number(value & 0xffff_ffffn);
    return;
  }
  throw invalid(`${what} must be a number or bigint, got ${typeof value}`, 'a non-negative integer');
}

/** A thread id seen by writeStack, its halves, and the thread id that followed it last time. */
class SeenThreadId {
  next: SeenThreadId | null = null;

  constructor(
    readonly value: number | bigint,
    readonly hi: number,
    readonly lo: number,
  ) {}
}

/** Where StackHalves puts its halves (the writer's StackRecord). */
export interface U64HalvesOut {
  tidHi: number;
  tidLo: number;
  tsHi: number;
  tsLo: number;
}

/**
 * writeStack's thread id and timestamp as u32 halves (u64Halves's checks, in that order), each value converted once
 * while the calls keep their pattern: the threads of a tick share its timestamp, and a profiler names its threads
 * in the same order tick after tick, so the id after the previous one is tried before a map of those seen.
 */
export class StackHalves {
  private readonly seen = new Map<number | bigint, SeenThreadId>();
  private last: SeenThreadId | null = null;
  private timestamp: unknown = undefined;
  private tsHi = 0;
  private tsLo = 0;
  private readonly scratch = new Uint32Array(2);

  fill(threadId: unknown, timestampUs: unknown, out: U64HalvesOut): void {
    const last = this.last;
    let t = last === null ? null : last.next;
    if (t === null || t.value !== threadId) {
      t = this.seen.get(threadId as number | bigint) ?? this.add(threadId);
      if (last !== null) last.next = t;
    }
    if (timestampUs !== this.timestamp) {
      u64Halves(timestampUs, 'timestampUs', this.scratch, 0);
      this.tsHi = this.scratch[0]!;
      this.tsLo = this.scratch[1]!;
      this.timestamp = timestampUs;
    }
    this.last = t;
    out.tidHi = t.hi;
    out.tidLo = t.lo;
    out.tsHi = this.tsHi;
    out.tsLo = this.tsLo;
  }

  private add(threadId: unknown): SeenThreadId {
    u64Halves(threadId, 'threadId', this.scratch, 0);
    const t = new SeenThreadId(threadId as number | bigint, this.scratch[0]!, this.scratch[1]!);
    this.seen.set(t.value, t);
    return t;
  }
}

export function u32Value(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (value < 0 || value > U32_MAX) throw limit(`${what} ${value} does not fit a u32`, 'an integer in [0, 2^32)');
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(U32_MAX))
      throw limit(`${what} ${value} does not fit a u32`, 'an integer in [0, 2^32)');
    return Number(value);
  }
  throw invalid(`${what} must be an integer, got ${String(value)}`, 'an integer in [0, 2^32)');
}

/** CPython stores the low 8 bits of the status int (259 -> 3, -1 -> 255). */
export function statusByte(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (value >= -0x8000_0000 && value <= 0x7fff_ffff) return value & 0xff;
    return Number(BigInt.asUintN(8, BigInt(value)));
  }
  if (typeof value === 'bigint') return Number(BigInt.asUintN(8, value));
  throw invalid(`status must be an integer, got ${String(value)}`, 'an integer (its low 8 bits are stored)');
}

export function finiteNonNegative(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalid(`${what} must be a finite non-negative value, got ${String(value)}`, 'a finite number >= 0');
  }
  return value;
}

export function formatOptions(options: ProfileWriterOptions): { formatVersion: 1 | 2; stackCoding: StackCoding } {
  const formatVersion = options.formatVersion ?? 1;
  if (formatVersion !== 1 && formatVersion !== 2)
    throw invalid(`formatVersion must be 1 or 2, not ${String(formatVersion)}`, '1 (CPython 3.15, the default) | 2');
  const stackCoding = options.stackCoding;
  if (stackCoding !== undefined) {
    if (formatVersion !== 2)
      throw invalid(
        'stackCoding applies to formatVersion 2 only',
        'formatVersion: 2 with stackCoding, or no stackCoding',
      );
    if (stackCoding !== 'predict' && stackCoding !== 'stacktable')
      throw invalid(
        `stackCoding must be 'predict' or 'stacktable', not ${String(stackCoding)}`,
        "'predict' | 'stacktable'",
      );
  }
  return { formatVersion, stackCoding: stackCoding ?? 'stacktable' };
}

export function configWord(
  mode: ProfileWriterOptions['mode'],
  features: ProfileWriterOptions['captureFeatures'],
): number {
  let word = 0;
  if (mode !== undefined && mode !== null && mode !== -1) {
    const m = typeof mode === 'string' ? PROFILING_MODE_NAMES.indexOf(mode) : mode;
    if (!Number.isInteger(m) || m < 0 || m > MAX_PROFILING_MODE) {
      throw invalid(
        `invalid profiling mode ${String(mode)}`,
        `-1..4 or ${PROFILING_MODE_NAMES.map((n) => `'${n}'`).join(' | ')}`,
      );
    }
    word |= m + 1;
  }
  if (features !== undefined && features !== null && features !== -1) {
    if (!Number.isInteger(features) || features < 0 || features > ProfilingConfig.featuresMask) {
      throw invalid(`invalid capture features ${String(features)}`, '-1..31');
    }
    word |= ProfilingConfig.featuresKnown | (features << ProfilingConfig.featuresShift);
  }
  return word;
}

/**
 * The first of ids[0 .. depth) that is >= count, or -1: a Uint32Array holds only integers >= 0, so one compare per id
 * (writeStack's main JS cost).
 */
export function firstIdAtOrAbove(ids: Uint32Array, depth: number, count: number): number {
  for (let i = 0; i < depth; i++) if (ids[i]! >= count) return i;
  return -1;
}

/** The first of ids[0 .. depth) that is not an integer in [0, count), or -1. */
export function firstBadId(ids: readonly number[], depth: number, count: number): number {
  for (let i = 0; i < depth; i++) {
    const id = ids[i]!;
    if (!(id < count) || !(id >= 0) || !Number.isInteger(id)) return i;
  }
  return -1;
}
