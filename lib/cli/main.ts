#!/usr/bin/env node
/**
 * The profpack command. Each command lives in commands/<name>.ts and is
 * registered here; user errors print one line (code and message) and exit 2.
 */
// First: every module after it is read through Node's compile cache (where Node has one).
import './compile-cache';
import { join, sep } from 'node:path';
import { Command, CommanderError } from 'commander';
import {
  registerConvert,
  registerDiff,
  registerDowngrade,
  registerDump,
  registerExport,
  registerMerge,
  registerSql,
  registerFlame,
  registerInfo,
  registerLeaks,
  registerRecord,
  registerRecover,
  registerTop,
} from './commands/index';
import { EXIT_USER_ERROR, userErrorLine } from './errors';
import { OutputClosed } from './output';
import { PACKAGE_ROOT, packageVersion } from '../version';

type Register = (program: Command) => void;

/**
 * Each command's registration, in help order. A command line names one
 * command, and only that one is registered: the built main.js requires each
 * command module on first use (scripts/lazy-entry.mjs), because loading
 * every command (views, fleet, the converters) cost each run ~30 modules —
 * most of `profpack record`'s own CPU on a short program.
 */
const COMMANDS: Record<string, () => Register> = {
  info: () => registerInfo,
  dump: () => registerDump,
  convert: () => registerConvert,
  top: () => registerTop,
  record: () => registerRecord,
  downgrade: () => registerDowngrade,
  flame: () => registerFlame,
  diff: () => registerDiff,
  leaks: () => registerLeaks,
  merge: () => registerMerge,
  export: () => registerExport,
  sql: () => registerSql,
  recover: () => registerRecover,
};

/** The program; given the command line, only the command it names (all of them for help, or a name that is not one). */
export function buildProgram(argv?: readonly string[]): Command {
  const program = new Command();
  program
    .name('profpack')
    .description(
      'Compact binary profiling data: record Node programs, convert and query profiles, ' +
        'read and inspect CPython Tachyon files',
    )
    // `record [options] -- node app.js --its-own-options`: options after the command belong to the target.
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .version(packageVersion(), '-V, --version', "print profpack's version")
    .addHelpText(
      'after',
      `\nDocs: ${join(PACKAGE_ROOT, 'README.md')} and ${join(PACKAGE_ROOT, 'docs')}${sep} (shipped in the package)`,
    );
  const named = argv?.[2];
  const names = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  for (const name of names) COMMANDS[name]!()(program);
  return program;
}

/** Runs the command line; returns the exit status (record sets process.exitCode itself when its target ends). */
export function main(argv: string[]): number {
  const program = buildProgram(argv);
  try {
    program.parse(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return 0;
      process.stderr.write(`profpack: ERR_USAGE: ${err.message.replace(/^error: /, '')}\n`);
      return EXIT_USER_ERROR;
    }
    if (err instanceof OutputClosed) return outputClosed(err.cause);
    const line = userErrorLine(err);
    if (line === null) throw err;
    process.stderr.write(line + '\n');
    return EXIT_USER_ERROR;
  }
}

/** stdout closed by its reader (`| head -1`) ends the command quietly; any other stdout failure is one ERR_IO line. */
let outputFailureReported = false;
function outputClosed(err: NodeJS.ErrnoException): number {
  if (err.code === 'EPIPE') return 0;
  if (outputFailureReported) return EXIT_USER_ERROR;
  outputFailureReported = true;
  process.stderr.write(
    `profpack: ERR_IO: cannot write standard output: ` +
      `${err.message.replace(/^[A-Z0-9_]+: /, '').replace(/, write$/, '')}${err.code ? ` (${err.code})` : ''}\n`,
  );
  return EXIT_USER_ERROR;
}

if (require.main === module) {
  // A write that fails after the command returned (small outputs are written asynchronously to a pipe).
  process.stdout.on('error', (err: NodeJS.ErrnoException) =>
    process.exit(err.code === 'EPIPE' ? (process.exitCode ?? 0) : outputClosed(err)),
  );
  process.exitCode = main(process.argv);
}
