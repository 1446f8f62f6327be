#!/usr/bin/env node
/** The `profpack` command. */
import { Command } from 'commander';
import { registerConvert } from './commands/convert';
import { registerRecord } from './commands/record';
import { registerTop } from './commands/top';

export function buildProgram(): Command {
  const program = new Command('profpack').description('compact binary profiling data: record, convert and query CPU profiles').enablePositionalOptions();
  registerConvert(program);
  registerTop(program);
  registerRecord(program);
  // Usage errors (unknown option, bad choice, missing argument) are user errors too: exit 2.
  program.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });
  for (const command of program.commands) command.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  return program;
}

if (require.main === module) {
  buildProgram().parseAsync(process.argv);
}
