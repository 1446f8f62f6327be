/**
 * Synchronous zstd for version 2 through zstd-napi's context API: a streaming
 * compressor that ends one frame (as CPython streams its sample region), and
 * a bounded streaming decompressor (CPython caps a region at 1 GiB).
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ZSTD_MAX_DECOMPRESSED } from '../format';
import { zstdBinding } from './zstd-binding';

const OUT_CHUNK = 128 * 1024;

const zstd = zstdBinding;

export class ZstdStream {
  private readonly cctx = new (zstd().CCtx)();
  private readonly out = new Uint8Array(OUT_CHUNK);

  constructor(level: number) {
    this.cctx.setParameter(zstd().CParameter.compressionLevel, level);
  }

  /** Compresses `data`, passing compressed bytes to `sink` as they come. */
  write(data: Uint8Array, sink: (chunk: Uint8Array) => void): void {
    let input = data;
    while (input.length > 0) {
      const [, produced, consumed] = this.cctx.compressStream2(this.out, input, zstd().EndDirective.continue);
      if (produced > 0) sink(this.out.slice(0, produced));
      input = input.subarray(consumed);
    }
  }

  /** Ends the frame. */
  end(sink: (chunk: Uint8Array) => void): void {
    for (;;) {
      const [remaining, produced] = this.cctx.compressStream2(this.out, new Uint8Array(0), zstd().EndDirective.end);
      if (produced > 0) sink(this.out.slice(0, produced));
      if (remaining === 0) return;
    }
  }
}

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

/**
 * Decompresses every frame in `data` (concatenated frames accepted, as
 * CPython does). `offset` is where `data` starts in the file, for errors.
 */
export function zstdDecompress(data: Uint8Array, offset: number, what: string, limit = ZSTD_MAX_DECOMPRESSED): Uint8Array {
  const dctx = new (zstd().DCtx)();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let input = data;
  let lastResult = 0;
  const out = new Uint8Array(OUT_CHUNK);
  try {
    // Feed the input, then keep calling while the output buffer came back full (more may be pending).
    for (;;) {
      const [result, produced, consumed] = dctx.decompressStream(out, input);
      lastResult = result;
      if (produced > 0) {
        total += produced;
        if (total > limit) {
          throw new ProfpackError(`${what} decompresses to more than ${limit} bytes`, { code: ErrorCode.V2_ZSTD, offset, expected: `at most ${limit} bytes` });
        }
        chunks.push(out.slice(0, produced));
      }
      input = input.subarray(consumed);
      if (input.length === 0 && produced < out.length) break;
      if (consumed === 0 && produced === 0) break;
    }
  } catch (err) {
    if (err instanceof ProfpackError) throw err;
    throw new ProfpackError(`${what}: zstd decompression error: ${(err as Error).message}`, { code: ErrorCode.V2_ZSTD, offset, cause: err });
  }
  if (lastResult !== 0) {
    throw new ProfpackError(`${what}: incomplete zstd frame, data may be truncated`, { code: ErrorCode.V2_ZSTD, offset: offset + data.length, expected: 'the rest of the zstd frame' });
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * The first `n` decompressed bytes of `data` (fewer if the stream holds
 * fewer), or null when the stream cannot be decoded that far. Decodes only
 * what it needs: ProfileReader sniffs a region's first block with it.
 */
export function zstdPrefix(data: Uint8Array, n: number): Uint8Array | null {
  const dctx = new (zstd().DCtx)();
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
  }
  return out.subarray(0, have);
}
