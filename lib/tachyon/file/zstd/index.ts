/**
 * One-shot zstd for version 2 through zstd-napi's context API: compression of
 * a table, a bounded decompressor with version 2's errors over inflate.ts's loop
 * (CPython caps a region at 1 GiB), and the prefix sniff of a region. The sample
 * region's streaming compressor is output.ts's ZstdStream; version 1's region reader is regions.ts.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { ZSTD_MAX_DECOMPRESSED } from '../../format';
import { zstdBinding } from './binding';
import { ZstdInflater, acquireDctx, releaseDctx, type InflateErrors, type InflateInput } from './inflate';

const OUT_CHUNK = 128 * 1024;

const zstd = zstdBinding;

/**
 * One-shot compression of data whose size is known (the tables): zstd then
 * sizes its window and tables to the input, so level 19 on a small table is
 * cheap to set up.
 */
export function zstdCompress(data: Uint8Array, level: number): Uint8Array {
  const cctx = new (zstd().CCtx)();
  const out = new Uint8Array(zstd().compressBound(data.length));
  return out.slice(0, cctx.compress(out, data, level));
}

/** Version 2's errors for zstd data that starts at file offset `offset`. */
function v2Errors(offset: number, length: number, what: string): InflateErrors {
  return {
    corrupt: (cause) =>
      new ProfpackError(`${what}: zstd decompression error: ${(cause as Error).message}`, {
        code: ErrorCode.V2_ZSTD,
        offset,
        cause,
      }),
    tooLarge: (limit) =>
      new ProfpackError(`${what} decompresses to more than ${limit} bytes`, {
        code: ErrorCode.V2_ZSTD,
        offset,
        expected: `at most ${limit} bytes`,
      }),
    truncated: () =>
      new ProfpackError(`${what}: incomplete zstd frame, data may be truncated`, {
        code: ErrorCode.V2_ZSTD,
        offset: offset + length,
        expected: 'the rest of the zstd frame',
      }),
  };
}

/**
 * Decompresses `data` (concatenated frames accepted, as CPython does) a piece
 * at a time: read(out) fills `out` as far as it can and returns the bytes
 * written, 0 at the end. Errors are ERR_V2_ZSTD at `offset` (where `data`
 * starts in the file); more than `limit` bytes in all is one too. release()
 * gives the context back to the pool (also done at the end or an error).
 */
export class ZstdPieces extends ZstdInflater {
  /** `data`: in memory, or a range of a file (then `offset` is its start). */
  constructor(data: InflateInput, offset: number, what: string, limit = ZSTD_MAX_DECOMPRESSED) {
    super(data, limit, v2Errors(offset, data instanceof Uint8Array ? data.length : data.end - data.start, what));
  }
}

/**
 * Decompresses every frame in `data` (concatenated frames accepted, as
 * CPython does). `offset` is where `data` starts in the file, for errors.
 */
export function zstdDecompress(
  data: Uint8Array,
  offset: number,
  what: string,
  limit = ZSTD_MAX_DECOMPRESSED,
): Uint8Array {
  const pieces = new ZstdPieces(data, offset, what, limit);
  const chunks: Uint8Array[] = [];
  const out = new Uint8Array(OUT_CHUNK);
  for (let n = pieces.read(out); n > 0; n = pieces.read(out)) chunks.push(out.slice(0, n));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * The first `n` decompressed bytes of `data` (fewer if the stream holds
 * fewer), or null when the stream cannot be decoded that far. Decodes only
 * what it needs: ProfileReader sniffs a region's first block with it.
 */
export function zstdPrefix(data: Uint8Array, n: number): Uint8Array | null {
  const dctx = acquireDctx();
  const out = new Uint8Array(n);
  let have = 0;
  let input = data;
  try {
    while (have < n) {
      const [, produced, consumed] = dctx.decompressStream(out.subarray(have), input);
      have += produced;
      input = input.subarray(consumed);
      if (produced === 0 && consumed === 0) break;
    }
  } catch {
    return null;
  } finally {
    releaseDctx(dctx);
  }
  return out.subarray(0, have);
}

export { type ZstdDCtx, canWriteZstd, defaultCompression, noZstdReason, zstdBinding } from './binding';
export { type InflateErrors, type InflateInput, ZstdInflater } from './inflate';
