/** Small assertions and decoders more than one suite needs: refusals (ProfpackError codes and messages), zstd prefixes. */
import { expect, it } from 'vitest';
import { DCtx } from 'zstd-napi/binding';
import { ErrorCode, isProfpackError, type ProfpackError } from '../../lib/errors';
import { ProfileReader } from '../../lib/tachyon/read/reader';

/** Runs `fn`, which must throw a ProfpackError; returns it for the caller's checks. */
export function thrown(fn: () => unknown): ProfpackError {
  try {
    fn();
  } catch (err) {
    expect(isProfpackError(err)).toBe(true);
    return err as ProfpackError;
  }
  throw new Error('expected a ProfpackError');
}

/** A test per case `[name, call, message]`: the call throws ERR_INVALID_ARGUMENT with exactly that message. */
export function itRefusesArguments(cases: [string, () => unknown, string][]): void {
  for (const [name, fn, message] of cases)
    it(name, () => {
      const err = thrown(fn);
      expect(err.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(err.message).toBe(message);
    });
}

/** The code of the ProfpackError `fn` throws, 'ok' when it throws none, `not coded: …` for any other error. */
export function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return isProfpackError(err) ? err.code : `not coded: ${String(err)}`;
  }
  return 'ok';
}

/** Everything an unterminated zstd frame decompresses to (zstd keeps nothing back once its input is used). */
export function inflatePrefix(bytes: Uint8Array): Uint8Array {
  const dctx = new DCtx();
  const parts: Uint8Array[] = [];
  const out = new Uint8Array(1 << 17);
  let input = bytes;
  for (;;) {
    const [, produced, consumed] = dctx.decompressStream(out, input);
    if (produced > 0) parts.push(out.slice(0, produced));
    input = input.subarray(consumed);
    if (produced === 0 && consumed === 0) break;
  }
  return Buffer.concat(parts);
}

/** Opens and replays `file` on one backend: 'ok', or the ProfpackError code it was refused with. */
export function readCode(file: string, which: 'native' | 'js'): string {
  try {
    const reader = ProfileReader.open(file, { backend: which });
    for (const _ of reader.samples());
    reader.close();
    return 'ok';
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    return err.code;
  }
}
