/**
 * What recover() (index.ts, v2.ts) reads and how it fails: the
 * profile and its journal, read whole or by ranges, and the coded errors of
 * a recovery (ERR_TACHYON_RECOVER_FAILED, ERR_TACHYON_RECOVER_V2, a journal
 * whose tables do not read with its records).
 */
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import { HEADER_SIZE } from '../format';
import { JOURNAL_SUFFIX, type FileBytes } from '../file/index';

export interface RecoverResult {
  /**
   * 'journal': up to the last flush; 'records': complete records, placeholder frames; 'finalized': the input was
   * already whole and is copied.
   */
  source: 'journal' | 'records' | 'finalized';
  samples: number;
  threads: number;
  frames: number;
  /** Sample-region bytes on disk that were not recovered (after the last flush, or a cut record). */
  droppedBytes: number;
  checkpoints: number;
}

export function failure(message: string, details?: Record<string, unknown>, cause?: unknown): ProfpackError {
  return new ProfpackError(message, {
    code: ErrorCode.TACHYON_RECOVER_FAILED,
    expected: 'a profile written by a ProfileWriter that did not finalize',
    details,
    cause,
  });
}

export function readFailure(err: unknown, path: string, what: string): ProfpackError {
  if (isProfpackError(err)) return err;
  const code = (err as NodeJS.ErrnoException).code;
  return failure(`cannot read ${what} ${path}: ${(err as Error).message}`, { path, syscallError: code }, err);
}

export function readInput(path: string, what: string): Uint8Array {
  try {
    const st = fs.statSync(path);
    if (!st.isFile()) throw failure(`${what} ${path} is not a regular file`, { path });
    return fs.readFileSync(path);
  } catch (err) {
    throw readFailure(err, path, what);
  }
}

/** A file read by ranges (a version-2 file recorded for months is GBs: never read whole); close() ends it. */
export interface RangeInput extends FileBytes {
  close(): void;
}

export function openRanges(path: string, what: string): RangeInput {
  let fd = -1;
  try {
    // stat before open: a FIFO is refused without blocking.
    if (!fs.statSync(path).isFile()) throw failure(`${what} ${path} is not a regular file`, { path });
    fd = fs.openSync(path, 'r');
    const size = fs.fstatSync(fd).size;
    const file = fd;
    const readInto = (out: Uint8Array, start: number): number => {
      const length = Math.max(0, Math.min(out.length, size - start));
      for (let done = 0; done < length;) {
        let n: number;
        try {
          n = fs.readSync(file, out, done, length - done, start + done);
        } catch (err) {
          throw readFailure(err, path, what);
        }
        if (n === 0) throw failure(`${what} ${path} became shorter while it was read`, { path });
        done += n;
      }
      return length;
    };
    const read = (start: number, end: number): Uint8Array => {
      const bytes = Buffer.allocUnsafe(Math.max(0, Math.min(end, size) - start));
      readInto(bytes, start);
      return bytes;
    };
    return { size, read, readInto, close: () => fs.closeSync(file) };
  } catch (err) {
    if (fd >= 0) fs.closeSync(fd);
    throw readFailure(err, path, what);
  }
}

/**
 * The file recover() built does not read back: with a journal, its tables do
 * not fit the records its checkpoints name (the checksums held, the content
 * did not); without one, the salvage missed something. Never written.
 */
export function unreadableResult(err: unknown, outPath: string, journaled: boolean): ProfpackError {
  const why = isProfpackError(err) ? `${err.code}: ${err.message}` : String(err);
  if (journaled) {
    return new ProfpackError(
      `the journal's tables do not match the records it names: ` +
        `the profile they make does not read (${why}); ${outPath} was not written`,
      {
        code: ErrorCode.TACHYON_JOURNAL_CORRUPT,
        expected: 'string and frame tables that every recovered record resolves against',
        cause: err,
        details: { path: outPath },
      },
    );
  }
  return failure(`the recovered records do not read back (${why}); ${outPath} was not written`, { path: outPath }, err);
}

/** No journal (or none with a checkpoint): nothing names the frames of a version-2 file's blocks. */
export function refuseWithoutJournal(inPath: string): ProfpackError {
  return new ProfpackError(
    `${inPath} is an unfinished version-2 profile without a journal (${inPath}${JOURNAL_SUFFIX}, written at ` +
      `each flush()): nothing names the frames of its samples or holds its heap events`,
    {
      code: ErrorCode.TACHYON_RECOVER_V2,
      offset: HEADER_SIZE,
      expected: 'the journal a version-2 ProfileWriter writes at flush() (or an unfinished version-1 profile)',
      details: { path: inPath },
    },
  );
}
