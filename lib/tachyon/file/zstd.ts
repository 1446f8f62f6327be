/**
 * One-shot zstd for version 2 through zstd-napi's context API: compression of
 * a table, a bounded decompressor (CPython caps a region at 1 GiB), and the
 * prefix sniff of a region. The sample region's streaming compressor is
 * output.ts's ZstdStream; version 1's region reader is regions.ts.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ZSTD_MAX_DECOMPRESSED } from '../format';
import { zstdBinding, type ZstdDCtx } from './zstd-binding';

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

/** Idle decompression contexts kept for reuse (zstd-napi frees one only in a finalizer, on a later turn). */
const IDLE_DCTX = 2;
const idleDctx: ZstdDCtx[] = [];

/** A decompression context from the pool, reset for a new stream. */
function acquireDctx(): ZstdDCtx {
  const reused = idleDctx.pop();
  if (reused === undefined) return new (zstd().DCtx)();
  reused.reset(zstd().ResetDirective.sessionOnly);
  return reused;
}

function releaseDctx(dctx: ZstdDCtx): void {
  if (idleDctx.length < IDLE_DCTX) idleDctx.push(dctx);
}

/**
 * Decompresses `data` (concatenated frames accepted, as CPython does) a piece
 * at a time: read(out) fills `out` as far as it can and returns the bytes
 * written, 0 at the end. Errors are ERR_V2_ZSTD at `offset` (where `data`
 * starts in the file); more than `limit` bytes in all is one too. release()
 * gives the context back to the pool (also done at the end or an error).
 */
export class ZstdPieces {
  private dctx: ZstdDCtx | null = acquireDctx();
  private input: Uint8Array;
  private readonly dataLength: number;
  private lastResult = 0;
  /** Bytes produced so far. */
  produced = 0;

  constructor(
    data: Uint8Array,
    private readonly offset: number,
    private readonly what: string,
    private readonly limit = ZSTD_MAX_DECOMPRESSED,
  ) {
    this.input = data;
    this.dataLength = data.length;
  }

  read(out: Uint8Array): number {
    if (this.dctx === null || out.length === 0) return 0;
    let written = 0;
    try {
      while (written < out.length) {
        const [result, produced, consumed] = this.dctx.decompressStream(out.subarray(written), this.input);
        this.lastResult = result;
        written += produced;
        this.produced += produced;
        if (this.produced > this.limit) {
          throw new ProfpackError(`${this.what} decompresses to more than ${this.limit} bytes`, {
            code: ErrorCode.V2_ZSTD,
            offset: this.offset,
            expected: `at most ${this.limit} bytes`,
          });
        }
        this.input = this.input.subarray(consumed);
        if (produced === 0 && consumed === 0) break;
        if (this.input.length === 0 && written < out.length) break;
      }
    } catch (err) {
      this.release();
      if (err instanceof ProfpackError) throw err;
      throw new ProfpackError(`${this.what}: zstd decompression error: ${(err as Error).message}`, {
        code: ErrorCode.V2_ZSTD,
        offset: this.offset,
        cause: err,
      });
    }
    if (written === 0 || (this.input.length === 0 && written < out.length)) {
      this.release();
      if (this.lastResult !== 0) {
        throw new ProfpackError(`${this.what}: incomplete zstd frame, data may be truncated`, {
          code: ErrorCode.V2_ZSTD,
          offset: this.offset + this.dataLength,
          expected: 'the rest of the zstd frame',
        });
      }
    }
    return written;
  }

  release(): void {
    if (this.dctx !== null) releaseDctx(this.dctx);
    this.dctx = null;
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
