/**
 * The zstd sample region (../shared/notes/tachyon-format.md §9) through
 * zstd-napi's streaming DCtx. CPython 3.15.2 decompresses the whole region at
 * open (so its zstd errors are open-stage errors), accepting several
 * concatenated frames, with or without checksums, up to 1 GiB. We check the
 * region the same way at open, but stream: the output is kept only when it is
 * small (ZstdRegion.data), otherwise replay decompresses it again chunk by chunk
 * (ZstdRegionStream, over inflate.ts's loop). The open-stage check keeps its own
 * loop: it hands zstd CPython's buffer sizes, so corrupt input fails as CPython's does.
 */
import type { ZstdDCtx } from './zstd/index';
import { ErrorCode } from '../../errors';
import { HEADER_SIZE } from '../format';
import { zstdBinding } from './zstd/index';
import { openError } from './layout';
import type { FileBytes } from './header';
import { ZstdInflater, type InflateErrors } from './zstd/index';

/** Decompressed bytes produced per step. */
export const OUTPUT_CHUNK = 1 << 20;

export interface ZstdRegion {
  /** Size of the decompressed sample region. */
  totalSize: number;
  /** The whole decompressed region, when it was at most the keep limit. */
  data: Uint8Array | null;
}

/** CPython's error for a region whose first bytes are no zstd frame header. */
function frameHeaderError(): Error {
  return openError(
    ErrorCode.TACHYON_ZSTD_FRAME_HEADER,
    'Corrupted zstd frame header',
    HEADER_SIZE,
    'a zstd frame header',
  );
}

/** The open-stage errors CPython raises for a sample region that ends at `regionEnd`. */
function regionErrors(regionEnd: number): InflateErrors {
  return {
    corrupt: (cause, at) =>
      openError(
        ErrorCode.TACHYON_ZSTD_ERROR,
        `zstd decompression error: ${cause instanceof Error ? cause.message : String(cause)}`,
        at,
      ),
    tooLarge: (limit) =>
      openError(
        ErrorCode.TACHYON_ZSTD_TOO_LARGE,
        'Decompressed data exceeds maximum size',
        HEADER_SIZE,
        `at most ${limit} bytes`,
      ),
    truncated: () =>
      openError(ErrorCode.TACHYON_ZSTD_TRUNCATED, 'Incomplete zstd frame: data may be truncated', regionEnd),
  };
}

/** The sample region [HEADER_SIZE, regionEnd) decompressed a piece at a time (replay's pass over a large region). */
export class ZstdRegionStream {
  private readonly inflater: ZstdInflater;
  done = false;

  constructor(source: FileBytes, regionEnd: number, maxSize: number) {
    try {
      zstdBinding().getFrameContentSize(source.read(HEADER_SIZE, Math.min(regionEnd, HEADER_SIZE + 32)));
    } catch {
      throw frameHeaderError();
    }
    this.inflater = new ZstdInflater({ source, start: HEADER_SIZE, end: regionEnd }, maxSize, regionErrors(regionEnd));
  }

  /** Decompresses into out[0, ...) until it is full or the region ends; returns the bytes written. */
  fill(out: Uint8Array): number {
    if (this.done) return 0;
    const written = this.inflater.read(out);
    if (written < out.length) this.done = true;
    return written;
  }
}

/** CPython's first buffer when the frame header gives no size: ZSTD_DStreamOutSize() * 4. */
const CPYTHON_INITIAL_BUFFER = 4 * (128 << 10);
/**
 * The largest output buffer the open-stage check hands zstd when not keeping
 * the data. CPython's buffer can be larger; zstd only behaves differently when
 * a frame declares a content size above this (CPython's writer never declares one).
 */
const SCRATCH_LIMIT = 16 << 20;

/**
 * Decompresses the whole region as CPython 3.15.2 does at open, with the same
 * output-buffer sizes per ZSTD_decompressStream call (frame content size, else
 * 512 KiB, doubled when full, capped at maxSize), so that corrupt input fails
 * with the same zstd error; the output is kept when it is at most keepLimit bytes.
 */
export function checkZstdRegion(source: FileBytes, regionEnd: number, maxSize: number, keepLimit: number): ZstdRegion {
  const input = source.read(HEADER_SIZE, regionEnd);
  let contentSize: number | null;
  try {
    contentSize = zstdBinding().getFrameContentSize(input);
  } catch {
    throw frameHeaderError();
  }
  const errors = regionErrors(regionEnd);
  let alloc = contentSize !== null && contentSize <= maxSize ? contentSize : CPYTHON_INITIAL_BUFFER;
  // Without a declared content size the output size changes nothing zstd does: the shared 1 MiB
  // scratch then serves (a 16 MiB one per check was garbage left to a later GC, in replay's peak RSS).
  const scratchLimit = contentSize === null ? KEPT_SCRATCH : SCRATCH_LIMIT;
  const dctx = sharedContext();
  // Output goes to a scratch buffer; CPython's buffer sizes are only passed on as capacities.
  let keeping = keepLimit > 0;
  // While keeping, output gathers in the scratch buffer; a region that outgrows it goes straight into the buffer it
  // is kept in (1 MiB slices and their concatenation were two copies of it: most of a 12 MB region's open).
  let kept: Uint8Array | null =
    keeping && contentSize !== null && contentSize > 0 && contentSize <= keepLimit ? new Uint8Array(contentSize) : null;
  // One scratch buffer for the whole check, grown as needed: a fresh 16 MiB
  // buffer per call would leave dozens of them to a lazy GC on a bomb.
  let scratch = sharedScratch;
  let total = 0;
  let inPos = 0;
  let last = 0;
  while (inPos < input.length) {
    if (total >= alloc) {
      if (alloc * 2 > maxSize) throw errors.tooLarge(maxSize);
      alloc *= 2;
    }
    // One call of CPython's loop, with capacity alloc - total, made of calls
    // on the scratch buffer while they fill it.
    const capacity = alloc - total;
    let produced = 0;
    for (;;) {
      const size = Math.min(capacity - produced, scratchLimit);
      const at = total + produced;
      if (keeping && kept === null && at > 0 && at + size > scratch.length) {
        kept = keptBuffer(at, inPos, input.length, keepLimit);
        kept.set(scratch.subarray(0, at));
      }
      if (keeping && kept !== null && at === kept.length) {
        kept = keptGrown(kept, keepLimit);
        keeping = kept !== null;
      }
      let out: Uint8Array;
      if (keeping && kept !== null) out = kept.subarray(at, at + Math.min(size, kept.length - at));
      else {
        const offset = keeping ? at : 0; // 0 when keeping: a larger offset went to the kept buffer above
        if (offset + size > scratch.length) {
          scratch = new Uint8Array(Math.min(SCRATCH_LIMIT, Math.max(size, 2 * scratch.length)));
          if (scratch.length <= KEPT_SCRATCH) sharedScratch = scratch;
        }
        out = scratch.subarray(offset, offset + size);
      }
      let r: [number, number, number];
      try {
        r = dctx.decompressStream(out, input.subarray(inPos));
      } catch (err) {
        throw errors.corrupt(err, HEADER_SIZE + inPos);
      }
      last = r[0];
      produced += r[1];
      inPos += r[2];
      if (keeping && total + produced > keepLimit) {
        keeping = false;
        kept = null;
      }
      // Done: all input read and its last frame flushed (a further call would wait for another frame's header).
      if (last === 0 && inPos === input.length) break;
      if (r[1] < out.length || produced >= capacity || out.length === 0) break;
    }
    total += produced;
    // CPython only checks its cap when it grows the buffer (so never above 1 GiB); a smaller cap given as an option
    // holds exactly.
    if (total > maxSize) throw errors.tooLarge(maxSize);
    if (capacity === 0 && produced === 0 && inPos < input.length && last !== 0) {
      // CPython loops forever here (a frame declaring size 0 followed by data); stop instead.
      throw openError(
        ErrorCode.TACHYON_ZSTD_ERROR,
        'zstd decompression error: no progress with an empty output buffer',
        HEADER_SIZE + inPos,
      );
    }
  }
  if (last !== 0) throw errors.truncated();
  if (!keeping) return { totalSize: total, data: null };
  if (kept === null) return { totalSize: total, data: scratch.slice(0, total) };
  if (kept.length === total) return { totalSize: total, data: kept };
  // A buffer much larger than the region is not held for the reader's life.
  return { totalSize: total, data: total < kept.length / 2 ? kept.slice(0, total) : kept.subarray(0, total) };
}

/**
 * The kept region's buffer once `have` bytes came from `consumed` of `inputLength` input bytes: the region's size
 * at that ratio and a quarter more, at least twice `have`, at most the keep limit.
 */
function keptBuffer(have: number, consumed: number, inputLength: number, keepLimit: number): Uint8Array {
  const estimate = consumed > 0 ? Math.ceil((have / consumed) * inputLength * 1.25) : 0;
  return new Uint8Array(Math.min(keepLimit, Math.max(2 * have, estimate)));
}

/** A full kept buffer grown twofold up to the keep limit (copied), or null when it is at the limit. */
function keptGrown(kept: Uint8Array, keepLimit: number): Uint8Array | null {
  if (kept.length >= keepLimit) return null;
  const grown = new Uint8Array(Math.min(keepLimit, 2 * kept.length));
  grown.set(kept);
  return grown;
}

/** Scratch output kept between readers up to this size (a larger one lives for one check). */
const KEPT_SCRATCH = 1 << 20;
let sharedScratch: Uint8Array = new Uint8Array(0);

let context: ZstdDCtx | null = null;

/** One decompression context for the open-stage checks (creating one and its window costs more than a small region). */
function sharedContext(): ZstdDCtx {
  const zstd = zstdBinding();
  if (!context) context = new zstd.DCtx();
  else context.reset(zstd.ResetDirective.sessionOnly);
  return context;
}
