/**
 * Where the JS writer's bytes go: a 512 KiB buffer in front of a file
 * descriptor (CPython 3.15.2 batches its writes the same way, seed 003
 * "Memory-Mapped I/O"), and a streaming zstd compressor (zstd-napi, libzstd
 * 1.5.7 like CPython's Debian build) for the sample region, fed 4 MiB of records a call.
 */
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import type { ByteSink } from '../../byte-sink';
import type { PatchableSink } from '../../varint/index';
import { WRITE_BUFFER_SIZE, ZSTD_INPUT_SIZE } from '../format';
import { zstdBinding } from './zstd/index';

/** A failed write(), as the error every writer operation reports. */
export function ioError(err: unknown, what: string): ProfpackError {
  // The native writer's error already says what failed: one prefix, not "failed while X: failed while Y".
  if (isProfpackError(err) && err.code === ErrorCode.TACHYON_WRITE_IO) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const text = err instanceof Error ? err.message : String(err);
  return new ProfpackError(`writing the profile failed while ${what}: ${text}`, {
    code: ErrorCode.TACHYON_WRITE_IO,
    expected: 'a writable, seekable file with room for the profile',
    cause: err,
    details: code === undefined ? undefined : { syscallError: code },
  });
}

/** What the record encoder appends to: `buf` never moves, `ensure(n)` makes room for n bytes at `len`. */
export interface RecordSink {
  readonly buf: Uint8Array;
  len: number;
  ensure(bytes: number): void;
}

function writeAll(fd: number, bytes: Uint8Array, position: number | null): number {
  let done = 0;
  while (done < bytes.length) {
    const n = fs.writeSync(fd, bytes, done, bytes.length - done, position === null ? null : position + done);
    if (n <= 0) throw Object.assign(new Error('write() wrote nothing'), { code: 'EIO' });
    done += n;
  }
  return done;
}

/**
 * The raw file: appends go through a 512 KiB buffer written with one
 * write() per flush; patches (the header at finalize) are positioned writes.
 * With `memory`, the "file" is that buffer instead (no descriptor).
 */
export class FileOutput implements PatchableSink, RecordSink {
  readonly buf = new Uint8Array(WRITE_BUFFER_SIZE);
  len = 0;
  /** Bytes already handed to the kernel. */
  flushed = 0;

  constructor(
    readonly fd: number,
    private readonly memory: ByteSink | null = null,
  ) {}

  private put(bytes: Uint8Array, position: number | null): number {
    if (this.memory === null) return writeAll(this.fd, bytes, position);
    if (position === null) this.memory.append(bytes);
    else this.memory.bytes.set(bytes, position);
    return bytes.length;
  }

  get position(): number {
    return this.flushed + this.len;
  }

  ensure(bytes: number): void {
    if (this.len + bytes > this.buf.length) this.flush();
  }

  write(bytes: Uint8Array): void {
    if (bytes.length > this.buf.length - this.len) {
      this.flush();
      if (bytes.length > this.buf.length) {
        this.flushed += this.put(bytes, null);
        return;
      }
    }
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  flush(): void {
    if (this.len === 0) return;
    const pending = this.buf.subarray(0, this.len);
    try {
      this.put(pending, null);
    } catch (err) {
      throw ioError(err, 'flushing the write buffer');
    }
    this.flushed += this.len;
    this.len = 0;
  }

  writeAt(offset: number, bytes: Uint8Array): void {
    this.flush();
    try {
      this.put(bytes, offset);
    } catch (err) {
      throw ioError(err, `patching ${bytes.length} bytes at offset ${offset}`);
    }
  }
}

/** How a compress call ends: keep buffering, flush everything fed so far into complete blocks, or end the frame. */
export type ZstdDirective = 'continue' | 'flush' | 'end';

type CCtx = InstanceType<ReturnType<typeof zstdBinding>['CCtx']>;

/**
 * Compression contexts of finished streams, kept for the next one. zstd-napi
 * frees a context only in a finalizer that Node runs on a later event-loop
 * turn, so a context per writer (3.75 MB at level 5, 82 MB at level 19) piles
 * up in a loop of writers; reusing them bounds a process to as many contexts
 * as it has writers open at once, plus IDLE_CONTEXTS.
 */
const idleContexts: CCtx[] = [];
const IDLE_CONTEXTS = 2;

/** One zstd frame streamed at `level`: no content size (CPython's frames have none), no checksum. */
export class ZstdStream {
  private readonly z = zstdBinding();
  private cctx: CCtx | null;
  private readonly out = new Uint8Array(this.z.cStreamOutSize());

  constructor(level: number) {
    const reused = idleContexts.pop();
    // A reset to default parameters, then the level: the same frame as a new context's.
    if (reused !== undefined) reused.reset(this.z.ResetDirective.sessionAndParameters);
    this.cctx = reused ?? new this.z.CCtx();
    this.cctx.setParameter(this.z.CParameter.compressionLevel, level);
  }

  /** Gives the context back for reuse (the frame, ended or not, is abandoned). Idempotent. */
  release(): void {
    const cctx = this.cctx;
    if (cctx === null) return;
    this.cctx = null;
    if (idleContexts.length < IDLE_CONTEXTS) {
      cctx.reset(this.z.ResetDirective.sessionAndParameters);
      idleContexts.push(cctx);
    }
  }

  /**
   * Feeds `input` (continue), or also flushes (ZSTD_e_flush: every byte fed
   * so far becomes decodable from the output, the frame stays open), or ends
   * the frame (`end`, with empty input, so libzstd never learns a total size
   * and writes none in the frame header).
   */
  compress(input: Uint8Array, directive: ZstdDirective, sink: PatchableSink): void {
    const d =
      directive === 'end'
        ? this.z.EndDirective.end
        : directive === 'flush'
          ? this.z.EndDirective.flush
          : this.z.EndDirective.continue;
    const cctx = this.cctx;
    if (cctx === null) throw new Error('the zstd stream was released');
    let rest = input;
    for (;;) {
      const [remaining, produced, consumed] = cctx.compressStream2(this.out, rest, d);
      if (produced > 0) sink.write(this.out.subarray(0, produced));
      rest = rest.subarray(consumed);
      if (rest.length === 0 && (directive === 'continue' || remaining === 0)) return;
    }
  }
}

/** The sample region under compression: ZSTD_INPUT_SIZE of raw records per zstd call, output to the file. */
export class CompressingSink implements RecordSink {
  readonly buf = new Uint8Array(ZSTD_INPUT_SIZE);
  len = 0;
  private readonly stream: ZstdStream;
  /** Records were fed to zstd since the last ZSTD_e_flush (libzstd may hold some of them). */
  private unflushed = false;

  constructor(
    private readonly file: FileOutput,
    level: number,
  ) {
    this.stream = new ZstdStream(level);
  }

  ensure(bytes: number): void {
    if (this.len + bytes > this.buf.length) this.drain();
  }

  /** Each ZSTD_INPUT_SIZE of records reaches the file as soon as it is compressed (one write() per drain). */
  drain(): void {
    if (this.len === 0) return;
    this.compressBuffered('continue');
    this.file.flush();
  }

  /**
   * Compresses the buffered records with ZSTD_e_flush and writes the output:
   * every record given so far can then be decompressed from the file. A no-op
   * on the bytes when nothing was given since the last flush (no empty block).
   */
  flush(): void {
    if (this.len > 0 || this.unflushed) this.compressBuffered('flush');
    this.file.flush();
  }

  /** The buffered records to zstd; after 'continue' libzstd may hold some of them, after 'flush' none. */
  private compressBuffered(directive: 'continue' | 'flush'): void {
    const n = this.len;
    this.len = 0;
    this.stream.compress(this.buf.subarray(0, n), directive, this.file);
    this.unflushed = directive === 'continue';
  }

  /** Compresses what is left and ends the frame. */
  finish(): void {
    this.drain();
    this.stream.compress(new Uint8Array(0), 'end', this.file);
    this.stream.release();
  }

  release(): void {
    this.len = 0;
    this.stream.release();
  }
}
