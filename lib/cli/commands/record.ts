/**
 * `profpack record [options] -- node app.js [args]`: runs the target with
 * profpack's preload, which samples it with V8's sampler and streams the
 * samples to this process, which writes the Tachyon file and finalizes it
 * when the target exits — however it exits: a target killed by SIGKILL or
 * crashing loses only its last harvest interval. Exits as the target did.
 */
import { compressionOption, type CompressionFlag } from '../compression';
import { statSync } from 'node:fs';
import { constants } from 'node:os';
import * as path from 'node:path';
import { type Command, Option } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { removeFile } from '../../file-retry';
import {
  checkHeapOptions,
  DEFAULT_HEAP_INTERVAL_BYTES,
  HEAP_POLLS,
  HEAP_SHORT_LIVED,
  parseByteSize,
} from '../../record/index';
import type { HeapPolls, HeapShortLived } from '../../record/index';
import { MAX_INTERVAL_US, MAX_TIMER_MS, checkRange, parseDuration, type RotateOptions } from '../../record/index';
import { inProcessCommand, recordInProcess, runRecorded } from '../../record/index';
import type { RunRecordedOptions, RunRecordedResult } from '../../record/index';
import { ProfileReader, stacksAtCapNote } from '../../tachyon/index';
import { grouped } from '../grouped';
import { outputPath } from '../output-option';
import { action, reportUserError } from '../errors';

interface RecordFlags {
  intervalUs: string;
  out: string;
  compression: CompressionFlag;
  workers?: boolean;
  harvestMs: string;
  rotate?: string;
  dir?: string;
  keep?: string;
  flushMs: string;
  killAfter: string;
  heap?: boolean;
  heapInterval?: string;
  heapPolls?: HeapPolls;
  heapShortLived?: HeapShortLived;
  /** false with --no-heap-buffers. */
  heapBuffers: boolean;
  cpu: boolean;
  children: boolean;
  sourceMaps: boolean;
  inline?: boolean;
}

export function registerRecord(program: Command): Command {
  return program
    .command('record')
    .description('run a Node program and record its JS stacks into a Tachyon file')
    .argument('<command...>', 'the program to run, after --, e.g. -- node app.js')
    .option('--interval-us <us>', 'sampling interval in µs', '1000')
    .option('-o, --output <file>', 'Tachyon file to write', 'profile.tach')
    .addOption(new Option('--out <file>').hideHelp())
    .addOption(compressionOption('sample region compression'))
    .option('--workers', 'also record worker threads, each as its own thread')
    .option(
      '--no-source-maps',
      'write frames of compiled scripts as they run, not at their source-mapped position ' +
        '(by default a script with an inline or adjacent map reads as its source)',
    )
    .option(
      '--no-children',
      'do not record the Node processes the command starts (by default each writes its own file, OUT.<pid>.tach)',
    )
    .option('--harvest-ms <ms>', 'how often samples are moved from V8 to the file', '1000')
    .option('--rotate <every>', 'a new file this often (60s, 5m, 1h, 500ms), in --dir; -o is not used')
    .option('--dir <dir>', 'directory of the rotated files', 'profiles')
    .option('--keep <n>', 'rotated files left on disk at most (oldest deleted)')
    .option(
      '--flush-ms <ms>',
      'how often the file is flushed with its recovery journal: ' +
        'what a SIGKILL of profpack loses (see profpack recover)',
      '1000',
    )
    .option(
      '--heap',
      "also record the heap (with --workers, each worker's too): V8's sampled allocations and when they die",
    )
    .option(
      '--heap-interval <bytes>',
      `mean bytes allocated between heap samples (512k, 1m; default ${DEFAULT_HEAP_INTERVAL_BYTES})`,
    )
    .addOption(
      new Option(
        '--heap-polls <when>',
        'paced (default): heap polls spaced to a small share of the CPU (native polls force no GC; ' +
          'on the inspector path, where the heap sampler addon is not used, each poll is a full GC); ' +
          'harvest: a poll at every harvest, for short programs and short-lived garbage, at a higher cost',
      ).choices([...HEAP_POLLS]),
    )
    .addOption(
      new Option(
        '--heap-short-lived <what>',
        'stacks (default): sampled objects that die between two heap polls keep their stack and size (native ' +
          'sampler: a look before each GC), so alloc_space names who makes the garbage; count: only counted',
      ).choices([...HEAP_SHORT_LIVED]),
    )
    .option(
      '--no-heap-buffers',
      'with --heap: leave Buffer and ArrayBuffer allocations unsampled (by default they are sampled by bytes with ' +
        'their stacks, as external objects: V8 sees only their small JS objects)',
    )
    .option(
      '--no-cpu',
      "with --heap: record the heap alone; V8's CPU profiler is never started and the file holds no CPU samples " +
        '(nor are the processes the command starts recorded)',
    )
    .option(
      '--inline',
      'write the file in the program itself (cheaper on short programs); `-- node script.js` with no node flags ' +
        'runs the script in this very process (one Node start, not two). If the program is killed hard (SIGKILL, ' +
        'abort, out of memory) the file is left as last flushed (--flush-ms), for profpack recover, instead of ' +
        'finalized. Not with --rotate',
    )
    .option(
      '--kill-after <seconds>',
      'after SIGINT/SIGTERM, how long the target may take to exit before it gets SIGKILL',
      '10',
    )
    .passThroughOptions()
    .action(
      action(async (command: string[], flags: RecordFlags, self: Command) => {
        flags.out = outputPath(self);
        const intervalUs = Number(flags.intervalUs);
        if (!Number.isInteger(intervalUs))
          throw new ProfpackError(`--interval-us must be an integer, not "${flags.intervalUs}"`, {
            code: ErrorCode.INVALID_ARGUMENT,
          });
        checkRange('--interval-us', intervalUs, 1, MAX_INTERVAL_US, 'µs');
        const harvestMs = checkRange('--harvest-ms', Number(flags.harvestMs), 1, MAX_TIMER_MS, 'ms');
        const flushIntervalMs = Number(flags.flushMs);
        if (!Number.isInteger(flushIntervalMs))
          throw new ProfpackError(`--flush-ms must be an integer, not "${flags.flushMs}"`, {
            code: ErrorCode.INVALID_ARGUMENT,
          });
        checkRange('--flush-ms', flushIntervalMs, 1, MAX_TIMER_MS, 'ms');
        const killAfterSec = Number(flags.killAfter);
        if (!Number.isFinite(killAfterSec) || killAfterSec < 0 || killAfterSec > 86_400)
          throw new ProfpackError(`--kill-after must be seconds in [0, 86400], not "${flags.killAfter}"`, {
            code: ErrorCode.INVALID_ARGUMENT,
          });
        const heapFlag =
          flags.heapInterval !== undefined
            ? '--heap-interval'
            : flags.heapPolls !== undefined
              ? '--heap-polls'
              : flags.heapShortLived !== undefined
                ? '--heap-short-lived'
                : undefined;
        if (heapFlag !== undefined && flags.heap !== true)
          throw new ProfpackError(`${heapFlag} needs --heap`, {
            code: ErrorCode.INVALID_ARGUMENT,
          });
        if (!flags.cpu) checkHeapOnly(flags, self);
        const heap =
          flags.heap === true
            ? checkHeapOptions({
                intervalBytes: flags.heapInterval === undefined ? undefined : parseByteSize(flags.heapInterval),
                polls: flags.heapPolls,
                shortLived: flags.heapShortLived,
                buffers: flags.heapBuffers,
              })
            : undefined;
        let rotate: RotateOptions | undefined;
        if (flags.rotate !== undefined) {
          const keep = flags.keep === undefined ? undefined : Number(flags.keep);
          rotate = { everyMs: parseDuration(flags.rotate), dir: path.resolve(flags.dir ?? 'profiles'), keep };
        } else if (flags.keep !== undefined)
          throw new ProfpackError('--keep needs --rotate', { code: ErrorCode.INVALID_ARGUMENT });
        if (flags.inline === true && rotate !== undefined)
          throw new ProfpackError('--inline writes one file: it excludes --rotate', {
            code: ErrorCode.INVALID_ARGUMENT,
          });
        const onFile = (file: string, stats: { samples: number; bytes: number }): void =>
          void process.stderr.write(
            `profpack: wrote ${path.relative('.', file)}: ` +
              `${grouped(stats.samples)} samples (${grouped(stats.bytes)} bytes)\n`,
          );
        const options: RunRecordedOptions = {
          out: path.resolve(flags.out),
          intervalUs,
          harvestMs,
          compression: flags.compression,
          workers: flags.workers === true,
          rotate,
          onFile,
          flushIntervalMs,
          killAfterMs: Math.round(killAfterSec * 1000),
          children: flags.children,
          sourceMaps: flags.sourceMaps,
          heap,
          cpu: flags.cpu,
          inline: flags.inline === true,
          // Said when it happens (a server may run for hours more); the error ends record once the command exits.
          onWarning: (warning) => void process.stderr.write(`profpack: warning: ${warning}\n`),
          onWriteError: (err) => {
            const { path: file, osCode, flushed } = err.details as { path: string; osCode?: string; flushed: boolean };
            process.stderr.write(
              `profpack: ${file} cannot be written (${osCode ?? 'I/O error'}): recording stopped, the command goes on` +
                `${flushed ? '; the file and its journal are kept' : ''}\n`,
            );
          },
        };
        if (flags.inline === true) {
          const run = inProcessCommand(command, options);
          if ('script' in run) {
            // The program runs in this process from here on; what record says comes at its end, its exit code stays.
            // Not awaited: this action and commander's promise chain end now, before the sampler starts (a later
            // setImmediate), so no sample can land in their continuations; a recording that cannot start is still
            // one coded line and exit 2.
            void recordInProcess(run, options, (end) => {
              // Said on the program's way out: a failure here must not become the program's.
              try {
                summarize({ ...end, signal: null }, flags, command, rotate);
              } catch (err) {
                process.stderr.write(`profpack: ${err instanceof Error ? err.message : String(err)}\n`);
              }
            }).catch(reportUserError);
            return;
          }
          if (run.reason !== undefined)
            process.stderr.write(`profpack: --inline: the program runs in a Node process of its own: ${run.reason}\n`);
        }
        process.exitCode = summarize(await runRecorded(command, options), flags, command, rotate);
      }),
    );
}

/** What record says of the file once the command has ended; returns record's exit code (the command's). */
function summarize(
  { code, signal, summary, childFiles }: Pick<RunRecordedResult, 'code' | 'signal' | 'summary' | 'childFiles'>,
  flags: RecordFlags,
  command: readonly string[],
  rotate: RotateOptions | undefined,
): number {
  const exitCode = signal !== null ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1);
  const out = summary.out;
  if (rotate !== undefined) flags.out = path.relative('.', out);
  if (!summary.heard && childFiles.length === 0) {
    // A file with no sample would read as a recording of a program that did nothing.
    removeFile(out);
    throw new ProfpackError(
      `the command never started a recording (is "${command[0] ?? ''}" a Node program?): ` +
        `it exited with ${signal ?? `status ${code}`} and no profile was written`,
      { code: ErrorCode.RECORD_NOT_STARTED, expected: 'a Node program, or a command that starts one' },
    );
  }
  if (flags.inline === true && !summary.complete) {
    // Nothing finalized it: the program died hard. Its writer's last flush and journal are on disk, if any.
    process.stderr.write(
      `profpack: the target ended without finalizing its file (${signal ?? `exit ${code}`}, --inline): ` +
        `${flags.out} holds what was flushed before; run \`profpack recover ${flags.out}\`\n`,
    );
    return exitCode;
  }
  const size = grouped(statSync(out).size);
  if (!summary.heard)
    process.stderr.write(`profpack: the command itself is not a Node program; ${flags.out} holds no samples\n`);
  else if (!summary.complete)
    process.stderr.write(
      `profpack: the target ended without stopping its recording (${signal ?? `exit ${code}`}); ` +
        `wrote ${flags.out} with the ${grouped(summary.samples)} samples ` +
        `up to its last harvest (${size} bytes)\n`,
    );
  else if (rotate === undefined && !flags.cpu)
    process.stderr.write(`profpack: wrote ${flags.out}: heap only, no CPU samples (${size} bytes)\n`);
  else if (rotate === undefined)
    process.stderr.write(
      `profpack: wrote ${flags.out}: ${grouped(summary.samples)} samples, ` +
        `${summary.threads} thread${summary.threads === 1 ? '' : 's'} (${size} bytes)\n`,
    );
  // The file holds them (its heap section; heap recordings are format version 2).
  if (summary.stacksAtCap > 0) process.stderr.write(`profpack: ${stacksAtCapNote(summary.stacksAtCap)}\n`);
  if (summary.heap !== undefined)
    process.stderr.write(
      `profpack: heap: ${grouped(summary.heap.allocations)} sampled allocations, ` +
        `${grouped(summary.heap.frees)} frees, ` +
        `${grouped(summary.heap.shortLived)} short-lived ` +
        `(${grouped(summary.heap.bytes)} bytes on the pipe)\n`,
    );
  if (summary.inlineHeapEvents !== undefined)
    process.stderr.write(`profpack: heap: ${grouped(summary.inlineHeapEvents)} events written in the program\n`);
  reportChildren(childFiles, summary.samples, path.basename(command[0] ?? ''));
  return exitCode;
}

/** --no-cpu records the heap alone: it needs --heap, and the flags of CPU sampling do not go with it. */
function checkHeapOnly(flags: RecordFlags, self: Command): void {
  const expected = '--heap --no-cpu, without --interval-us or --workers';
  if (flags.heap !== true)
    throw new ProfpackError('--no-cpu records the heap alone: it needs --heap', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected,
    });
  const cpuFlag =
    self.getOptionValueSource('intervalUs') === 'cli' ? '--interval-us' : flags.workers === true ? '--workers' : '';
  if (cpuFlag !== '')
    throw new ProfpackError(`${cpuFlag} is for CPU sampling: it excludes --no-cpu`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected,
    });
}

/**
 * Each child process's file, and which file holds the most samples: `record
 * -- npx tsc` records npx (the command) and tsc (its child) in two files,
 * and the user should know which one to open.
 */
function reportChildren(files: readonly string[], rootSamples: number, exe: string): void {
  if (files.length === 0) return;
  // A package runner's own process mostly waits for the one it starts: its samples are idle ones.
  const runner = /^(npx|npm|pnpm|pnpx|yarn|bunx)(\.cmd)?$/i.test(exe);
  if (runner) rootSamples = 0;
  let busiest: { file: string; samples: number } | undefined;
  for (const file of files) {
    let samples: number | undefined;
    try {
      const reader = ProfileReader.open(file);
      samples = Number(reader.info.sampleCount);
      reader.close();
    } catch {
      // A child still running: its file is not final yet.
    }
    const relative = path.relative('.', file);
    const shown = relative.startsWith('..') ? file : relative;
    process.stderr.write(
      `profpack: wrote ${shown} (child process): ` +
        `${samples === undefined ? 'not finished yet' : `${grouped(samples)} samples`}\n`,
    );
    if (samples !== undefined && samples > (busiest?.samples ?? rootSamples)) busiest = { file: shown, samples };
  }
  if (busiest === undefined) return;
  const why = runner ? `${exe} ran the program in a child process: its samples` : 'most samples';
  process.stderr.write(
    `profpack: ${why} are in ${busiest.file} (\`profpack top\` and \`flame\` also take several files)\n`,
  );
}
