/**
 * Runs a command with profpack's recording preload: the engine of
 * `profpack record` and of the demo.
 *
 * When the command is Node itself the preload goes in as `--require` right
 * after the executable; otherwise (npm, npx, a shell script) through
 * NODE_OPTIONS, which every Node process the command starts reads, and only
 * the first one records (the preload removes PROFPACK_RECORD_OUT).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../errors';
import { RecordEnv } from './preload-env';

export const PRELOAD_PATH = path.join(__dirname, 'preload.js');

export interface RunRecordedOptions {
  out: string;
  intervalUs?: number;
  harvestMs?: number;
  compression?: 'zstd' | 'none';
  workers?: boolean;
  stdio?: 'inherit' | 'pipe' | 'ignore';
}

export interface RunRecordedResult {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function isNode(command: string): boolean {
  const base = path.basename(command).toLowerCase();
  return command === process.execPath || base === 'node' || base === 'node.exe' || /^node\d+$/.test(base);
}

export async function runRecorded(command: readonly string[], options: RunRecordedOptions): Promise<RunRecordedResult> {
  if (!existsSync(PRELOAD_PATH)) {
    throw new ProfpackError(`the recording preload is missing (${PRELOAD_PATH}); run "npm run compile"`, { code: ErrorCode.RECORD_FAILED });
  }
  const [exe, ...args] = command;
  if (exe === undefined) throw new ProfpackError('nothing to run: give the command after --', { code: ErrorCode.INVALID_ARGUMENT });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    [RecordEnv.out]: path.resolve(options.out),
    [RecordEnv.intervalUs]: String(options.intervalUs ?? 1000),
    [RecordEnv.harvestMs]: String(options.harvestMs ?? 1000),
    [RecordEnv.compression]: options.compression ?? 'zstd',
    [RecordEnv.workers]: options.workers === true ? '1' : '0',
  };
  const node = isNode(exe);
  if (!node) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(PRELOAD_PATH)}`.trim();
  const child = spawn(exe, node ? ['--require', PRELOAD_PATH, ...args] : args, { stdio: options.stdio ?? 'inherit', env });
  // Like a shell: the terminal's Ctrl-C reaches the target too; wait for it to finalize and exit.
  const ignore = (): void => undefined;
  process.on('SIGINT', ignore);
  process.on('SIGTERM', ignore);
  try {
    return await new Promise<RunRecordedResult>((resolve, reject) => {
      child.on('error', (err) => reject(new ProfpackError(`cannot run "${exe}": ${err.message}`, { code: ErrorCode.RECORD_FAILED, cause: err })));
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
  } finally {
    process.removeListener('SIGINT', ignore);
    process.removeListener('SIGTERM', ignore);
  }
}
