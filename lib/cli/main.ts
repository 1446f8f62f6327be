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
  return program;
}

if (require.main === module) {
  buildProgram().parseAsync(process.argv);
}
