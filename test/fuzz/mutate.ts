/**
 * The JS mutation fuzzer's engine: a seeded PRNG, byte-level mutators (bit
 * flips, truncations, splices, range copies/deletes) and field-aware ones
 * driven by hints from each format (fixed-width fields such as counts and
 * offsets, varint positions, record-kind bytes). Deterministic for a seed, so
 * a failure prints the seed and the input that reproduce it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { isProfpackError } from '../../lib/errors';
import { backend } from '../../lib/backend';
import { repoRoot, SLOWDOWN } from '../support/environment';
import { concatBytes } from '../../lib/tachyon/file/journal';

/** xorshift128+ reduced to 32-bit outputs: fast, seedable, good enough for mutation. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  constructor(seed: number) {
    // splitmix32 to spread a small seed over the state
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next() | 1;
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }
  /** xoshiro128** step. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }
  /** Uniform integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.u32() / 4294967296) * n);
  }
  chance(p: number): boolean {
    return this.u32() / 4294967296 < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** A fixed-width integer field of the format (count, offset, length...). */
export interface FixedField {
  offset: number;
  size: 1 | 2 | 4 | 8;
  littleEndian: boolean;
}

/** Where the format keeps things worth editing on purpose. */
export interface FieldHints {
  fixed?: FixedField[];
  /** Offsets where a varint starts. */
  varints?: number[];
  /** Bytes that select a record kind / variant, and the values that are valid there. */
  kinds?: { offset: number; valid: readonly number[] }[];
}

export interface Seed {
  name: string;
  bytes: Uint8Array;
  hints?: FieldHints;
}

const INTERESTING_BYTES = [0x00, 0x01, 0x02, 0x03, 0x04, 0x3f, 0x40, 0x7f, 0x80, 0x81, 0xfe, 0xff];

/** Varint encodings that stress decoders: overlong, boundary, too long, unterminated. */
const INTERESTING_VARINTS: readonly number[][] = [
  [0x00],
  [0x01],
  [0x7f],
  [0x80, 0x01],
  [0xff, 0x7f],
  [0x80, 0x80, 0x80, 0x80, 0x00], // overlong zero (5 bytes)
  [0xff, 0xff, 0xff, 0xff, 0x0f], // u32 max
  [0xff, 0xff, 0xff, 0xff, 0x1f], // u32 max + 1 bit
  [0x80, 0x80, 0x80, 0x80, 0x10], // 2^32
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // u64 max
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], // 2^64 overflow
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // 11 bytes
  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], // 12-byte overlong zero
  [0xc0, 0xc4, 0x07], // 123456-ish
  [0x80], // unterminated at the end of the field
];

function fieldValues(old: bigint, size: number, fileSize: number, rng: Rng): bigint[] {
  const max = (1n << BigInt(8 * size)) - 1n;
  const fs = BigInt(fileSize);
  return [
    0n,
    1n,
    max,
    max - 1n,
    max >> 1n,
    old + 1n,
    old - 1n,
    old * 2n,
    old >> 1n,
    fs,
    fs - 1n,
    fs + 1n,
    fs - 32n,
    64n,
    63n,
    BigInt(rng.u32()),
    1n << 31n,
    1n << 32n,
  ].map((v) => BigInt.asUintN(8 * size, v));
}

function readField(bytes: Uint8Array, f: FixedField): bigint {
  let v = 0n;
  for (let i = 0; i < f.size; i++) {
    const b = BigInt(bytes[f.offset + (f.littleEndian ? i : f.size - 1 - i)]!);
    v |= b << BigInt(8 * i);
  }
  return v;
}

function writeField(bytes: Uint8Array, f: FixedField, value: bigint): void {
  for (let i = 0; i < f.size; i++) {
    bytes[f.offset + (f.littleEndian ? i : f.size - 1 - i)] = Number((value >> BigInt(8 * i)) & 0xffn);
  }
}

function varintEnd(bytes: Uint8Array, start: number): number {
  let p = start;
  while (p < bytes.length && p - start < 12 && bytes[p]! & 0x80) p++;
  return Math.min(p + 1, bytes.length);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return concatBytes(parts);
}

/** One mutation of `input`; `others` feed splices. */
export function mutateOnce(rng: Rng, input: Uint8Array, others: readonly Seed[], hints?: FieldHints): Uint8Array {
  let bytes: Uint8Array = input.slice();
  const n = bytes.length;
  const op = rng.int(12);
  switch (op) {
    case 0: // bit flips
    case 1: {
      if (n === 0) return bytes;
      const flips = 1 + rng.int(8);
      for (let i = 0; i < flips; i++) {
        const at = rng.int(n);
        bytes[at] = bytes[at]! ^ (1 << rng.int(8));
      }
      return bytes;
    }
    case 2: {
      if (n === 0) return bytes;
      bytes[rng.int(n)] = rng.chance(0.5) ? rng.pick(INTERESTING_BYTES) : rng.int(256);
      return bytes;
    }
    case 3: // truncation, often near the end where footers live
      return bytes.slice(0, rng.chance(0.5) ? rng.int(n + 1) : Math.max(0, n - 1 - rng.int(64)));
    case 4: {
      // splice: overwrite or insert a range from another input (or this one)
      const donor = others.length > 0 && rng.chance(0.7) ? rng.pick(others).bytes : input;
      if (donor.length === 0) return bytes;
      const from = rng.int(donor.length);
      const len = 1 + rng.int(Math.min(256, donor.length - from));
      const piece = donor.slice(from, from + len);
      const at = rng.int(n + 1);
      if (rng.chance(0.5)) return concat(bytes.slice(0, at), piece, bytes.slice(at));
      bytes = concat(bytes.slice(0, at), piece, bytes.slice(Math.min(n, at + piece.length)));
      return bytes;
    }
    case 5: {
      // delete a range
      if (n === 0) return bytes;
      const at = rng.int(n);
      const len = 1 + rng.int(Math.min(64, n - at));
      return concat(bytes.slice(0, at), bytes.slice(at + len));
    }
    case 6: {
      // duplicate a range in place (repeats records / table entries)
      if (n === 0) return bytes;
      const at = rng.int(n);
      const len = 1 + rng.int(Math.min(128, n - at));
      return concat(bytes.slice(0, at + len), bytes.slice(at, at + len), bytes.slice(at + len));
    }
    case 7:
    case 8: {
      // varint edit: at a known varint start, or anywhere
      if (n === 0) return bytes;
      const starts = hints?.varints;
      const at = starts && starts.length > 0 && rng.chance(0.8) ? rng.pick(starts) : rng.int(n);
      if (at >= n) return bytes;
      const repl = Uint8Array.from(rng.pick(INTERESTING_VARINTS));
      return concat(bytes.slice(0, at), repl, bytes.slice(varintEnd(bytes, at)));
    }
    case 9:
    case 10: {
      // fixed-width field edit: counts, offsets, sizes
      const fields = (hints?.fixed ?? []).filter((f) => f.offset + f.size <= n);
      if (fields.length === 0) return mutateOnce(rng, input, others, undefined);
      const f = rng.pick(fields);
      writeField(bytes, f, rng.pick(fieldValues(readField(bytes, f), f.size, n, rng)));
      return bytes;
    }
    default: {
      // record kind / variant byte: another valid kind (replays a wrong shape) or an invalid one
      const kinds = (hints?.kinds ?? []).filter((k) => k.offset < n);
      if (kinds.length === 0) return mutateOnce(rng, input, others, undefined);
      const k = rng.pick(kinds);
      bytes[k.offset] = rng.chance(0.75) ? rng.pick(k.valid) : rng.int(256);
      return bytes;
    }
  }
}

/** One to four stacked mutations. */
export function mutate(rng: Rng, seed: Seed, others: readonly Seed[]): Uint8Array {
  let bytes = seed.bytes;
  const rounds = 1 + rng.int(4);
  for (let i = 0; i < rounds; i++) bytes = mutateOnce(rng, bytes, others, i === 0 ? seed.hints : undefined);
  return bytes;
}

/** Total seconds for the JS fuzzer in one suite run (split between the fuzz files). */
export function fuzzSeconds(): number {
  const raw = process.env.PROFPACK_FUZZ_SECONDS;
  const value = raw === undefined || raw === '' ? 40 : Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`PROFPACK_FUZZ_SECONDS must be a positive number, not ${raw}`);
  return value;
}

/** The run's base seed: PROFPACK_FUZZ_SEED, or fresh each run (printed on failure). */
export function fuzzSeed(): number {
  const raw = process.env.PROFPACK_FUZZ_SEED;
  return raw ? Number(raw) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
}

/** What one backend did with one input. */
export type Outcome<T> =
  { ok: true; value: T } | { ok: false; code: string; offset: number | undefined; message: string };

/**
 * Runs `fn`; a ProfpackError becomes a rejection, anything else thrown is a
 * contract violation and is rethrown with the input saved for replay.
 */
export function outcome<T>(fn: () => T, context: () => string): Outcome<T> {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    if (isProfpackError(err)) return { ok: false, code: err.code, offset: err.offset, message: err.message };
    throw new Error(
      `non-ProfpackError thrown (${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}); ${context()}`,
      {
        cause: err,
      },
    );
  }
}

/** Saves a failing input under test/fuzz/out/js-failures/ and describes it. */
export function saveFailure(label: string, seed: number, bytes: Uint8Array): string {
  const dir = path.join(repoRoot, 'test', 'fuzz', 'out', 'js-failures');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${label.replace(/[^A-Za-z0-9_.-]/g, '_')}-${seed}.bin`);
  writeFileSync(file, bytes);
  const hex = Buffer.from(bytes.subarray(0, 96)).toString('hex');
  return `seed ${seed} (PROFPACK_FUZZ_SEED=${seed}), input saved to ${file} (${bytes.length} bytes, starts ${hex})`;
}

/**
 * Calls `step(i)` until the time budget is spent (at least `minIterations`
 * times); returns the iteration count. A single step that spends more than
 * `slowStepMs` of CPU time fails, described by `describe()` (which the step
 * may point at its input): decoders must not loop without consuming input.
 * CPU time, not wall time: on a loaded machine (CI's two cores running two
 * test files and their children) a recover step that takes under 0.3 s
 * alone took 5.7 s of wall time. A step blocked for 10x the limit in wall
 * time fails as well.
 */
export function runFor(
  budgetMs: number,
  minIterations: number,
  step: (i: number) => void,
  slowStepMs = 2000,
  describe: () => string = () => '',
): number {
  const deadline = performance.now() + budgetMs;
  let i = 0;
  while (i < minIterations || performance.now() < deadline) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    step(i);
    const wall = performance.now() - t0;
    const cpuUsed = process.cpuUsage(cpu0);
    const cpu = (cpuUsed.user + cpuUsed.system) / 1000;
    if (cpu > slowStepMs || wall > 10 * slowStepMs) {
      throw new Error(
        `fuzz step ${i} took ${cpu.toFixed(0)} ms of CPU, ${wall.toFixed(0)} ms of wall time (hang suspected); ${describe()}`,
      );
    }
    i++;
  }
  return i;
}

/** Runs the CLI (`cli`, in `cwd`) on this run's backend: exit 0, or exit 2 with one coded line; else throws. */
export function cliHolds(cli: string, cwd: string, args: string[], context: () => string): void {
  const run = spawnSync(process.execPath, ['--max-old-space-size=512', cli, ...args], {
    encoding: 'utf8',
    cwd,
    timeout: 60_000 * SLOWDOWN,
    env: { ...process.env, PROFPACK_BACKEND: backend.name },
  });
  const lines = run.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('profpack: ') && !l.startsWith('profpack: warning'));
  const coded = run.status === 2 && lines.length === 1 && /^profpack: ERR_[A-Z0-9_]+/.test(lines[0]!);
  if (run.status !== 0 && !coded) {
    const how = `status ${run.status}, signal ${run.signal}: ${run.stderr.slice(0, 600)}`;
    throw new Error(`profpack ${args.join(' ')}: ${how}; ${context()}`);
  }
}
