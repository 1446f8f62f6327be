/**
 * Where the shared vectors and data live (read in place, never copied), and a
 * JSON parser that keeps integers beyond 2^53 exact (as bigint).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');
/** ../shared beside the checkout (CI clones the repo with shared/ beside it). */
export const sharedDir = path.resolve(repoRoot, '..', 'shared');

export function sharedPath(...parts: string[]): string {
  return path.join(sharedDir, ...parts);
}

/**
 * How much slower than native this run is: 1 natively, up to 10 under
 * emulation (scripts/qemu-arm64.sh sets PROFPACK_TEST_TIMEOUT_SCALE, which
 * also stretches vitest's timeouts). Tests that time a program, or spin for
 * a while to collect samples, stretch by it.
 */
export const SLOWDOWN = Math.min(10, Math.max(1, Number(process.env.PROFPACK_TEST_TIMEOUT_SCALE ?? '1') || 1));

/** Under qemu-user (scripts/qemu-arm64.sh) a process's RSS also holds the emulator's translated code and heap. */
export const EMULATED = process.env.PROFPACK_EMULATED !== undefined;

const BIG_MARK = '\u0000bigint:';

/**
 * JSON.parse, except that integer literals outside the safe range come back
 * as bigint (Node 20's JSON.parse cannot see a number's source text).
 */
export function parseJsonExact(text: string): unknown {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      const literal = text.slice(i, j);
      const isInteger = /^-?\d+$/.test(literal);
      out += isInteger && !Number.isSafeInteger(Number(literal)) ? JSON.stringify(BIG_MARK + literal) : literal;
      i = j;
    } else {
      out += ch;
      i++;
    }
  }
  return JSON.parse(out, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(BIG_MARK) ? BigInt(value.slice(BIG_MARK.length)) : value,
  );
}

export function readJsonExact(file: string): unknown {
  return parseJsonExact(readFileSync(file, 'utf8'));
}
