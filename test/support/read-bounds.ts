/**
 * Reading a Tachyon file for the resource-bound tests (test/fuzz/*-bounds): in a child process that
 * owns nothing else, so that its peak RSS is the reader's (test/fuzz/child/read-profile.cjs), or in
 * this process with the ProfpackError code as the outcome. Both on every backend the process has.
 */
import * as path from 'node:path';
import { isProfpackError } from '../../lib/errors';
import { ProfileReader, type Sample } from '../../lib/tachyon/index';
import { repoRoot } from './environment';
import { childJson } from './child';

/** The child's one JSON line: the outcome, and its peak RSS (KiB) before opening and after replaying. */
export interface ChildRead {
  ok: boolean;
  code?: string;
  name?: string;
  samples?: number;
  ms: number;
  rssBeforeKb: number;
  peakRssKb: number;
}

export function readInChild(file: string, which: string, maxDecompressedSize?: number): ChildRead {
  const args = [path.join(repoRoot, 'test', 'fuzz', 'child', 'read-profile.cjs'), file, which];
  if (maxDecompressedSize !== undefined) args.push(String(maxDecompressedSize));
  // --max-old-space-size keeps a runaway JS heap from taking the machine with it.
  return childJson<ChildRead>(['--max-old-space-size=512', ...args]);
}

/**
 * Opens and replays in this process, handing each sample to `each`: the ProfpackError code or 'ok',
 * the samples replayed before it, and the CPU time it took (user + system: on a loaded machine the wall time
 * is the other processes' too). Any other error is thrown.
 */
export function readHere(
  bytes: Uint8Array,
  which: 'native' | 'js',
  options: Record<string, unknown> = {},
  each: (sample: Sample) => void = () => {},
): { code: string; cpuMs: number; samples: number } {
  const cpu0 = process.cpuUsage();
  let samples = 0;
  let code = 'ok';
  try {
    const reader = ProfileReader.fromBuffer(bytes, { ...options, backend: which });
    for (const sample of reader.samples()) {
      each(sample);
      samples++;
    }
    reader.close();
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    code = err.code;
  }
  const cpu = process.cpuUsage(cpu0);
  return { code, cpuMs: (cpu.user + cpu.system) / 1000, samples };
}
