/**
 * `profpack record [options] -- node app.js [args]`: runs the target with
 * profpack's preload, which samples it with V8's sampler and streams the
 * samples into a Tachyon file, finalized when the target exits (normally, on
 * SIGINT/SIGTERM or on an uncaught exception).
 *
 * When the command is Node itself the preload goes in as `--require` right
 * after the executable; otherwise (npm, npx, a shell script) through
 * NODE_OPTIONS, which every Node process the command starts reads, and only
 * the first one records (the preload removes PROFPACK_RECORD_OUT).
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { RecordEnv } from '../../record/preload-env';
import { action } from '../user-error';

interface RecordFlags {
  intervalUs: string;
  out: string;
  compression: 'zstd' | 'none';
  workers?: boolean;
  harvestMs: string;
}

export const PRELOAD_PATH = path.resolve(__dirname, '..', '..', 'record', 'preload.js');

function isNode(command: string): boolean {
  const base = path.basename(command).toLowerCase();
  return command === process.execPath || base === 'node' || base === 'node.exe' || /^node\d+$/.test(base);
}

export function registerRecord(program: Command): Command {
  return program
    .command('record')
    .description('run a Node program and record its JS stacks into a Tachyon file')
    .argument('<command...>', 'the program to run, after --, e.g. -- node app.js')
    .option('--interval-us <us>', 'sampling interval in µs', '1000')
    .option('--out <file>', 'Tachyon file to write', 'profile.tach')
    .addOption(new Option('--compression <kind>', 'sample region compression').choices(['zstd', 'none']).default('zstd'))
    .option('--workers', 'also record worker threads, each as its own thread')
    .option('--harvest-ms <ms>', 'how often samples are moved from V8 to the file (what a hard crash can lose)', '1000')
    .passThroughOptions()
    .action(
      action(async (command: string[], flags: RecordFlags) => {
        const intervalUs = Number(flags.intervalUs);
        if (!Number.isInteger(intervalUs) || intervalUs < 1) throw new ProfpackError(`--interval-us must be a positive integer, not "${flags.intervalUs}"`, { code: ErrorCode.INVALID_ARGUMENT });
        const harvestMs = Number(flags.harvestMs);
        if (!Number.isFinite(harvestMs) || harvestMs < 1) throw new ProfpackError(`--harvest-ms must be ≥ 1, not "${flags.harvestMs}"`, { code: ErrorCode.INVALID_ARGUMENT });
        if (!existsSync(PRELOAD_PATH)) throw new ProfpackError(`the recording preload is missing (${PRELOAD_PATH}); run "npm run compile"`, { code: ErrorCode.RECORD_FAILED });
        const [exe, ...args] = command;
        if (exe === undefined) throw new ProfpackError('nothing to run: give the command after --', { code: ErrorCode.INVALID_ARGUMENT });
        const out = path.resolve(flags.out);
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          [RecordEnv.out]: out,
          [RecordEnv.intervalUs]: String(intervalUs),
          [RecordEnv.harvestMs]: String(harvestMs),
          [RecordEnv.compression]: flags.compression,
          [RecordEnv.workers]: flags.workers === true ? '1' : '0',
        };
        const node = isNode(exe);
        if (!node) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(PRELOAD_PATH)}`.trim();
        const child = spawn(exe, node ? ['--require', PRELOAD_PATH, ...args] : args, { stdio: 'inherit', env });
        // Like a shell: the terminal's Ctrl-C reaches the target too; wait for it to finalize and exit.
        const ignore = () => undefined;
        process.on('SIGINT', ignore);
        process.on('SIGTERM', ignore);
        const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
          child.on('error', (err) => reject(new ProfpackError(`cannot run "${exe}": ${err.message}`, { code: ErrorCode.RECORD_FAILED, cause: err })));
          child.on('exit', (c, s) => resolve({ code: c, signal: s }));
        });
        process.removeListener('SIGINT', ignore);
        process.removeListener('SIGTERM', ignore);
        if (existsSync(out)) process.stderr.write(`profpack: wrote ${flags.out} (${statSync(out).size.toLocaleString('en')} bytes)\n`);
        else process.stderr.write(`profpack: the target exited before writing ${flags.out}\n`);
        process.exitCode = signal !== null ? 128 + (signalNumber(signal) ?? 0) : (code ?? 1);
      }),
    );
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  return constants.signals[signal];
}
