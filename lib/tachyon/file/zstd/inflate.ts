/**
 * The one zstd decompression loop of the readers: a bounded stream that fills the caller's buffer a piece at a
 * time, over input held in memory or read from a file a chunk at a time. Concatenated frames are accepted, as
 * CPython 3.15.2 accepts them. Each reader says what its failures are (version 1's open-stage errors in
 * regions.ts, version 2's ERR_V2_ZSTD in zstd.ts); without them the stream is tolerant, as recover() needs:
 * it ends at the first undecodable byte, and at the limit.
 */
import { zstdBinding, type ZstdDCtx } from './binding';
import type { FileBytes } from '../header';

/** Compressed bytes read per step when the input is not already in memory. */
const INPUT_CHUNK = 1 << 20;

/** The errors of a strict stream; `at` is an offset in the compressed input (the file's, for file input). */
export interface InflateErrors {
  /** zstd refused the input (`cause`, its error) that starts at input byte `at`. */
  corrupt(cause: unknown, at: number): Error;
  /** The output passed the limit. */
  tooLarge(limit: number): Error;
  /** The input ended inside a frame. */
  truncated(): Error;
}

/** Compressed input: in memory, or bytes [start, end) of a file. */
export type InflateInput = Uint8Array | { source: FileBytes; start: number; end: number };

/** Idle decompression contexts kept for reuse (zstd-napi frees one only in a finalizer, on a later turn). */
const IDLE_DCTX = 2;
const idleDctx: ZstdDCtx[] = [];

/** A decompression context from the pool, reset for a new stream. */
export function acquireDctx(): ZstdDCtx {
  const reused = idleDctx.pop();
  if (reused === undefined) return new (zstdBinding().DCtx)();
  reused.reset(zstdBinding().ResetDirective.sessionOnly);
  return reused;
}

export function releaseDctx(dctx: ZstdDCtx): void {
  if (idleDctx.length < IDLE_DCTX) idleDctx.push(dctx);
}

export class ZstdInflater {
  private dctx: ZstdDCtx | null = acquireDctx();
  private readonly source: FileBytes | null;
  private readonly end: number;
  /** Input bytes consumed. */
  private pos = 0;
  private chunk: Uint8Array;
  private chunkStart = 0;
  /** Where file input is read when its source fills a buffer (FileBytes.readInto). */
  private inputBuffer: Uint8Array | undefined;
  /** zstd's last hint: 0 at a frame's end; nonzero before the first frame, so empty input is a cut frame. */
  private lastResult = 1;
  /** Bytes produced so far. */
  produced = 0;

  constructor(
    input: InflateInput,
    private readonly limit: number,
    private readonly errors: InflateErrors | null,
  ) {
    if (input instanceof Uint8Array) {
      this.source = null;
      this.chunk = input;
      this.end = input.length;
    } else {
      this.source = input.source;
      this.chunkStart = input.start;
      this.pos = input.start;
      this.end = input.end;
      this.chunk = new Uint8Array(0);
    }
  }

  /** Decompresses into out[0, ...) until it is full or the stream ends; returns the bytes written (0: the end). */
  read(out: Uint8Array): number {
    let written = 0;
    while (this.dctx !== null && written < out.length) {
      const room = this.errors === null ? Math.min(out.length, written + this.limit - this.produced) : out.length;
      if (room <= written) {
        this.release(); // a tolerant stream stops at its limit
        break;
      }
      const src = this.input();
      let r: [number, number, number];
      try {
        r = this.dctx.decompressStream(out.subarray(written, room), src);
      } catch (err) {
        this.release();
        if (this.errors === null) break; // what came before the undecodable block is kept
        throw this.errors.corrupt(err, this.pos);
      }
      this.lastResult = r[0];
      written += r[1];
      this.produced += r[1];
      this.pos += r[2];
      if (this.produced > this.limit && this.errors !== null) {
        this.release();
        throw this.errors.tooLarge(this.limit);
      }
      // Input used up and the output not full: zstd has flushed all it can.
      if (this.pos >= this.end && (written < room || (r[1] === 0 && r[2] === 0))) {
        this.release();
        if (this.lastResult !== 0 && this.errors !== null) throw this.errors.truncated();
      } else if (r[1] === 0 && r[2] === 0) {
        this.release(); // no progress with input left: the end, or a cut frame
        if (this.lastResult !== 0 && this.errors !== null) throw this.errors.truncated();
      }
    }
    return written;
  }

  /** Gives the context back to the pool (the end of the stream and an error do it too). */
  release(): void {
    if (this.dctx !== null) releaseDctx(this.dctx);
    this.dctx = null;
  }

  /** The unread input of the current chunk (reading the next one from the file when it is used up). */
  private input(): Uint8Array {
    if (this.source === null) return this.chunk.subarray(this.pos);
    const inChunk = this.pos - this.chunkStart;
    if (inChunk >= this.chunk.length && this.pos < this.end) {
      this.chunkStart = this.pos;
      const length = Math.min(this.end - this.pos, INPUT_CHUNK);
      if (this.source.readInto !== undefined) {
        // One buffer for the whole stream: the chunk before it is used up.
        this.inputBuffer ??= new Uint8Array(length);
        this.chunk = this.inputBuffer.subarray(0, this.source.readInto(this.inputBuffer.subarray(0, length), this.pos));
      } else {
        this.chunk = this.source.read(this.pos, this.pos + length);
      }
      return this.chunk;
    }
    return this.chunk.subarray(inChunk);
  }
}
