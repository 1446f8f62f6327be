/**
 * What recorded a file, kept inside a version-1 Tachyon file that CPython
 * 3.15 still reads: one extra string in the string table, which no frame
 * names. CPython's reader parses every string the footer counts and resolves
 * only the ones frames refer to (shared notes, tachyon-format.md §4, §10),
 * so the string costs nothing there. The header's Python version field stays
 * 3.15.2 (the format followed); `info` shows this note instead of it.
 * Version 2 keeps the same fields one by one, as the model section's
 * producer fields (lib/tachyon/codec/model/producer-fields.ts).
 */

/** The string starts with this, then JSON. */
export const RECORDED_BY_PREFIX = 'profpack:recorded-by ';

export interface RecordedBy {
  runtime: 'node';
  /** process.version, e.g. "v20.20.2". */
  version: string;
  /** process.platform, e.g. "linux" (files before arch was its own field: "linux-x64"). */
  platform: string;
  /** process.arch, e.g. "x64". */
  arch?: string;
  hostname: string;
  pid: number;
  /** The parent's pid: a forked child's parent is the process that forked it. */
  ppid?: number;
  /** The process's start, Unix epoch µs: with the pid, one process's identity across rotated files. */
  processStartUs: number;
  /** process.execArgv then process.argv (cut at MAX_ARGV_CHARS). */
  argv: string[];
  intervalUs: number;
  /** How samples are taken: V8's sampler ticks on wall time, idle time included as (idle). */
  mode: 'wall';
  /** Whether frames were read at their source through source maps while recording (record --no-source-maps: false). */
  sourceMaps?: boolean;
  /** Whether V8's CPU profiler sampled (false: a heap-only recording, record --no-cpu; absent in older files). */
  cpu?: boolean;
  /**
   * A heap recording's sampler (lib/record/program/heap/probe.ts): V8's C++ API through the addon, or the inspector.
   */
  heapSampler?: 'native' | 'inspector';
  /** Why the inspector records the heap: the addon did not load, or was not asked for. */
  heapSamplerReason?: string;
  /** A heap recording's mean sampling interval, bytes. */
  heapIntervalBytes?: number;
  /** The profpack version that recorded. */
  recorder: string;
}

export function encodeRecordedBy(about: RecordedBy): string {
  return RECORDED_BY_PREFIX + JSON.stringify(about);
}

/**
 * What recorded a file: a version-2 model section's producer fields, else the
 * note among its strings (version 1), if well formed (a damaged one is
 * ignored: it is a courtesy, not data).
 */
export function findRecordedBy(strings: readonly string[], producer?: object): RecordedBy | undefined {
  const fields = asRecordedBy(producer);
  if (fields !== undefined) return fields;
  for (let i = strings.length - 1; i >= 0; i--) {
    const s = strings[i]!;
    if (!s.startsWith(RECORDED_BY_PREFIX)) continue;
    try {
      const about = asRecordedBy(JSON.parse(s.slice(RECORDED_BY_PREFIX.length)));
      if (about !== undefined) return about;
    } catch {
      // not ours after all
    }
  }
  return undefined;
}

/** The fields as a RecordedBy when they have its required fields with their types. */
function asRecordedBy(value: unknown): RecordedBy | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  const strings = ['version', 'platform', 'hostname', 'recorder'].every((k) => typeof v[k] === 'string');
  const numbers = ['pid', 'processStartUs', 'intervalUs'].every((k) => typeof v[k] === 'number');
  const argv = Array.isArray(v.argv) && v.argv.every((a) => typeof a === 'string');
  if (v.runtime !== 'node' || !Number.isInteger(v.pid) || !strings || !numbers || !argv) return undefined;
  return v as unknown as RecordedBy;
}

/** The platform as one word, e.g. "linux-x64" (a file from before arch was its own field has it in platform). */
export function platformName(about: RecordedBy): string {
  return about.arch === undefined ? about.platform : `${about.platform}-${about.arch}`;
}

/** One process's identity across files: host, pid and the process's start. */
export function processIdentity(about: RecordedBy): string {
  return `${about.hostname}/${about.pid}/${about.processStartUs}`;
}
