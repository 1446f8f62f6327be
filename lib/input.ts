/**
 * Opening the files profpack reads, one way for every entry point (reader,
 * convert, openProfile, the CLI): a fs failure or a file that is not a regular
 * file is a ProfpackError with the path and the OS code in `details`, a FIFO
 * or device never blocks (opened O_NONBLOCK, refused after fstat), reads stop
 * at the size measured at open, and a reader can ask whether the file changed
 * since (size, mtime, ctime, inode: a truncation, a rewrite in place, a new
 * ProfileWriter on the same path).
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { ErrorCode, ProfpackError, invalidArgument, type ErrorCodeValue } from './errors';

/** An open input file and what it was when opened. */
export interface InputFile {
  readonly fd: number;
  readonly path: string;
  /** Bytes, as measured by fstat at open. */
  readonly size: number;
  readonly stat: BigIntStats;
  /** Set by watchInput: a digest of bytes [0, size) and the last fstat they were checked against. */
  watch?: { digest: string; seen: BigIntStats };
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
  let done = 0;
  while (done < bytes.length) {
    let n: number;
    try {
      n = readSync(file.fd, bytes, done, bytes.length - done, done);
    } catch (err) {
      throw fsError(err, file.path, 'read', code);
    }
    if (n === 0) {
      throw new ProfpackError(`the file changed while it was read: ${file.path} is shorter than when it was opened`, {
        code: ErrorCode.TACHYON_FILE_CHANGED,
        offset: done,
        details: { path: file.path, sizeAtOpen: file.size },
      });
    }
    done += n;
  }
  return bytes;
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
    const hash = createHash('sha256');
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

/** SHA-1 of bytes [0, size) of the open file, read in 1 MiB pieces; null when they cannot all be read. */
function digestOf(file: InputFile): string | null {
  const hash = createHash('sha1');
  const piece = Buffer.allocUnsafe(Math.max(1, Math.min(file.size, 1 << 20)));
  let done = 0;
  try {
    while (done < file.size) {
      const n = readSync(file.fd, piece, 0, Math.min(piece.length, file.size - done), done);
      if (n === 0) return null;
      hash.update(piece.subarray(0, n));
      done += n;
    }
  } catch {
    return null;
  }
  return hash.digest('hex');
}

/**
 * Makes inputChange() judge the bytes read, not the file's metadata: a digest
 * of [0, size) is taken now, and a later append, chmod, rename or unlink
 * (which move size, mtime or ctime but leave those bytes) is no change; a
 * rewrite of them is (issue 29). Costs one more read of the file.
 */
export function watchInput(file: InputFile): void {
  const digest = digestOf(file);
  if (digest !== null) file.watch = { digest, seen: file.stat };
}

/**
 * What changed since open ('size', 'mtime', 'content', ...), or null; a failed
 * fstat counts as a change. A watched input (watchInput) is changed only when
 * the bytes [0, size) are: metadata alone is re-checked against them.
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
  // Written to since: an append leaves [0, size) as it was, a rewrite does not.
  if (digestOf(file) !== watch.digest) return 'content';
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
