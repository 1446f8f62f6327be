/**
 * What recorded a file, kept inside a version-1 Tachyon file that CPython
 * 3.15 still reads: one extra string in the string table, which no frame
 * names. CPython's reader parses every string the footer counts and resolves
 * only the ones frames refer to (shared notes, tachyon-format.md §4, §10),
 * so the string costs nothing there. The header's Python version field stays
 * 3.15.2 (the format followed); `info` shows this note instead of it.
 */

/** The string starts with this, then JSON. */
export const RECORDED_BY_PREFIX = 'profpack:recorded-by ';

export interface RecordedBy {
  runtime: 'node';
  /** process.version, e.g. "v20.20.2". */
  version: string;
  /** process.platform-process.arch, e.g. "linux-x64". */
  platform: string;
  hostname: string;
  pid: number;
  /** The process's start, Unix epoch µs: with the pid, one process's identity across rotated files. */
  processStartUs: number;
  /** process.execArgv then process.argv (cut at MAX_ARGV_CHARS). */
  argv: string[];
  intervalUs: number;
  /** How samples are taken: V8's sampler ticks on wall time, idle time included as (idle). */
  mode: 'wall';
  /** The profpack version that recorded. */
  recorder: string;
}

export function encodeRecordedBy(about: RecordedBy): string {
  return RECORDED_BY_PREFIX + JSON.stringify(about);
}

/**
 * The note among a file's strings, if one is there and well formed (a damaged one is ignored: it is a courtesy, not
 * data).
 */
export function findRecordedBy(strings: readonly string[]): RecordedBy | undefined {
  for (let i = strings.length - 1; i >= 0; i--) {
    const s = strings[i]!;
    if (!s.startsWith(RECORDED_BY_PREFIX)) continue;
    try {
      const about = JSON.parse(s.slice(RECORDED_BY_PREFIX.length)) as RecordedBy;
      if (about !== null && typeof about === 'object' && about.runtime === 'node' && Number.isInteger(about.pid))
        return about;
    } catch {
      // not ours after all
    }
  }
  return undefined;
}

/** One process's identity across files: host, pid and the process's start. */
export function processIdentity(about: RecordedBy): string {
  return `${about.hostname}/${about.pid}/${about.processStartUs}`;
}
