/**
 * The predicted-stack coding (BlockKind.Predict): memtrace's backtrace codec
 * (seed 004; ../shared/notes/memtrace.md §4 is the exact mechanism), applied
 * per thread to Tachyon frame indices instead of OCaml location codes.
 *
 * A stack is coded against the same thread's previous stack: `keep`, the
 * number of outermost frames the two share, then `ncodes` codewords for the
 * remaining frames, walked caller→callee from just inside the kept prefix.
 * Codeword = u16 LE (bucket << 2 | tag): tags 0/1 = hit followed by 0/1
 * correct predictions, 2 = hit followed by a u8 count (2..255), 3 = miss with
 * the frame index as a LEB128 literal.
 *
 * Differences from memtrace, all forced by Tachyon: the literal is a frame
 * index (LEB128) instead of a u64 code; `keep` and `ncodes` are LEB128 instead
 * of memtrace's vint/u8/u16; dates count the thread's coded stacks (memtrace
 * uses the allocation id); the stack limit is version 2's V2_MAX_STACK_DEPTH
 * frames instead of memtrace's 4096-byte cut-off.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ByteSink, type ByteSource } from './bytes';
import {
  CACHE_MASK,
  CACHE_SIZE,
  CodewordTag,
  HASH1_MULTIPLIER,
  HASH1_SHIFT,
  HASH2_SHIFT,
  MAX_PREDICTION_RUN,
  V2_MAX_STACK_DEPTH,
} from './format';
import { resized } from '../../typed-arrays';

const HASH2_LOW = 0xfdea731;

/** memtrace's first hash: bits 11..24 of v × 0x4983723 (exact in 32-bit arithmetic). */
export function hash1(frame: number): number {
  return (Math.imul(frame, HASH1_MULTIPLIER) >>> HASH1_SHIFT) & CACHE_MASK;
}

/**
 * memtrace's second hash: bits 21..34 of the 64-bit product v × 0xfdea731.
 * Bits above 32 are needed, so the product is split at 16 bits and kept
 * modulo 2^35 in doubles (every term stays below 2^53).
 */
export function hash2(frame: number): number {
  const low = (frame & 0xffff) * HASH2_LOW; // < 2^44
  const high = ((frame >>> 16) * HASH2_LOW) % 0x80000; // (high part × 2^16) mod 2^35 needs only 19 bits
  const product = (high * 0x10000 + low) % 0x8_0000_0000; // mod 2^35, exact
  return Math.floor(product / (1 << HASH2_SHIFT)) & CACHE_MASK;
}

/** Cache state shared by coder and decoder: bucket contents and the next-bucket prediction. */
class CacheState {
  /** Frame index held by each bucket (meaningful only where `filled`). */
  readonly cache = new Uint32Array(CACHE_SIZE);
  readonly filled = new Uint8Array(CACHE_SIZE);
  /** The bucket that followed this one the last time it was coded (bucket 0 = the start node). */
  readonly next = new Uint16Array(CACHE_SIZE);
  /** Previous stack of the thread, outermost first; grown with the thread's depth (at most V2_MAX_STACK_DEPTH). */
  previous = new Uint32Array(256);
  previousDepth = 0;

  /** `previous` with room for `depth` frames (depth is checked against the limit first). */
  protected room(depth: number): Uint32Array {
    if (depth > this.previous.length) {
      this.previous = resized(this.previous, Math.min(V2_MAX_STACK_DEPTH, Math.max(depth, this.previous.length * 2)));
    }
    return this.previous;
  }
}

/** Writer side, one per thread: adds memtrace's dates for its eviction choice. */
export class PredictCoder extends CacheState {
  private readonly date = new Uint32Array(CACHE_SIZE);
  private clock = 0;
  private readonly scratch = new ByteSink(64);

  /**
   * Appends the coding of `stack` (frame indices, innermost first, as Tachyon
   * lists them; at most V2_MAX_STACK_DEPTH) to `out`.
   */
  encode(stack: ArrayLike<number>, out: ByteSink): void {
    const depth = stack.length;
    if (depth > V2_MAX_STACK_DEPTH) {
      throw new ProfpackError(`stack of ${depth} frames exceeds the limit of ${V2_MAX_STACK_DEPTH}`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `at most ${V2_MAX_STACK_DEPTH} frames`,
      });
    }
    const { cache, filled, next, date } = this;
    const previous = this.room(depth);
    // Common outermost run with the previous stack (memtrace's common prefix).
    const limit = Math.min(depth, this.previousDepth);
    let keep = 0;
    while (keep < limit && previous[keep] === stack[depth - 1 - keep]) keep++;

    const now = ++this.clock;
    const codes = this.scratch;
    codes.clear();
    let ncodes = 0;
    let predictor = 0; // memtrace's pseudo start node
    let j = depth - 1 - keep; // next frame to code, walking toward the innermost (index 0)
    while (j >= 0) {
      const frame = stack[j]! >>> 0;
      const b1 = hash1(frame);
      const b2 = hash2(frame);
      let bucket = -1;
      if (filled[b1] && cache[b1] === frame) bucket = b1;
      else if (filled[b2] && cache[b2] === frame) bucket = b2;
      ncodes++;
      if (bucket < 0) {
        // Miss: evict the older of the two candidates; ties go to h2 as in memtrace.
        const victim = date[b1]! < date[b2]! ? b1 : b2;
        cache[victim] = frame;
        filled[victim] = 1;
        date[victim] = now;
        next[predictor] = victim;
        codes.u16((victim << 2) | CodewordTag.Miss);
        codes.uvarint(frame);
        predictor = victim;
        j--;
        continue;
      }
      date[bucket] = now;
      next[predictor] = bucket;
      j--;
      // Follow the prediction chain; frames it reproduces keep their dates.
      let p = bucket;
      let run = 0;
      while (j >= 0 && run < MAX_PREDICTION_RUN) {
        const q = next[p]!;
        if (!filled[q] || cache[q] !== stack[j]! >>> 0) break;
        run++;
        p = q;
        j--;
      }
      if (run <= 1) {
        codes.u16((bucket << 2) | run);
      } else {
        codes.u16((bucket << 2) | CodewordTag.HitN);
        codes.u8(run);
      }
      predictor = p;
    }
    out.uvarint(keep);
    out.uvarint(ncodes);
    out.append(codes.view());

    for (let i = 0; i < depth; i++) previous[i] = stack[depth - 1 - i]! >>> 0;
    this.previousDepth = depth;
  }
}

/** Reader side, one per thread: mirrors the coder's cache from the codewords alone. */
export class PredictDecoder extends CacheState {
  /**
   * Decodes one stack from `src` into `out` (innermost first) and returns its
   * depth. Every count is bounded by the bytes left and V2_MAX_STACK_DEPTH,
   * so corrupt input ends in a ProfpackError, never a long loop.
   */
  decode(src: ByteSource, out: Uint32Array): number {
    const { cache, filled, next } = this;
    let previous: Uint32Array = this.previous;
    const keepAt = src.pos;
    const keep = src.uvarint32();
    if (keep > this.previousDepth) {
      throw src.fail(
        ErrorCode.V2_BAD_KEEP,
        `predicted stack keeps ${keep} frames but the thread's previous stack has ${this.previousDepth}`,
        `at most ${this.previousDepth}`,
        keepAt,
      );
    }
    const countAt = src.pos;
    const ncodes = src.uvarint32();
    if (ncodes * 2 > src.remaining()) {
      throw src.fail(
        ErrorCode.V2_TRUNCATED,
        `${ncodes} codewords cannot fit in the ${src.remaining()} bytes left`,
        `at most ${src.remaining() >> 1} codewords`,
        countAt,
      );
    }
    // Build outermost-first in `previous` itself: its first `keep` entries are already right.
    let depth = keep;
    let predictor = 0;
    for (let c = 0; c < ncodes; c++) {
      const at = src.pos;
      const word = src.u16('codeword');
      const bucket = word >>> 2;
      const tag = word & 3;
      next[predictor] = bucket;
      if (tag === CodewordTag.Miss) {
        const frame = src.uvarint32();
        if (depth >= V2_MAX_STACK_DEPTH) throw tooDeep(src, at);
        if (depth === previous.length) previous = this.room(depth + 1);
        cache[bucket] = frame;
        filled[bucket] = 1;
        previous[depth++] = frame;
        predictor = bucket;
        continue;
      }
      if (!filled[bucket]) throw undefinedBucket(src, bucket, at);
      if (depth >= V2_MAX_STACK_DEPTH) throw tooDeep(src, at);
      if (depth === previous.length) previous = this.room(depth + 1);
      previous[depth++] = cache[bucket]!;
      let run: number = tag;
      if (tag === CodewordTag.HitN) {
        run = src.u8('prediction count');
        if (run < 2) {
          throw src.fail(
            ErrorCode.V2_BAD_CODEWORD,
            `a hit-N codeword counts ${run} predictions`,
            'a count of 2..255 (tags 0 and 1 code 0 and 1)',
            src.pos - 1,
          );
        }
      }
      if (depth + run > V2_MAX_STACK_DEPTH) throw tooDeep(src, at);
      if (depth + run > previous.length) previous = this.room(depth + run);
      let p = bucket;
      for (let k = 0; k < run; k++) {
        p = next[p]!;
        if (!filled[p]) throw undefinedBucket(src, p, at);
        previous[depth++] = cache[p]!;
      }
      predictor = p;
    }
    this.previousDepth = depth;
    for (let i = 0; i < depth; i++) out[i] = previous[depth - 1 - i]!;
    return depth;
  }
}

function tooDeep(src: ByteSource, at: number): ProfpackError {
  return src.fail(
    ErrorCode.V2_STACK_TOO_DEEP,
    `predicted stack grows beyond ${V2_MAX_STACK_DEPTH} frames`,
    `at most ${V2_MAX_STACK_DEPTH} frames`,
    at,
  );
}

function undefinedBucket(src: ByteSource, bucket: number, at: number): ProfpackError {
  return src.fail(
    ErrorCode.V2_UNDEFINED_BUCKET,
    `codeword uses cache bucket ${bucket}, which no miss has filled`,
    'a bucket filled by an earlier miss',
    at,
  );
}
