/**
 * The profile files that fleet commands (top, merge, flame, export, sql)
 * read from the paths they are given: files as given, directories walked
 * (sorted by path) to the files whose name says they are profiles.
 *
 * Walking a directory that agents and people share:
 * - a file is read once, however many paths reach it (device and inode: a
 *   hard link, a symlink to a file, a file given twice);
 * - symlinks to directories are not followed (a loop counted samples ×41);
 * - a dangling link or an entry that cannot be read is skipped and counted;
 * - a Tachyon file whose header is still the writer's zero placeholder (a
 *   rotating recording writes into the directory) is skipped with a warning:
 *   the documented workflow reads the finished files beside it;
 * - profpack's own temporary outputs (output-file.ts) are not profiles.
 * A path given explicitly is never skipped: its own error is reported.
 */
import { closeSync, lstatSync, openSync, readSync, readdirSync, statSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { formatFromPath } from '../formats/index';
import { ErrorCode, ProfpackError } from '../errors';
import { fsError } from '../input';
import { TEMPORARY_PREFIX } from '../output-file';

/** Why a directory entry was left out. */
export type SkipReason = 'unfinished' | 'dangling-link' | 'unreadable' | 'directory-link' | 'duplicate';

export interface ListingOptions {
  /**
   * Called once per reason with every path skipped for it, after the walk.
   * Default: one `profpack: warning: …` line per reason on stderr; duplicates
   * are not reported (reading a file once is the point).
   */
  onSkipped?: (reason: SkipReason, paths: readonly string[]) => void;
  /**
   * 'skip' (default): a walk opens each Tachyon file it finds to skip one whose writer's header is still open.
   * 'caller': it does not; the files it found are in the result's `unchecked`, for a caller that opens each file
   * anyway to check it then (heap questions read each file once) and report what it skips (warnSkipped).
   */
  unfinished?: 'skip' | 'caller';
}

/** The files listed; with `unfinished: 'caller'`, the Tachyon files a walk found and did not check. */
export type ListedFiles = string[] & { unchecked: ReadonlySet<string> };

const WHY: Record<SkipReason, string> = {
  unfinished: "unfinished profile(s) skipped (a writer's header is still open)",
  'dangling-link': 'dangling link(s) skipped',
  unreadable: 'unreadable entr(ies) skipped',
  'directory-link': 'symlinked director(ies) not walked',
  duplicate: 'path(s) to a file already listed skipped',
};

/** The default report: a count and the first few paths, one line per reason. */
export function warnSkipped(reason: SkipReason, paths: readonly string[]): void {
  if (reason === 'duplicate' || paths.length === 0) return;
  const shown = paths.slice(0, 3).join(', ') + (paths.length > 3 ? `, … (${paths.length - 3} more)` : '');
  process.stderr.write(`profpack: warning: ${paths.length} ${WHY[reason]}: ${shown}\n`);
}

/** A Tachyon file whose first 4 bytes (the magic) are still zero: its writer has not finalized it. */
function isUnfinishedTachyon(file: string): boolean | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const head = new Uint8Array(4);
    const n = readSync(fd, head, 0, 4, 0);
    return n === 4 && head.every((b) => b === 0);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

export function listProfileFiles(inputs: readonly string[], options: ListingOptions = {}): ListedFiles {
  if (inputs.length === 0)
    throw new ProfpackError('no profile files given', {
      code: ErrorCode.FLEET_NO_INPUT,
      expected: 'one or more files or directories',
    });
  const files: string[] = [];
  const unchecked = new Set<string>();
  const seen = new Set<string>();
  const skipped = new Map<SkipReason, string[]>();
  const skip = (reason: SkipReason, p: string) => {
    let list = skipped.get(reason);
    if (list === undefined) skipped.set(reason, (list = []));
    list.push(p);
  };
  /** Adds a file unless it was listed already (by device and inode). */
  const add = (file: string, st: Stats) => {
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return skip('duplicate', file);
    seen.add(key);
    files.push(file);
  };

  function walk(dir: string, found: [string, Stats][]): void {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return skip('unreadable', dir);
    }
    for (const name of names) {
      if (name.startsWith(TEMPORARY_PREFIX)) continue;
      const p = path.join(dir, name);
      let st: Stats;
      try {
        st = lstatSync(p);
      } catch {
        skip('unreadable', p);
        continue;
      }
      if (st.isSymbolicLink()) {
        try {
          st = statSync(p);
        } catch {
          if (formatFromPath(name) !== undefined) skip('dangling-link', p);
          continue;
        }
        if (st.isDirectory()) {
          skip('directory-link', p);
          continue;
        }
      }
      if (st.isDirectory()) {
        walk(p, found);
        continue;
      }
      if (!st.isFile() || formatFromPath(name) === undefined) continue;
      if (formatFromPath(name) === 'tachyon' && options.unfinished === 'caller') unchecked.add(p);
      else if (formatFromPath(name) === 'tachyon') {
        const unfinished = isUnfinishedTachyon(p);
        if (unfinished === null) {
          skip('unreadable', p);
          continue;
        }
        if (unfinished) {
          skip('unfinished', p);
          continue;
        }
      }
      found.push([p, st]);
    }
  }

  for (const input of inputs) {
    let st: Stats;
    try {
      st = statSync(input);
    } catch (err) {
      // The path and the OS code in details, as lib/input.ts reports.
      throw fsError(err, input, 'read', ErrorCode.FLEET_NO_INPUT);
    }
    if (!st.isDirectory()) {
      add(input, st);
      continue;
    }
    const found: [string, Stats][] = [];
    walk(input, found);
    found.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [file, fileStat] of found) add(file, fileStat);
    if (found.length === 0) {
      report(skipped, options);
      throw new ProfpackError(`${input} holds no profile files`, {
        code: ErrorCode.FLEET_NO_INPUT,
        expected: 'files named *.tach, *.bin, *.pb.gz, *.cpuprofile, ...',
      });
    }
  }
  report(skipped, options);
  // Not enumerable: the result still compares and spreads as the plain list of paths it is.
  return Object.defineProperty(files, 'unchecked', { value: unchecked, enumerable: false }) as ListedFiles;
}

function report(skipped: Map<SkipReason, string[]>, options: ListingOptions): void {
  const onSkipped = options.onSkipped ?? warnSkipped;
  for (const [reason, paths] of skipped) onSkipped(reason, paths);
  skipped.clear();
}
