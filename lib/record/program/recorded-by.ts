/** This process as a recording's origin: the note lib/recorded-by.ts keeps in each file. */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { RecordedBy } from '../../recorded-by';
import { packageVersion } from '../../version';
import { heapSamplerChoice } from './heap/index';
import { PRELOAD_PATH } from '../settings/index';
import type { AgentSettings } from './agent';

/** The note's format, for the recorder beside what it describes. */
export { encodeRecordedBy, type RecordedBy } from '../../recorded-by';

/** Longest argv kept: a command line with thousands of file names must not bloat every file. */
const MAX_ARGV_CHARS = 4096;

/**
 * This process as a recording's origin, with what samples it (CPU on or off, the heap sampler and its interval);
 * `sourceMaps`: whether its frames are read through source maps.
 */
export function describeThisProcess(
  settings: Pick<AgentSettings, 'intervalUs' | 'cpu' | 'heap'>,
  sourceMaps: boolean,
  recorder = packageVersion(),
): RecordedBy {
  const argv: string[] = [];
  let chars = 0;
  // profpack's own preload is how the recording started, not part of the user's command.
  const execArgv = process.execArgv.filter(
    (arg, k, all) => !isOwnPreload(arg) && !(arg === '--require' && isOwnPreload(all[k + 1])),
  );
  for (const arg of [process.argv[0] ?? 'node', ...execArgv, ...process.argv.slice(1)]) {
    if (chars + arg.length > MAX_ARGV_CHARS) {
      argv.push('…');
      break;
    }
    argv.push(arg);
    chars += arg.length;
  }
  const about: RecordedBy = {
    runtime: 'node',
    version: process.version,
    platform: process.platform,
    arch: process.arch,
    hostname: hostname(),
    pid: process.pid,
    ppid: process.ppid,
    processStartUs: Math.round(performance.timeOrigin * 1000),
    argv,
    intervalUs: settings.intervalUs,
    mode: 'wall',
    sourceMaps,
    recorder,
    cpu: settings.cpu,
  };
  if (settings.heap !== undefined) {
    // The choice is this thread's, made once: the one the heap recorder then polls through.
    const { kind, reason } = heapSamplerChoice();
    about.heapSampler = kind;
    if (reason !== undefined) about.heapSamplerReason = reason;
    about.heapIntervalBytes = settings.heap.intervalBytes;
  }
  return about;
}

function isOwnPreload(arg: string | undefined): boolean {
  return arg !== undefined && resolve(arg.replace(/^--require=/, '')) === PRELOAD_PATH;
}
