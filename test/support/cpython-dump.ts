/**
 * CPython 3.15's own reading of Tachyon files: check_with_cpython.py --json
 * (tachyon_dump.py's shape), one interpreter for a whole batch of files.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { beforeAll, expect } from 'vitest';
import { parseJsonExact } from './environment';
import { cpythonInterpreter, cpythonToolsDir } from './cpython.mjs';

/**
 * Finds (or builds) CPython before a file's tests, with time for a build: a missing CPython fails them, never
 * skips them.
 */
export function cpythonBeforeTests(): void {
  beforeAll(() => {
    expect(cpythonInterpreter()).toMatch(/python3\.15$/);
  }, 180_000);
}

export interface CPythonDump {
  file: string;
  accepted: boolean;
  /** Where CPython stopped: 'open', 'replay', or 'ok'. */
  stage: string;
  error: { message: string } | null;
  /** BinaryReader.get_info(); null when CPython refused the file at open. */
  info: {
    sample_count: number;
    thread_count: number;
    start_time_us: number | bigint;
    sample_interval_us: number | bigint;
    compression_type: number;
    mode: number | null;
    capture_features: number | null;
  } | null;
  samples: {
    thread_id: number | bigint;
    interpreter_id: number;
    timestamp_us: number | bigint;
    status: number;
    frames: unknown[];
  }[];
}

/** Each file's dump, by file name; integers beyond 2^53 stay exact (parseJsonExact). */
export function cpythonDumps(files: string[]): Map<string, CPythonDump> {
  const python = cpythonInterpreter();
  const checker = path.join(cpythonToolsDir, 'check_with_cpython.py');
  const run = spawnSync(python, [checker, '--python', python, '--json', ...files], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (run.error) throw run.error;
  const out = new Map<string, CPythonDump>();
  // One pretty-printed document per file, back to back.
  for (const doc of run.stdout.split(/(?<=\n\}\n)(?=\{)/).filter((d) => d.trim() !== '')) {
    const dump = parseJsonExact(doc) as CPythonDump;
    out.set(dump.file, dump);
  }
  if (out.size !== files.length)
    throw new Error(
      `CPython dumped ${out.size} of ${files.length} files (exit ${run.status}): ${run.stderr.slice(-2000)}`,
    );
  return out;
}
