/**
 * The commands over many profiles (lib/fleet): `merge` into one Tachyon file,
 * `export` to Parquet, `sql` through DuckDB.
 */
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { exportParquet, formatSqlCsv, formatSqlTable, mergeProfiles, querySql, sqlRowObjects } from '../../fleet/index';
import { outputPath } from '../output-option';
import { action } from '../user-error';

/** The host of DIR/HOST/file.tach: its directory's name. */
const hostFromDir = (file: string): string => path.basename(path.dirname(path.resolve(file)));

export function registerMerge(program: Command): Command {
  return program
    .command('merge')
    .description('merge many profiles into one Tachyon file (threads kept apart, times kept)')
    .argument('<inputs...>', 'profile files or directories of them')
    .option('-o, --output <file>', 'Tachyon file to write')
    .addOption(new Option('--out <file>').hideHelp())
    .addOption(new Option('--compression <kind>', 'sample region compression').choices(['zstd', 'none']).default('zstd'))
    .action(
      action((inputs: string[], flags: { compression: 'zstd' | 'none' }, command: Command) => {
        const out = outputPath(command);
        const r = mergeProfiles(inputs, out, { compression: flags.compression });
        process.stderr.write(`profpack: wrote ${out}: ${r.samples.toLocaleString('en')} samples from ${r.files} files, ${r.threads} threads, ${r.frames} frames (${r.bytes.toLocaleString('en')} bytes)\n`);
      }),
    );
}

export function registerExport(program: Command): Command {
  return program
    .command('export')
    .description('write profiles as Parquet tables (profiles, frames, stacks, samples) through DuckDB')
    .argument('<inputs...>', 'profile files or directories of them')
    .addOption(new Option('--to <format>', 'output format').choices(['parquet']).default('parquet'))
    .option('-o, --output <dir>', 'directory for the .parquet files')
    .addOption(new Option('--out <dir>').hideHelp())
    .option('--host-from-dir', "each file's host is its directory's name (DIR/HOST/file.tach)")
    .action(
      action(async (inputs: string[], flags: { hostFromDir?: boolean }, command: Command) => {
        const out = outputPath(command);
        const r = await exportParquet(inputs, out, { hostOf: flags.hostFromDir === true ? hostFromDir : undefined });
        const sizes = Object.entries(r.outputs).map(([name, o]) => `${name} ${o.bytes.toLocaleString('en')}`);
        process.stderr.write(`profpack: wrote ${out}: ${r.samples.toLocaleString('en')} samples from ${r.files} files (bytes: ${sizes.join(', ')})\n`);
      }),
    );
}

export function registerSql(program: Command): Command {
  return program
    .command('sql')
    .description('run SQL over profiles: tables profiles, frames, stacks, samples (docs/fleet.md)')
    .argument('<query>', 'the SQL')
    .argument('<inputs...>', 'profile files, directories of them, or directories written by export')
    .option('--json', 'rows as JSON objects')
    .option('--csv', 'CSV')
    .option('--host-from-dir', "each file's host is its directory's name (DIR/HOST/file.tach)")
    .action(
      action(async (query: string, inputs: string[], flags: { json?: boolean; csv?: boolean; hostFromDir?: boolean }) => {
        if (flags.json === true && flags.csv === true) throw new ProfpackError('--json and --csv exclude each other', { code: ErrorCode.INVALID_ARGUMENT });
        const r = await querySql(query, inputs, { hostOf: flags.hostFromDir === true ? hostFromDir : undefined });
        const text = flags.json === true ? JSON.stringify(sqlRowObjects(r), null, 2) : flags.csv === true ? formatSqlCsv(r) : formatSqlTable(r);
        process.stdout.write(`${text}\n`);
      }),
    );
}
