/**
 * Writing the files profpack makes, one way for every command (convert,
 * merge, recover, downgrade, flame, diff): the bytes go to a temporary file
 * in the output's directory, renamed over the output only once they are all
 * written, so a failure (a full disk, a bad input half-way) leaves the old
 * output or nothing, never a 0-byte or half-written file; and an output that
 * is one of the inputs (the same device and inode, whatever the path says) is
 * refused before anything is opened for writing (`convert a.tach
 * -o a.tach` and `merge a b -o b` destroyed their input).
 *
 * An output that exists and is not a regular file (/dev/null, /dev/full, a
 * FIFO) is written in place: there is nothing to rename over it.
 */
import type * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, ProfpackError, type ErrorCodeValue } from './errors';
import { fsError } from './input';

/** stat of `p` (symlinks followed), or null when it does not exist. */
function statOrNull(p: string): fs.BigIntStats | null {
  try {
    return fs.statSync(p, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * Throws ERR_OUTPUT_IS_INPUT when `output` is the same file as one of
 * `inputs` (device and inode: a hard link, a symlink or `./a` vs `a` count).
 */
export function refuseInputAsOutput(output: string, inputs: Iterable<string>): void {
  const out = statOrNull(output);
  if (out === null || !out.isFile()) return;
  for (const input of inputs) {
    const st = statOrNull(input);
    if (st !== null && st.dev === out.dev && st.ino === out.ino) {
      throw new ProfpackError(`the output ${output} is the input ${input}: writing it would destroy what is read`, {
        code: ErrorCode.OUTPUT_IS_INPUT,
        expected: 'an output path that is none of the inputs',
        details: { output, input },
      });
    }
  }
}

/**
 * A temporary path beside `target` (same directory, so rename() is atomic):
 * hidden, and ending in the target's own name, so a writer that picks the
 * format from the name's extension picks the same one.
 */
export function temporaryPathFor(target: string): string {
  // node:crypto loads here, on first use (~7 ms of CPU): `profpack record` imports this file and never needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { randomBytes } = require('node:crypto') as typeof crypto;
  return path.join(
    path.dirname(target),
    `${TEMPORARY_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-${path.basename(target)}`,
  );
}

/** How temporary outputs' names start (directory listings of profiles skip them). */
export const TEMPORARY_PREFIX = '.profpack-tmp-';

/** True when `target` is written through a temporary file (it is missing or a regular file). */
export function writesThroughTemporary(target: string): boolean {
  const st = statOrNull(target);
  return st === null || st.isFile();
}

/**
 * An output being written: `fd` is open on the temporary file (or on the
 * target itself when it is a device or FIFO). commit() renames it over the
 * target; abort() removes it. Exactly one of them ends it.
 */
export class AtomicOutput {
  readonly fd: number;
  /** Where the bytes go until commit(). */
  readonly writePath: string;
  private done = false;

  constructor(
    readonly target: string,
    private readonly code: ErrorCodeValue = ErrorCode.IO,
  ) {
    this.writePath = writesThroughTemporary(target) ? temporaryPathFor(target) : target;
    if (this.writePath !== target) removeDeadTemporaries(target);
    try {
      this.fd = this.writePath === target ? fs.openSync(target, 'w') : fs.openSync(this.writePath, 'wx', 0o644);
    } catch (err) {
      throw fsError(err, target, 'write', code);
    }
  }

  /** Closes the file and renames it over the target. */
  commit(): void {
    if (this.done) return;
    this.done = true;
    try {
      fs.closeSync(this.fd);
      if (this.writePath !== this.target) fs.renameSync(this.writePath, this.target);
    } catch (err) {
      removeQuietly(this.writePath, this.target);
      throw fsError(err, this.target, 'write', this.code);
    }
  }

  /** Closes and removes the temporary file (the target is left as it was). */
  abort(): void {
    if (this.done) return;
    this.done = true;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed or failing: the file is removed below either way
    }
    removeQuietly(this.writePath, this.target);
  }
}

/**
 * Temporaries of `target` left by a process that is gone (SIGKILL between open and rename: nothing else removes
 * them): their names carry the writer's pid, so a later write of the same target removes those whose pid is not
 * alive. Only this target's, in its directory; a live writer's (or another user's: EPERM) are left alone.
 */
function removeDeadTemporaries(target: string): void {
  const dir = path.dirname(target);
  const suffix = `-${path.basename(target)}`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(TEMPORARY_PREFIX) || !name.endsWith(suffix)) continue;
    const m = /^(\d+)-[0-9a-f]{8}-/.exec(name.slice(TEMPORARY_PREFIX.length));
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    try {
      // A directory too: export's temporary directory of Parquet files.
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    } catch {
      // removed meanwhile, or not ours to remove
    }
  }
}

/**
 * A directory of outputs (export's Parquet files) written the same way: into a temporary directory beside
 * `target`, renamed to it (or its files renamed into an existing one) once `write` has written them all, and
 * removed when `write` fails, so a full disk leaves the old directory or none, never a partial one. A temporary
 * directory left by a writer that is gone is removed by the next write of the same target.
 */
export async function writeDirectoryThroughTemporary<T>(
  target: string,
  write: (dir: string) => Promise<T>,
): Promise<T> {
  const existing = statOrNull(target);
  if (existing !== null && !existing.isDirectory())
    throw new ProfpackError(`cannot create ${target}: it exists and is not a directory`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'a directory path',
    });
  removeDeadTemporaries(target);
  const temp = temporaryPathFor(target);
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.mkdirSync(temp);
  } catch (err) {
    throw fsError(err, target, 'create', ErrorCode.INVALID_ARGUMENT);
  }
  try {
    const result = await write(temp);
    if (statOrNull(target) === null) fs.renameSync(temp, target);
    else {
      for (const name of fs.readdirSync(temp)) fs.renameSync(path.join(temp, name), path.join(target, name));
      fs.rmdirSync(temp);
    }
    return result;
  } catch (err) {
    fs.rmSync(temp, { recursive: true, force: true });
    throw err instanceof ProfpackError ? err : fsError(err, target, 'write');
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeQuietly(p: string, target: string): void {
  if (p === target) return;
  try {
    fs.unlinkSync(p);
  } catch {
    // gone already
  }
}

/** Writes `bytes` to `target` through a temporary file; `code` names fs failures. */
export function writeFileAtomic(target: string, bytes: Uint8Array | string, code: ErrorCodeValue = ErrorCode.IO): void {
  const out = new AtomicOutput(target, code);
  try {
    fs.writeFileSync(out.fd, bytes);
  } catch (err) {
    out.abort();
    throw fsError(err, target, 'write', code);
  }
  out.commit();
}

/**
 * Runs `write(temporaryPath)` (which creates and fills the file itself, e.g.
 * through a ProfileWriter), then renames the result over `target`; on an
 * error the temporary file is removed and the error passed on.
 */
export function writeThroughTemporary<T>(
  target: string,
  write: (writePath: string) => T,
  code: ErrorCodeValue = ErrorCode.IO,
): T {
  const writePath = writesThroughTemporary(target) ? temporaryPathFor(target) : target;
  let result: T;
  try {
    result = write(writePath);
  } catch (err) {
    removeQuietly(writePath, target);
    throw err;
  }
  if (writePath !== target) {
    try {
      fs.renameSync(writePath, target);
    } catch (err) {
      removeQuietly(writePath, target);
      throw fsError(err, target, 'write', code);
    }
  }
  return result;
}
