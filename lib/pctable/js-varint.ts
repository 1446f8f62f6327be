/**
 * Pure-JS twin of native/pctable's varint-delta tables: Go's pcvalue encoding
 * read with runtime.pcvalue's rules, bounds-checked byte by byte. js.ts (the
 * linear index) builds on it and re-exports its public part.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { MAX_VARINT_BYTES, START_VALUE, type VarintRun } from './format';

export interface DecodedRuns {
  values: Int32Array;
  /** End PC (bytes, exclusive) of each run; run i starts at ends[i - 1] (or 0). */
  ends: Uint32Array;
  /** Offset just past the 0x00 terminator. */
  end: number;
}

export function fail(code: string, message: string, offset: number, expected: string): ProfpackError {
  return new ProfpackError(message, { code, offset, expected });
}

/** Where the walk stands; module-level so the hot lookup allocates nothing. */
export const walk = { pos: 0, value: 0, start: 0, end: 0 };

/** A varint of two or more bytes at `start` (1-byte ones are decoded inline); sets walk.pos. */
function readUvarintSlow(bytes: Uint8Array, start: number, limit: number, base: number, what: string): number {
  let pos = start;
  let value = 0;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    if (pos >= limit) {
      throw fail(
        ErrorCode.PCTABLE_TRUNCATED,
        `pcvalue table ends inside a ${what}`,
        start - base,
        'a varint byte without the continuation bit',
      );
    }
    const byte = bytes[pos++]!;
    if (i === MAX_VARINT_BYTES - 1) {
      if (byte > 0x0f)
        throw fail(
          ErrorCode.PCTABLE_VARINT_OVERFLOW,
          `pcvalue ${what} does not fit 32 bits`,
          start - base,
          'at most 5 bytes, the 5th at most 0x0f',
        );
      walk.pos = pos;
      return (value | (byte << 28)) >>> 0;
    }
    value |= (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      walk.pos = pos;
      return value >>> 0;
    }
  }
  /* c8 ignore next */
  throw fail(
    ErrorCode.PCTABLE_VARINT_OVERFLOW,
    `pcvalue ${what} does not fit 32 bits`,
    start - base,
    'at most 5 bytes',
  );
}

/**
 * Steps through runs (runtime step()) until one ends beyond `target` (true;
 * walk.value/start/end describe it) or the terminator (false; walk.pos is just
 * past it). The table is bytes[base, limit); error offsets are relative to base.
 * With `values`/`ends`, records every run on the way.
 */
export function walkVarint(
  bytes: Uint8Array,
  base: number,
  limit: number,
  quantum: number,
  target: number,
  values?: number[],
  ends?: number[],
): boolean {
  let pos = base;
  let value = START_VALUE;
  let start = 0;
  let end = 0;
  for (;;) {
    if (pos >= limit) {
      throw fail(
        ErrorCode.PCTABLE_TRUNCATED,
        'pcvalue table ends without its 0x00 terminator',
        pos - base,
        'another (value delta, run length) record or the 0x00 terminator',
      );
    }
    // Only a literal 0x00 terminates, and not as the first byte: value -1 at entry.
    let zigzag = bytes[pos]!;
    if (zigzag === 0 && pos !== base) {
      walk.pos = pos + 1 - base;
      walk.value = value;
      walk.start = start;
      walk.end = end;
      return false;
    }
    // ~70% of pcvalue varints are one byte (runtime.step's comment).
    if (zigzag < 0x80) pos++;
    else {
      zigzag = readUvarintSlow(bytes, pos, limit, base, 'value delta');
      pos = walk.pos;
    }
    value = (value + ((zigzag >>> 1) ^ -(zigzag & 1))) | 0;
    const runStart = pos;
    let runQuanta = pos < limit ? bytes[pos]! : 0x80;
    if (runQuanta < 0x80) pos++;
    else {
      runQuanta = readUvarintSlow(bytes, pos, limit, base, 'run length');
      pos = walk.pos;
    }
    // The compiler never emits an empty run; rejecting them keeps "first record"
    // (pcvaluetab: pos == 0) and "first PC" (runtime: pc == entry) the same rule.
    if (runQuanta === 0)
      throw fail(
        ErrorCode.PCTABLE_EMPTY_RUN,
        'pcvalue table has a run of length 0',
        runStart - base,
        'a run length >= 1',
      );
    start = end;
    end += runQuanta * quantum;
    if (end > 0xffff_ffff)
      throw fail(
        ErrorCode.PCTABLE_PC_OVERFLOW,
        'pcvalue table covers more than 2^32 - 1 bytes of PCs',
        runStart - base,
        'PCs below 2^32',
      );
    if (values !== undefined) {
      values.push(value);
      ends!.push(end);
    }
    if (target < end) {
      walk.pos = pos - base;
      walk.value = value;
      walk.start = start;
      walk.end = end;
      return true;
    }
  }
}

export function decodeVarint(bytes: Uint8Array, quantum: number): DecodedRuns {
  const values: number[] = [];
  const ends: number[] = [];
  walkVarint(bytes, 0, bytes.length, quantum, Infinity, values, ends);
  return { values: Int32Array.from(values), ends: Uint32Array.from(ends), end: walk.pos };
}

/** runtime.pcvalue: the run holding `pc`, or null past the table. Reads only up to that run. */
export function lookupVarint(bytes: Uint8Array, pc: number, quantum: number): VarintRun | null {
  if (!walkVarint(bytes, 0, bytes.length, quantum, pc)) return null;
  return { value: walk.value, startPc: walk.start, endPc: walk.end };
}

/** The value only, allocation-free (NaN past the table): the benchmark's varint path. */
export function lookupVarintValue(bytes: Uint8Array, pc: number, quantum: number): number {
  return walkVarint(bytes, 0, bytes.length, quantum, pc) ? walk.value : NaN;
}
