/**
 * Opening the files profpack reads, one way for every entry point (reader,
 * convert, openProfile, the CLI): a fs failure or a file that is not a regular
 * file is a ProfpackError with the path and the OS code in `details`, a FIFO
 * or device never blocks (opened O_NONBLOCK, refused after fstat), reads stop
 * at the size measured at open, and a reader can ask whether the file changed
 * since (size, mtime, ctime, inode: a truncation, a rewrite in place, a new
 * ProfileWriter on the same path).
 */
import type * as crypto from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { ErrorCode, ProfpackError, invalidArgument, type ErrorCodeValue } from './errors';

/** An open input file and what it was when opened. */
export interface InputFile {
  readonly fd: number;
  readonly path: string;
  /** Bytes, as measured by fstat at open. */
  readonly size: number;
  readonly stat: BigIntStats;
  /** Set by watchInput: the hash of the file's edges, how it was taken and the last fstat it was checked against. */
  watch?: { hash: bigint; hasher: EdgeHasher; head: number; tail: number; seen: BigIntStats };
}

/** A ProfpackError for a failed fs call: the path, the OS code and the syscall in details. */
export function fsError(err: unknown, path: string, what: string, code: ErrorCodeValue = ErrorCode.IO): ProfpackError {
  const sys = err as NodeJS.ErrnoException;
  const osCode = typeof sys?.code === 'string' ? sys.code : undefined;
  // Node's message repeats the code and the syscall ("ENOSPC: no space left on device, write"): keep its reason only.
  const raw = err instanceof Error ? err.message : String(err);
  const reason = raw.replace(/^[A-Z0-9_]+: /, '').replace(/, \w+( '.*')?$/, '');
  return new ProfpackError(`cannot ${what} ${path}: ${reason}${osCode ? ` (${osCode})` : ''}`, {
    code,
    cause: err,
    details: { path, osCode, errno: sys?.errno, syscall: sys?.syscall },
  });
}

function kindOf(st: BigIntStats): string {
  if (st.isDirectory()) return 'directory';
  if (st.isFIFO()) return 'FIFO';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isSocket()) return 'socket';
  return 'special file';
}

function notRegular(path: string, st: BigIntStats): ProfpackError {
  const kind = kindOf(st);
  return new ProfpackError(`${path} is a ${kind}, not a regular file`, {
    code: ErrorCode.NOT_REGULAR_FILE,
    expected: 'a regular file',
    details: { path, kind },
  });
}

/** Opens a regular file for reading, without blocking on anything else. `code` names fs failures. */
export function openInput(path: string, code: ErrorCodeValue = ErrorCode.IO): InputFile {
  if (typeof path !== 'string' || path.length === 0) throw invalidArgument('path must be a non-empty string', 'string');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    // A socket cannot be opened (ENXIO): say what it is rather than the errno.
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') {
      const st = statSync(path, { bigint: true, throwIfNoEntry: false });
      if (st && !st.isFile()) throw notRegular(path, st);
    }
    throw fsError(err, path, 'open', code);
  }
  let stat: BigIntStats;
  try {
    stat = fstatSync(fd, { bigint: true });
  } catch (err) {
    closeSync(fd);
    throw fsError(err, path, 'stat', code);
  }
  if (!stat.isFile()) {
    closeSync(fd);
    throw notRegular(path, stat);
  }
  return { fd, path, size: Number(stat.size), stat };
}

/** The bytes of an open input, at most the size measured at open (a growing file is read as it was). */
export function readInput(file: InputFile, code: ErrorCodeValue = ErrorCode.IO, length = file.size): Uint8Array {
  const bytes = Buffer.allocUnsafe(Math.min(length, file.size));
  readInputAt(file, bytes, 0, bytes.length, 0, code);
  return bytes;
}

/** Fills into[at, at + length) from the file at `offset`; a file now shorter than that is a coded change. */
function readInputAt(
  file: InputFile,
  into: Uint8Array,
  at: number,
  length: number,
  offset: number,
  code: ErrorCodeValue,
) {
  let done = 0;
  while (done < length) {
    let n: number;
    try {
      n = readSync(file.fd, into, at + done, length - done, offset + done);
    } catch (err) {
      throw fsError(err, file.path, 'read', code);
    }
    if (n === 0) {
      throw new ProfpackError(`the file changed while it was read: ${file.path} is shorter than when it was opened`, {
        code: ErrorCode.TACHYON_FILE_CHANGED,
        offset: offset + done,
        details: { path: file.path, sizeAtOpen: file.size },
      });
    }
    done += n;
  }
}

/**
 * An open input read in order through one reused buffer (1 MiB to start), for a reader that needs a bounded
 * stretch at a time: no fresh buffer of the whole file (a 45 MB .cpuprofile read whole was ~11 k page faults).
 * It starts at byte `from` (0: the file's start).
 */
export class InputWindow {
  private buffer: Buffer;
  /** The window's bytes (a view of the buffer's filled part) and the file offset of its first. */
  bytes: Uint8Array;
  offset = 0;

  constructor(
    private readonly file: InputFile,
    size = 1 << 20,
    private readonly code: ErrorCodeValue = ErrorCode.IO,
    from = 0,
  ) {
    this.buffer = Buffer.allocUnsafe(Math.max(0, Math.min(size, file.size - from)));
    readInputAt(file, this.buffer, 0, this.buffer.length, from, code);
    this.bytes = this.buffer;
    this.offset = from;
  }

  /** Whether the window holds the end of the file. */
  get final(): boolean {
    return this.offset + this.bytes.length === this.file.size;
  }

  /**
   * Moves on so that window position `keep` becomes position 0, and fills the rest from the file; when `keep` is 0
   * already (what is kept fills the window), the buffer doubles first. Returns the new bytes.
   */
  advance(keep: number): Uint8Array {
    const kept = this.bytes.length - keep;
    if (keep === 0) {
      const grown = Buffer.allocUnsafe(Math.min(this.buffer.length * 2, this.file.size - this.offset));
      this.buffer.copy(grown, 0, 0, kept);
      this.buffer = grown;
    } else this.buffer.copyWithin(0, keep, this.bytes.length);
    this.offset += keep;
    const length = Math.min(this.buffer.length, this.file.size - this.offset);
    readInputAt(this.file, this.buffer, kept, length - kept, this.offset + kept, this.code);
    this.bytes = length === this.buffer.length ? this.buffer : this.buffer.subarray(0, length);
    return this.bytes;
  }
}

/** Opens, reads whole and closes a regular file. */
export function readInputFile(path: string, code: ErrorCodeValue = ErrorCode.IO): Uint8Array {
  const file = openInput(path, code);
  try {
    return readInput(file, code);
  } finally {
    closeInput(file);
  }
}

/**
 * The size and SHA-256 of a regular file, read in 1 MiB pieces (memory stays
 * bounded); undefined when it cannot be opened or read (the caller's reader reports why).
 */
export function hashInputFile(path: string): { size: number; sha256: string } | undefined {
  let file: InputFile;
  try {
    file = openInput(path);
  } catch {
    return undefined;
  }
  try {
    // node:crypto loads here, on first use (~7 ms of CPU): `profpack record` imports this file and never hashes.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const hash = (require('node:crypto') as typeof crypto).createHash('sha256');
    const piece = Buffer.allocUnsafe(Math.min(file.size, 1 << 20));
    let done = 0;
    while (done < file.size) {
      const n = readSync(file.fd, piece, 0, Math.min(piece.length, file.size - done), done);
      if (n === 0) return undefined;
      hash.update(piece.subarray(0, n));
      done += n;
    }
    return { size: file.size, sha256: hash.digest('hex') };
  } catch {
    return undefined;
  } finally {
    closeInput(file);
  }
}

/** The size of a regular file, checked as openInput checks it (the CLI's progress bars, convert's summary). */
export function inputSize(path: string, code: ErrorCodeValue = ErrorCode.IO): number {
  const file = openInput(path, code);
  closeInput(file);
  return file.size;
}

/** Hashes the edges of an open file (watchInput): the JS twin is edgeHash, the native one the reader's addon. */
export type EdgeHasher = (fd: number, size: number, head: number, tail: number) => bigint | null;

/**
 * FNV-1a 64 of bytes [0, head) and [size - tail, size) of `bytes` (size = its length), each cut to it and never
 * overlapping: the same value as edgeHash of a file holding those bytes. The 64-bit state is two 32-bit halves, the
 * prime 2^40 + 0x1b3 a multiply of each half by 0x1b3 plus the low half shifted into the high one: a BigInt multiply
 * a byte took 3.3-3.8 µs for a Tachyon header and footer, this 0.5 µs (bench/RESULTS.md, "replay on small files").
 */
export function edgeHashOf(bytes: Uint8Array, head: number, tail: number): bigint {
  const size = bytes.length;
  const first = Math.min(head, size);
  const tailStart = size - Math.min(tail, size - first);
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < size; i++) {
    if (i === first) i = tailStart;
    if (i === size) break;
    // lo * 0x1b3 < 2^41: exact in a double; its bits above 32 carry into the high half.
    const low = (lo ^ bytes[i]!) >>> 0;
    const product = low * 0x1b3;
    hi = (Math.imul(hi, 0x1b3) + Math.floor(product / 0x100000000) + (low << 8)) >>> 0;
    lo = product >>> 0;
  }
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * FNV-1a 64 of bytes [0, head) and [size - tail, size) of an open file, each
 * cut to the file and never overlapping, by pread; null when they cannot all
 * be read. Same value as the native edgeHash (native/tachyon/read/reader_napi.cc).
 */
export function edgeHash(fd: number, size: number, head: number, tail: number): bigint | null {
  const first = Math.min(head, size);
  const tailStart = size - Math.min(tail, size - first);
  const bytes = Buffer.allocUnsafe(first + size - tailStart);
  try {
    for (const [at, start, end] of [
      [0, 0, first],
      [first, tailStart, size],
    ] as const) {
      for (let done = 0; done < end - start;) {
        const n = readSync(fd, bytes, at + done, end - start - done, start + done);
        if (n === 0) return null;
        done += n;
      }
    }
  } catch {
    return null;
  }
  return edgeHashOf(bytes, bytes.length, 0);
}

/**
 * Makes inputChange() judge the bytes the reader holds, not the file's
 * metadata alone, without reading the file again: a hash of its
 * first `head` and last `tail` bytes (a Tachyon header and footer) is taken
 * now by `hasher`, or from `held`, the file's bytes as read whole at open (no second read of its edges). Later, a
 * chmod, rename or unlink (ctime only) is no change;
 * an append is none while those bytes are as they were; a
 * truncation, a rewrite of them, or a rewrite in place that keeps the size
 * (mtime moved: its body cannot be judged without reading it) is.
 */
export function watchInput(
  file: InputFile,
  hasher: EdgeHasher = edgeHash,
  head = 0,
  tail = 0,
  held?: Uint8Array,
): void {
  const hash =
    held !== undefined && held.length === file.size
      ? edgeHashOf(held, head, tail)
      : hasher(file.fd, file.size, head, tail);
  if (hash !== null) file.watch = { hash, hasher, head, tail, seen: file.stat };
}

/**
 * What changed since open ('size', 'mtime', 'content', ...), or null; a failed
 * fstat counts as a change. A watched input (watchInput) is judged by size,
 * mtime and the hash of its edges; ctime and links alone are no change.
 */
export function inputChange(file: InputFile): string | null {
  let now: BigIntStats;
  try {
    now = fstatSync(file.fd, { bigint: true });
  } catch {
    return 'fstat';
  }
  const watch = file.watch;
  const was = watch?.seen ?? file.stat;
  if (now.size === was.size && now.mtimeNs === was.mtimeNs && now.ctimeNs === was.ctimeNs && now.ino === was.ino)
    return null;
  if (watch === undefined) {
    if (now.size !== was.size) return `size ${was.size} -> ${now.size}`;
    if (now.mtimeNs !== was.mtimeNs) return 'mtime';
    if (now.ctimeNs !== was.ctimeNs) return 'ctime';
    return 'inode';
  }
  if (now.size < BigInt(file.size)) return `size ${file.size} -> ${now.size}`;
  // Only metadata moved (chmod, rename, unlink, a new link): the bytes are as they were.
  if (now.size === was.size && now.mtimeNs === was.mtimeNs) {
    watch.seen = now;
    return null;
  }
  // Written to since: an append leaves the edges of [0, size) as they were, a rewrite of them does not.
  if (watch.hasher(file.fd, file.size, watch.head, watch.tail) !== watch.hash) return 'content';
  // Same size, newer mtime: rewritten in place, where only reading it all could tell whether its body is the same.
  if (now.size === BigInt(file.size)) return 'mtime';
  watch.seen = now;
  return null;
}

/** Closes once: a second call must not close a descriptor number the process has since reused. */
export function closeInput(file: InputFile): void {
  if (closedInputs.has(file)) return;
  closedInputs.add(file);
  closeSync(file.fd);
}

const closedInputs = new WeakSet<InputFile>();

/** The first `bytes` of a regular file (format detection), checked as openInput checks it. */
export function readInputHead(path: string, bytes = 4096, code: ErrorCodeValue = ErrorCode.IO): Uint8Array {
  const file = openInput(path, code);
  try {
    return readInput(file, code, bytes);
  } finally {
    closeInput(file);
  }
}
