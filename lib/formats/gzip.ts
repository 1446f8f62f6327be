/**
 * gzip as profile files use it (pprof.gz, gzipped JSON or collapsed text):
 * detection looks at what the first bytes inflate to; reading inflates whole
 * but bounded, so a small gzip bomb is a coded error and not an out-of-memory abort.
 */
import { constants, gunzipSync } from 'node:zlib';
import { ErrorCode, ProfpackError } from '../errors';

export const DEFAULT_MAX_INFLATED_BYTES = 1 << 30;

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** gunzip with a bound on the output, so a gzip bomb is a coded error and not an out-of-memory abort. */
export function gunzipBounded(bytes: Uint8Array, maxBytes = DEFAULT_MAX_INFLATED_BYTES): Uint8Array {
  // gzip's last 4 bytes are the inflated size (mod 2^32, of the last member): as one output chunk, zlib
  // fills one buffer instead of gathering 16 KiB pieces and copying them (half the peak memory). Only a
  // hint: bounded by maxBytes and by deflate's largest ratio (1032:1), so a lying trailer cannot allocate more.
  const claimed =
    bytes.length >= 18 ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).readUInt32LE(bytes.length - 4) : 0;
  const chunkSize = Math.max(64 * 1024, Math.min(claimed + 1, maxBytes + 1, bytes.length * 1032));
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes, chunkSize });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ProfpackError(`the gzip data inflates to more than ${maxBytes} bytes`, {
        code: ErrorCode.CONVERT_INPUT_TOO_LARGE,
        expected: `at most ${maxBytes} bytes inflated (maxInflatedBytes)`,
        cause: err,
      });
    }
    throw new ProfpackError('the gzip data is corrupt', {
      code: ErrorCode.CONVERT_BAD_INPUT,
      expected: 'a complete gzip stream',
      cause: err,
    });
  }
}

/**
 * The first bytes a gzip inflates to, for detection (never more than `max`),
 * and whether they may stop short of the end (a whole small file may not
 * end inside a field; a head may).
 */
export function gunzipHead(bytes: Uint8Array, max = 4096): { head: Uint8Array; partial: boolean } {
  try {
    return { head: gunzipSync(bytes, { maxOutputLength: max }), partial: false };
  } catch {
    // Cut short (a 4 KiB head of a larger gzip) or larger than max: what inflates before the end is the head.
  }
  try {
    const head = gunzipSync(bytes.subarray(0, 8192), { finishFlush: constants.Z_SYNC_FLUSH });
    return { head: head.subarray(0, max), partial: true };
  } catch {
    return { head: new Uint8Array(0), partial: false };
  }
}
