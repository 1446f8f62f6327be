/**
 * Runs a command with profpack's recording preload: the engine of
 * `profpack record` and of the demo.
 *
 * When the command is Node itself the preload goes in as `--require` right
 * after the executable; otherwise (npm, npx, a shell script) through
 * NODE_OPTIONS, which every Node process the command starts reads, and only
 * the first one records (the preload removes PROFPACK_RECORD_FD).
 */
import { defaultCompression } from '../../tachyon/index';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../../errors';
import { refuseInputAsOutput } from '../../output-file';
import type { Readable } from 'node:stream';
import type * as writerModule from '../writer/index';
import type { HostSummary } from '../writer/index';
import {
  checkCpu,
  checkHeapOptions,
  PRELOAD_PATH,
  RecordEnv,
  type ChildRecording,
  type InlineRecording,
} from '../settings/index';
import { InlineListener } from './inline';
import type { HeapOptions, OnFile, RotateOptions } from '../settings/index';
import type { HeapEventSink } from '../wire/index';

export { PRELOAD_PATH };

export interface RunRecordedOptions {
  out: string;
  intervalUs?: number;
  harvestMs?: number;
  compression?: 'zstd' | 'none';
  workers?: boolean;
  stdio?: 'inherit' | 'pipe' | 'ignore';
  /** A new file every `everyMs` in `dir` (`out` is then not used), `keep` finished files left on disk. */
  rotate?: RotateOptions;
  /** Each finished file of a rotating recording, the last one included. */
  onFile?: OnFile;
  /** ProfileWriter flushIntervalMs of the file (default 1000): what a SIGKILL of this process loses. */
  flushIntervalMs?: number;
  /** Also record the target's heap (main thread). */
  heap?: HeapOptions | true;
  /** Where its heap events go instead of the file (default: the file's heap section, format version 2). */
  heapSink?: HeapEventSink;
  /**
   * Sample JS stacks (default true). False: a heap-only recording (it needs `heap`), V8's CPU profiler never
   * started, and the Node processes the command starts are not recorded (only the root records the heap).
   */
  cpu?: boolean;
  /**
   * After SIGINT/SIGTERM reaches this process, how long the command may take to exit before it gets SIGKILL
   * (default 10 s).
   */
  killAfterMs?: number;
  /**
   * Also record the Node processes the command starts (default true): each
   * writes its own file, `out` with its pid before ".tach" (with `rotate`,
   * rotating files in the same directory, whose names carry the pid).
   */
  children?: boolean;
  /** Frames of compiled scripts written at their source-mapped position (default true). */
  sourceMaps?: boolean;
  /**
   * Called once when the file cannot be written (ENOSPC, EIO…): recording stops there, the command goes on, the file
   * and its journal are kept (runRecorded then rejects with the same error, after the command exits).
   */
  onWriteError?: (error: ProfpackError) => void;
  /** What is said of a source map not used, e.g. one over MAX_MAP_BYTES (default: process.emitWarning). */
  onWarning?: (warning: string) => void;
  /**
   * The file written in the program by the preload (startRecording's inline writer), not in this process, which
   * then loads no writer: one process less at work. A SIGKILL of the program (or its abort, out of memory) leaves
   * the file as last flushed (`flushIntervalMs`) with its journal, for `profpack recover`, where the default keeps
   * up to the last harvest and finalizes. Not with `rotate`, `heapSink` or `onWriteError`.
   */
  inline?: boolean;
}

export interface RunRecordedResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What was written (no samples and `heard` false: the command never ran the preload). */
  summary: HostSummary;
  /** The child processes' files (children recorded, not rotating), in pid order. */
  childFiles: string[];
}

function isNode(command: string): boolean {
  const base = path.basename(command).toLowerCase();
  return command === process.execPath || base === 'node' || base === 'node.exe' || /^node\d+$/.test(base);
}

/** How long a signalled target may take to exit before SIGKILL (`--kill-after`). */
export const DEFAULT_KILL_AFTER_MS = 10_000;

/**
 * After the command exits without its recorder's 'end' (it crashed or was killed) while a grandchild that inherited
 * the pipe keeps it open: how long the pipe may stay silent before the file is finalized with what came. Not a
 * guess at how long the last harvest takes to arrive: the wait ends at the recorder's 'end' or the pipe's close, and
 * each byte that arrives starts the silence again.
 */
const PIPE_SILENCE_MS = 5000;

/**
 * Runs `command` recorded. This process writes the file (lib/record/wire): the
 * command's preload sends each harvest over an inherited pipe (fd 3), so a
 * command that is killed or crashes loses only the harvest it had not sent.
 * Throws a ProfpackError before running anything when `out` cannot be created.
 */
export async function runRecorded(command: readonly string[], options: RunRecordedOptions): Promise<RunRecordedResult> {
  if (!existsSync(PRELOAD_PATH)) {
    throw new ProfpackError(`the recording preload is missing (${PRELOAD_PATH}); run "npm run compile"`, {
      code: ErrorCode.RECORD_FAILED,
    });
  }
  const [exe, ...args] = command;
  if (exe === undefined)
    throw new ProfpackError('nothing to run: give the command after --', { code: ErrorCode.INVALID_ARGUMENT });
  // `record -o app.js -- node app.js` would write the profile over the program (and every flush, its journal).
  if (options.rotate === undefined) refuseInputAsOutput(options.out, commandFiles(command));
  const intervalUs = options.intervalUs ?? 1000;
  const heap = options.heap === undefined ? undefined : checkHeapOptions(options.heap);
  if (options.heapSink !== undefined && heap === undefined)
    throw new ProfpackError('heapSink needs heap', { code: ErrorCode.INVALID_ARGUMENT });
  const cpu = checkCpu(options.cpu, heap !== undefined, options.workers === true);
  // Chosen once here: the host and every child write the same, and the fallback is said once.
  const compression = options.compression ?? defaultCompression(options.onWarning);
  const inline = options.inline === true;
  if (inline && (options.rotate !== undefined || options.heapSink !== undefined))
    throw new ProfpackError('the inline writer writes one file: it excludes rotate and heapSink', {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  const host = inline ? new InlineListener(options.out) : startHost(options, intervalUs, compression, heap);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    [RecordEnv.fd]: String(PIPE_FD),
    [RecordEnv.intervalUs]: String(intervalUs),
    [RecordEnv.harvestMs]: String(options.harvestMs ?? 1000),
    [RecordEnv.workers]: options.workers === true ? '1' : '0',
  };
  if (inline) {
    const settings: InlineRecording = {
      out: options.out,
      compression,
      flushIntervalMs: options.flushIntervalMs,
      sourceMaps: options.sourceMaps,
    };
    env[RecordEnv.inline] = JSON.stringify(settings);
  } else delete env[RecordEnv.inline];
  if (heap !== undefined) {
    env[RecordEnv.heapIntervalBytes] = String(heap.intervalBytes);
    env[RecordEnv.heapNearLimitRatio] = String(heap.nearLimitRatio);
    env[RecordEnv.heapPolls] = heap.polls;
    env[RecordEnv.heapShortLived] = heap.shortLived;
    env[RecordEnv.heapBuffers] = heap.buffers ? '1' : '0';
  }
  if (!cpu) env[RecordEnv.cpu] = '0';
  else delete env[RecordEnv.cpu];
  const startedMs = Date.now();
  const children = recordChildren(env, options, cpu, compression);
  const base = childBase(options.out);
  const node = isNode(exe);
  // Children read the preload from NODE_OPTIONS; the root loads it once even when it is named twice.
  if (!node || children)
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(PRELOAD_PATH)}`.trim();
  const stdio = options.stdio ?? 'inherit';
  const child = spawn(exe, node ? ['--require', PRELOAD_PATH, ...args] : args, {
    stdio: [stdio, stdio, stdio, 'pipe'],
    env,
  });
  const pipe = child.stdio[PIPE_FD] as Readable;
  let settle: () => void = () => undefined;
  const pipeEnded = new Promise<void>((resolve) => {
    settle = resolve;
    pipe.on('end', resolve);
    pipe.on('close', resolve);
    pipe.on('error', () => resolve());
  });
  pipe.on('data', (bytes: Buffer) => {
    host.accept(bytes);
    // The recorder's 'end' (or 'failed') is the last it sends: a grandchild holding the pipe open changes nothing.
    if (host.settled) settle();
  });
  // SIGINT or SIGTERM sent to this process is passed on, except a terminal's Ctrl-C, which the target (in this
  // process's group) got from the terminal itself: sending it again would be a second Ctrl-C. Only a target this
  // process signalled gets SIGKILL, killAfterMs later (it may ignore the signal).
  let escalation: NodeJS.Timeout | undefined;
  const ignore = (signal: NodeJS.Signals): void => {
    if (signal === 'SIGINT' && terminalSentInterrupt()) return;
    child.kill(signal);
    escalation ??= setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? DEFAULT_KILL_AFTER_MS);
  };
  process.on('SIGINT', ignore);
  process.on('SIGTERM', ignore);
  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve, reject) => {
        child.on('error', (err) =>
          reject(
            new ProfpackError(`cannot run "${exe}": ${err.message}`, { code: ErrorCode.RECORD_FAILED, cause: err }),
          ),
        );
        child.on('exit', (code, signal) => resolve({ code, signal }));
      },
    );
    await untilSilent(pipe, pipeEnded, PIPE_SILENCE_MS);
    pipe.destroy();
    const summary = host.finish();
    const last = host instanceof InlineListener ? undefined : host.lastFile;
    if (last !== undefined) (options.onFile ?? (() => undefined))(last.path, last.stats);
    return {
      code,
      signal,
      summary,
      childFiles: children && options.rotate === undefined ? findChildFiles(base, startedMs) : [],
    };
  } catch (err) {
    if (!(host instanceof InlineListener)) host.abandon();
    throw err;
  } finally {
    clearTimeout(escalation);
    process.removeListener('SIGINT', ignore);
    process.removeListener('SIGTERM', ignore);
  }
}

/**
 * Sets `env` so that each Node process the command starts writes its own file (or not): true when they record. A
 * child records CPU samples only, nothing a heap-only recording asked for.
 */
export function recordChildren(
  env: NodeJS.ProcessEnv,
  options: RunRecordedOptions,
  cpu: boolean,
  compression: 'zstd' | 'none',
): boolean {
  const children = (options.children ?? true) && cpu;
  if (!children) {
    delete env[RecordEnv.children];
    return false;
  }
  const settings: ChildRecording = {
    compression,
    flushIntervalMs: options.flushIntervalMs,
    sourceMaps: options.sourceMaps,
  };
  if (options.rotate !== undefined) settings.rotate = options.rotate;
  else settings.base = childBase(options.out);
  env[RecordEnv.children] = JSON.stringify(settings);
  return true;
}

/** The root's file without ".tach": its children's files are `${base}.${pid}.tach`. */
export function childBase(out: string): string {
  return out.replace(/\.tach$/, '');
}

/** The writer of `record` without --inline: loaded only then (the inline writer is the program's). */
function startHost(
  options: RunRecordedOptions,
  intervalUs: number,
  compression: 'zstd' | 'none',
  heap: HeapOptions | undefined,
): writerModule.RecordingHost {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- not loaded with --inline
  const { RecordingHost } = require('../writer/index') as typeof writerModule;
  const host = new RecordingHost({
    out: options.out,
    intervalUs,
    compression,
    rotate: options.rotate,
    flushIntervalMs: options.flushIntervalMs,
    heapSink: options.heapSink,
    sourceMaps: options.sourceMaps,
    heap: heap !== undefined,
    onWriteError: options.onWriteError,
    onWarning: options.onWarning,
  });
  host.startRotating(options.onFile ?? (() => undefined));
  return host;
}

/**
 * Whether a SIGINT this process got was most likely a terminal's Ctrl-C: this process's group is its terminal's
 * foreground group (Linux: /proc/self/stat), so the target, in the same group, got it too. Elsewhere: stdin is a TTY.
 */
function terminalSentInterrupt(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After "pid (comm) ": state ppid pgrp session tty_nr tpgid ...; comm may hold spaces and parentheses.
    const [, , pgrp, , ttyNr, tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ttyNr !== '0' && pgrp === tpgid;
  } catch {
    return process.stdin.isTTY === true;
  }
}

/** The command's words as paths (relative to the working directory), and its executable as found on PATH. */
function commandFiles(command: readonly string[]): string[] {
  const exe = command[0] ?? '';
  const onPath =
    exe.includes('/') || exe.includes(path.sep)
      ? []
      : (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, exe));
  return [...command, ...onPath];
}

/** Resolves when `ended` does, or when `pipe` has delivered nothing for `silenceMs`. */
async function untilSilent(pipe: Readable, ended: Promise<void>, silenceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let quiet: () => void = () => undefined;
  const rearm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(quiet, silenceMs);
  };
  const silent = new Promise<void>((resolve) => {
    quiet = resolve;
    rearm();
  });
  pipe.on('data', rearm);
  try {
    await Promise.race([ended, silent]);
  } finally {
    clearTimeout(timer);
    pipe.removeListener('data', rearm);
  }
}

/** The descriptor the preload finds the pipe on. */
const PIPE_FD = 3;

/** The files `base.<pid>.tach` beside the root's file, in pid order. */
export function findChildFiles(base: string, sinceMs: number): string[] {
  const dir = path.dirname(base);
  const pattern = new RegExp(`^${path.basename(base).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.tach$`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return (
    names
      .map((name) => ({ name, pid: Number(pattern.exec(name)?.[1]) }))
      // A file of an earlier run under the same name is not this run's.
      .filter((f) => Number.isInteger(f.pid) && modifiedSince(path.join(dir, f.name), sinceMs))
      .sort((a, b) => a.pid - b.pid)
      .map((f) => path.join(dir, f.name))
  );
}

function modifiedSince(file: string, sinceMs: number): boolean {
  try {
    // Whole seconds on some file systems.
    return statSync(file).mtimeMs >= sinceMs - 1000;
  } catch {
    return false;
  }
}
