/**
 * `-o, --output <file>`: the one spelling of "where to write" on every
 * command that writes. Earlier spellings stay accepted, hidden from --help:
 * `--out` (record, merge, export) and the positional OUT of downgrade and
 * recover.
 */
import { Option, type Command } from 'commander';
import { ErrorCode, ProfpackError } from '../errors';

export interface OutputFlags {
  output?: string;
  /** The hidden alias. */
  out?: string;
}

/** Adds `-o, --output` (and the hidden `--out` when `legacyOut`). */
export function addOutputOption(
  command: Command,
  description: string,
  options: { default?: string; legacyOut?: boolean } = {},
): Command {
  const output = new Option('-o, --output <path>', description);
  if (options.default !== undefined) output.default(options.default);
  command.addOption(output);
  if (options.legacyOut === true) command.addOption(new Option('--out <path>').hideHelp());
  return command;
}

/**
 * The path to write: `-o/--output`, or the hidden `--out`, or a positional
 * OUT, or the default. Two different paths, or none where one is required,
 * are a usage error. `command` is the one the action runs for (its last argument).
 */
export function outputPath(command: Command, positional?: string): string {
  const flags = command.opts<OutputFlags>();
  const fromCli = command.getOptionValueSource('output') === 'cli' ? flags.output : undefined;
  const given = [...new Set([fromCli, flags.out, positional].filter((p): p is string => p !== undefined))];
  if (given.length > 1)
    throw new ProfpackError(`the output is given twice (${given.join(', ')})`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'one -o/--output',
    });
  const path = given[0] ?? flags.output;
  if (path === undefined || path === '')
    throw new ProfpackError('no output given', { code: ErrorCode.INVALID_ARGUMENT, expected: '-o/--output PATH' });
  return path;
}
