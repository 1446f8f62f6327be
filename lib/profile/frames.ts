/** Frame helpers every format shares: names, labels, Tachyon's "absent" positions. */
import { ThreadStatus } from './status';
import type { Frame } from './types';

/** The name shown for a function without one, as V8 and Chrome show it. */
export const ANONYMOUS = '(anonymous)';

export function anonymousName(funcname: string): string {
  return funcname === '' ? ANONYMOUS : funcname;
}

export function makeFrame(
  funcname: string,
  filename: string,
  lineno: number | null = null,
  column: number | null = null,
): Frame {
  return { filename, funcname, lineno, endLineno: null, column, endColumn: null, opcode: null };
}

const absent = (v: number | null): number | null => (v === -1 ? null : v);

/**
 * The model's `null` is Tachyon's -1 ("no position"). CPython's reader hands
 * a stored column of -1 back as -1 when the line is known, so frames read
 * from Tachyon go through this to mean the same as frames from other formats.
 */
export function normalizeFrame(f: Frame): Frame {
  return {
    filename: f.filename,
    funcname: f.funcname,
    lineno: absent(f.lineno),
    endLineno: absent(f.endLineno),
    column: absent(f.column),
    endColumn: absent(f.endColumn),
    opcode: f.opcode,
  };
}

/** Human label of a frame, as flame-graph tools show it. */
export function frameLabel(f: Frame): string {
  const name = anonymousName(f.funcname);
  if (f.filename === '') return name;
  return f.lineno === null ? `${name} (${f.filename})` : `${name} (${f.filename}:${f.lineno})`;
}

/**
 * Whether a start time in µs reads as the Unix epoch: anything after
 * 2001-09-09 (10^15 µs). Monotonic clocks count from boot, and no machine has
 * been up for 31 years, so the two never overlap.
 */
export function isEpochUs(us: bigint): boolean {
  return us >= 1_000_000_000_000_000n;
}

/**
 * Status bits profpack writes for Node recordings. Tachyon's status byte
 * leaves bits 6-7 unused and CPython's reader passes them through unchanged
 * (tachyon-format.md §3.2), so V8's "(garbage collector)" samples are marked
 * with bit 6 next to ON_CPU.
 */
export const NodeStatus = {
  ...ThreadStatus,
  InGc: 64,
} as const;
