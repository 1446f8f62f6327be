/**
 * `record --inline` of `node script.js args` run by the very Node that runs profpack: no second process. The
 * recording the preload would start (startRecording's inline writer, the same settings and file) starts here, then
 * the script runs as this process's main module through Node's own runner (`Module.runMain`, as ts-node and nyc run
 * theirs), with process.argv as `node script.js args` gives it. The program then owns the process: its exit code,
 * signals, uncaught exceptions and output are its own, and record's summary is said on the way out.
 */
import { existsSync, realpathSync } from 'node:fs';
import * as nodeModule from 'node:module';
import * as path from 'node:path';
import { defaultCompression } from '../../tachyon/index';
import { refuseInputAsOutput } from '../../output-file';
import { isProfpackError } from '../../errors';
import { checkCpu, checkHeapOptions, PRELOAD_PATH, RecordEnv } from '../settings/index';
import type * as recordingModule from '../start/index';
import type { RecordingSummary } from '../start/index';
import type { HostSummary } from '../writer/index';
import { childBase, findChildFiles, recordChildren, type RunRecordedOptions } from './run-recorded';

/** Node's main-module runner: resolves process.argv[1] and runs it as CommonJS or ESM, as `node script` does. */
const runMain = (nodeModule as unknown as { runMain?: () => void }).runMain;

/** A command this process can run as its own main module. */
export interface InProcessCommand {
  /** The script, absolute, as Node puts it in process.argv[1]. */
  script: string;
  args: string[];
}

/**
 * `command` as a script for this Node, or why it must run in a process of its own (a line for the user, when the
 * command is this Node). Only `node script.js args` with nothing between the executable and the script: a node flag
 * (`--expose-gc`, `-r`, `--max-old-space-size`) changes the VM, which this process has already started without it.
 */
export function inProcessCommand(
  command: readonly string[],
  options: RunRecordedOptions,
): InProcessCommand | { reason?: string } {
  const [exe = '', script, ...args] = command;
  // Not a Node program, or another Node: it runs as it would without --inline, and that needs no word.
  if (!isThisNode(exe)) return {};
  if (typeof runMain !== 'function') return { reason: `this Node (${process.version}) has no Module.runMain` };
  if (script === undefined || script.startsWith('-')) return { reason: 'node flags are given' };
  // Flags of profpack's own Node (`node --inspect profpack.js`) would apply to the program too.
  if (process.execArgv.length > 0) return { reason: `profpack's Node runs with flags (${process.execArgv.join(' ')})` };
  // A worker loads the preload from its parent's execArgv (`--require`), which this process does not have.
  if (options.workers === true) return { reason: '--workers records each worker through the preload' };
  if ((options.stdio ?? 'inherit') !== 'inherit') return { reason: "its stdio is not this process's" };
  return { script: path.resolve(script), args };
}

/** `exe` is process.execPath itself, or a name or path that resolves to the same file. */
function isThisNode(exe: string): boolean {
  if (exe === process.execPath) return true;
  const base = path.basename(exe).toLowerCase();
  if (base !== 'node' && base !== 'node.exe') return false;
  const candidates =
    exe.includes('/') || exe.includes(path.sep)
      ? [path.resolve(exe)]
      : (process.env.PATH ?? '')
          .split(path.delimiter)
          .filter((dir) => dir !== '')
          .map((dir) => path.join(dir, exe));
  // The first on PATH is the one a shell would start.
  const found = candidates.find((file) => existsSync(file));
  try {
    return found !== undefined && realpathSync(found) === realpathSync(process.execPath);
  } catch {
    return false;
  }
}

/** What record says once the program has ended (from process 'exit', or before a signal ends the process). */
export interface InProcessEnd {
  summary: HostSummary;
  childFiles: string[];
  /** The program's exit code as it stands (process.exitCode; 0 when it set none). */
  code: number;
}

/**
 * Starts the recording and schedules the program: resolves once both are done, rejects with a ProfpackError when
 * the recording cannot start as asked (the program then does not run, as with the preload). `onEnd` is called once,
 * when the recording has been finalized (the program ended, however the inline writer saw it end: exit,
 * process.exit, an uncaught exception, SIGINT/SIGTERM).
 */
export function recordInProcess(
  run: InProcessCommand,
  options: RunRecordedOptions,
  onEnd: (end: InProcessEnd) => void,
): Promise<void> {
  refuseInputAsOutput(options.out, [run.script, ...run.args]);
  const intervalUs = options.intervalUs ?? 1000;
  const heap = options.heap === undefined ? undefined : checkHeapOptions(options.heap);
  const cpu = checkCpu(options.cpu, heap !== undefined, false);
  const compression = options.compression ?? defaultCompression(options.onWarning);
  const env = process.env;
  // The program's environment as the preload leaves it: its children's settings, nothing of its own pipe.
  for (const name of [RecordEnv.fd, RecordEnv.inline, RecordEnv.channel, RecordEnv.workerHeap]) delete env[name];
  env[RecordEnv.intervalUs] = String(intervalUs);
  env[RecordEnv.harvestMs] = String(options.harvestMs ?? 1000);
  env[RecordEnv.workers] = '0';
  const children = recordChildren(env, options, cpu, compression);
  if (children) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(PRELOAD_PATH)}`.trim();
  const startedMs = Date.now();

  // Said when the recording stops. Node reports an uncaught exception after the process's 'exit' listeners, where no
  // JS runs any more: then this comes before that report (with the preload, record spoke after the program's end).
  const end = (summary: RecordingSummary): void =>
    onEnd({
      summary: {
        out: options.out,
        samples: summary.samples,
        threads: summary.threads,
        durationSec: summary.durationSec,
        complete: true,
        truncatedBytes: 0,
        heard: true,
        stacksAtCap: 0,
        ...(summary.heapEvents === undefined ? {} : { inlineHeapEvents: summary.heapEvents }),
      },
      childFiles: children ? findChildFiles(childBase(options.out), startedMs) : [],
      code: typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0),
    });

  // Loaded here, before the sampler starts: the writer's modules, like the CLI's, are not in the profile.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the writer loads only in this mode
  const { startRecording, asRecorderWork } = require('../start/index') as typeof recordingModule;
  return new Promise((resolve, reject) => {
    // Out of every CLI frame: the sampler's first sample (V8 takes one at its start) holds none of the CLI's, and what
    // the program throws is uncaught (Node prints it and exits 1), as under plain node. What follows the sampler's
    // start here (argv, the runner's immediate) is the recorder's work, not the program's allocations.
    setImmediate(() =>
      asRecorderWork(() => {
        try {
          startRecording({
            intervalUs,
            harvestMs: options.harvestMs,
            heap,
            cpu,
            writer: 'inline',
            out: options.out,
            compression,
            flushIntervalMs: options.flushIntervalMs,
            sourceMaps: options.sourceMaps,
            onStop: end,
          });
        } catch (err) {
          // As the preload: a setting that cannot be honoured stops here, before the program runs; anything else
          // loses only the recording.
          if (isProfpackError(err)) return void reject(err);
          process.stderr.write(`profpack: not recording: ${err instanceof Error ? err.message : String(err)}\n`);
        }
        process.argv = [process.execPath, run.script, ...run.args];
        // profpack's own stdout handling (a closed pipe ends a command quietly) is not the program's: under plain node
        // an EPIPE on stdout with no listener is the program's uncaught error.
        process.stdout.removeAllListeners('error');
        // The exit code the CLI's main left (0) is not the program's.
        process.exitCode = undefined;
        setImmediate(runMain!);
        resolve();
      }),
    );
  });
}
