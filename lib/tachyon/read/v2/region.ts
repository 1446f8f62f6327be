/**
 * A version-2 sample region handed out one whole block at a time, so a
 * reader holds one block of it, never the region: raw regions are sliced in
 * place, a zstd region is decompressed in pieces of at most 1 MiB into a
 * window that holds the block being decoded (a 57 KB file whose
 * region inflates to 950 MB took 1.88 GB when it was decompressed whole).
 *
 * Only the block's length is read here (its prefix, sample count and column
 * lengths); everything else, and every error of a malformed block, is the
 * decoder's (codec/blocks.ts, native/tachyon/v2/region_decoder.cc): a block
 * whose header does not parse, or that the region's end cuts, is handed over
 * as the bytes that remain, and the decoder reports it exactly as it would
 * have in the whole region.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { HEADER_SIZE, RECORD_PREFIX_SIZE } from '../../format';
import { ZstdPieces, type FileBytes, type InflateInput } from '../../file/index';
import { BLOCK_COLUMNS, BLOCK_MAX_BYTES, BLOCK_MAX_SAMPLES } from '../../codec/index';

/** Decompressed bytes pulled per step. */
const PIECE = 1 << 20;
/** The longest block header: prefix, then the sample count and the column lengths as u32 LEB128. */
const MAX_BLOCK_HEADER = RECORD_PREFIX_SIZE + 5 * (1 + BLOCK_COLUMNS.length);

/** Bytes handed out a piece at a time: a zstd stream, or a raw range read from a file. */
interface Pieces {
  read(out: Uint8Array): number;
  release(): void;
}

/** A raw region read from a file by ranges (recover's check of its output never holds it whole). */
class RangePieces implements Pieces {
  private pos: number;

  constructor(
    private readonly source: FileBytes,
    start: number,
    private readonly end: number,
  ) {
    this.pos = start;
  }

  read(out: Uint8Array): number {
    const n = Math.min(out.length, this.end - this.pos);
    if (n > 0 && this.source.readInto !== undefined) this.source.readInto(out.subarray(0, n), this.pos);
    else if (n > 0) out.set(this.source.read(this.pos, this.pos + n));
    this.pos += n;
    return n;
  }

  release(): void {}
}

const storedLength = (stored: InflateInput) =>
  stored instanceof Uint8Array ? stored.length : stored.end - stored.start;

/** One block's bytes (valid until the next call) and where it starts in the decompressed region. */
export interface RegionBlock {
  bytes: Uint8Array;
  at: number;
}

/** A u32 LEB128 at b[pos..end): [value, next position], or null when it does not parse there. */
function u32At(b: Uint8Array, pos: number, end: number): [number, number] | null {
  let value = 0;
  for (let i = 0; i < 5 && pos + i < end; i++) {
    const byte = b[pos + i]!;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return value <= 0xffff_ffff ? [value, pos + i + 1] : null;
  }
  return null;
}

/** [sample count, whole block length] of the block at b[pos..end), or null when its header does not parse there. */
function blockExtent(b: Uint8Array, pos: number, end: number): [number, number] | null {
  let at = pos + RECORD_PREFIX_SIZE;
  if (at > end) return null;
  const count = u32At(b, at, end);
  if (count === null) return null;
  at = count[1];
  let columns = 0;
  for (let c = 0; c < BLOCK_COLUMNS.length; c++) {
    const length = u32At(b, at, end);
    if (length === null) return null;
    columns += length[0];
    at = length[1];
  }
  return [count[0], at - pos + columns];
}

export class RegionBlocks {
  private buffer: Uint8Array;
  /** Unread bytes are buffer[pos, end); buffer[0] is region offset `bufferAt`. */
  private pos = 0;
  private end: number;
  private bufferAt = 0;
  private pieces: Pieces | null;

  /**
   * `stored`: the region as stored, in memory or a range of a file; zstd: decompressed here, at most `limit` bytes.
   * A raw region in memory is sliced in place; one in a file is read a piece at a time.
   */
  constructor(stored: InflateInput, zstd: boolean, limit: number) {
    if (zstd || !(stored instanceof Uint8Array)) {
      this.pieces =
        zstd || stored instanceof Uint8Array
          ? new ZstdPieces(stored, HEADER_SIZE, 'sample region', limit)
          : new RangePieces(stored.source, stored.start, stored.end);
      this.buffer = new Uint8Array(Math.min(PIECE, Math.max(storedLength(stored) * 4, 64 << 10)));
      this.end = 0;
    } else {
      this.pieces = null;
      this.buffer = stored;
      this.end = stored.length;
    }
  }

  /** The next block, or null at the end of the region. */
  next(): RegionBlock | null {
    this.fill(MAX_BLOCK_HEADER);
    if (this.pos >= this.end) return null;
    const at = this.bufferAt + this.pos;
    const extent = blockExtent(this.buffer, this.pos, this.end);
    if (extent !== null) {
      const [count, length] = extent;
      if (length > BLOCK_MAX_BYTES || count > BLOCK_MAX_SAMPLES) {
        this.release();
        throw new ProfpackError(`a sample block of ${count} samples in ${length} bytes is larger than a reader holds`, {
          code: ErrorCode.V2_LIMIT,
          offset: HEADER_SIZE + at,
          expected: `at most ${BLOCK_MAX_SAMPLES} samples in ${BLOCK_MAX_BYTES} bytes (what writers make)`,
        });
      }
      this.fill(length);
      if (this.end - this.pos >= length) {
        const bytes = this.buffer.subarray(this.pos, this.pos + length);
        this.pos += length;
        return { bytes, at };
      }
    }
    // A header that does not parse, or a block the region's end cuts: the decoder reports it.
    const bytes = this.buffer.subarray(this.pos, this.end);
    this.pos = this.end;
    return { bytes, at };
  }

  /** Gives the decompression context back (the end of the region does it too). */
  release(): void {
    this.pieces?.release();
    this.pieces = null;
  }

  /** Pulls decompressed bytes until `want` unread bytes are buffered or the region ends. */
  private fill(want: number): void {
    if (this.pieces === null || this.end - this.pos >= want) return;
    if (this.pos > 0) {
      this.buffer.copyWithin(0, this.pos, this.end);
      this.bufferAt += this.pos;
      this.end -= this.pos;
      this.pos = 0;
    }
    while (this.end < want && this.pieces !== null) {
      if (this.buffer.length - this.end < PIECE && this.buffer.length < want + PIECE) {
        const grown = new Uint8Array(Math.max(want + PIECE, this.buffer.length * 2));
        grown.set(this.buffer.subarray(0, this.end));
        this.buffer = grown;
      }
      const n = this.pieces.read(this.buffer.subarray(this.end, Math.min(this.buffer.length, this.end + PIECE)));
      if (n === 0) this.release();
      this.end += n;
    }
  }
}

/**
 * Checks a zstd region whole at open (its errors are open-stage errors, as
 * version 1's are) without holding it: returns its size, and its bytes when
 * they are at most `keepLimit`.
 */
export function checkV2ZstdRegion(
  stored: InflateInput,
  limit: number,
  keepLimit: number,
): { size: number; data: Uint8Array | null } {
  const pieces = new ZstdPieces(stored, HEADER_SIZE, 'sample region', limit);
  let kept: Uint8Array[] | null = [];
  const scratch = new Uint8Array(Math.min(PIECE, Math.max(storedLength(stored) * 4, 64 << 10)));
  for (let n = pieces.read(scratch); n > 0; n = pieces.read(scratch)) {
    if (kept !== null && pieces.produced <= keepLimit) kept.push(scratch.slice(0, n));
    else kept = null;
  }
  const size = pieces.produced;
  if (kept === null) return { size, data: null };
  if (kept.length === 1) return { size, data: kept[0]! };
  const data = new Uint8Array(size);
  let at = 0;
  for (const part of kept) {
    data.set(part, at);
    at += part.length;
  }
  return { size, data };
}
