/**
 * The commands over many profiles (lib/fleet): `merge` into one Tachyon file,
 * `export` to Parquet, `sql` through DuckDB.
 */
import * as path from 'node:path';
import { type Command, Option } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import {
  csvLine,
  exportParquet,
  formatSqlTable,
  jsonRowText,
  mergeProfiles,
  openSqlQuery,
  type SqlStream,
} from '../../fleet/index';
import { Output } from '../output';
import { outputPath } from '../output-option';
import { action } from '../errors';

/** The host of DIR/HOST/file.tach: its directory's name. */
const hostFromDir = (file: string): string => path.basename(path.dirname(path.resolve(file)));

export function registerMerge(program: Command): Command {
  return program
    .command('merge')
    .description('merge many profiles into one Tachyon file (threads kept apart, times kept)')
    .argument('<inputs...>', 'profile files or directories of them')
    .option('-o, --output <file>', 'Tachyon file to write')
    .addOption(new Option('--out <file>').hideHelp())
    .addOption(
      new Option('--compression <kind>', 'sample region compression').choices(['zstd', 'none']).default('zstd'),
    )
    .action(
      action((inputs: string[], flags: { compression: 'zstd' | 'none' }, command: Command) => {
        const out = outputPath(command);
        const r = mergeProfiles(inputs, out, {
          compression: flags.compression,
          onWarning: (message) => process.stderr.write(`profpack: warning: ${message}\n`),
        });
        process.stderr.write(
          `profpack: wrote ${out}: ${r.samples.toLocaleString('en')} samples from ${r.files} files, ` +
            `${r.threads} threads, ${r.frames} frames (${r.bytes.toLocaleString('en')} bytes)\n`,
        );
      }),
    );
}

export function registerExport(program: Command): Command {
  return program
    .command('export')
    .description('write profiles as Parquet tables (profiles, frames, stacks, samples, allocations…) via DuckDB')
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
        process.stderr.write(
          `profpack: wrote ${out}: ${r.samples.toLocaleString('en')} samples from ${r.files} files (bytes: ` +
            `${sizes.join(', ')})\n`,
        );
      }),
    );
}

/** Rows `sql` prints as a text table unless told otherwise (--json and --csv stream every row). */
const DEFAULT_TEXT_LIMIT = 1000;

export function registerSql(program: Command): Command {
  return program
    .command('sql')
    .description('run SQL over profiles: tables profiles, frames, stacks, samples, allocations … (docs/fleet.md)')
    .argument('<query>', 'the SQL')
    .argument('<inputs...>', 'profile files, directories of them, or directories written by export')
    .option('--json', 'rows as JSON objects (streamed: every row)')
    .option('--csv', 'CSV (streamed: every row)')
    .option('--limit <rows>', `text table: at most this many rows (default ${DEFAULT_TEXT_LIMIT}; 0 = all)`)
    .option(
      '--memory-limit <size>',
      "DuckDB's memory limit (default 256MB; beyond it DuckDB spills to the temp directory)",
    )
    .option('--host-from-dir', "each file's host is its directory's name (DIR/HOST/file.tach)")
    .action(
      action(
        async (
          query: string,
          inputs: string[],
          flags: { json?: boolean; csv?: boolean; limit?: string; memoryLimit?: string; hostFromDir?: boolean },
        ) => {
          if (flags.json === true && flags.csv === true)
            throw new ProfpackError('--json and --csv exclude each other', { code: ErrorCode.INVALID_ARGUMENT });
          const limit = flags.limit === undefined ? DEFAULT_TEXT_LIMIT : Number(flags.limit);
          if (!Number.isSafeInteger(limit) || limit < 0)
            throw new ProfpackError(`--limit must be a row count, not ${flags.limit}`, {
              code: ErrorCode.INVALID_ARGUMENT,
              expected: 'an integer >= 0 (0 = all)',
            });
          if (flags.limit !== undefined && (flags.json === true || flags.csv === true))
            throw new ProfpackError('--limit applies to the text table only (--json and --csv stream every row)', {
              code: ErrorCode.INVALID_ARGUMENT,
            });
          const stream = await openSqlQuery(query, inputs, {
            hostOf: flags.hostFromDir === true ? hostFromDir : undefined,
            memoryLimit: flags.memoryLimit,
          });
          try {
            if (flags.json === true || flags.csv === true)
              await writeStreamed(stream, flags.json === true ? 'json' : 'csv');
            else await writeTable(stream, limit);
          } finally {
            stream.close();
          }
        },
      ),
    );
}

/** --json / --csv: every row, a chunk at a time, through the synchronous stdout writer. */
async function writeStreamed(stream: SqlStream, as: 'json' | 'csv'): Promise<void> {
  const out = new Output();
  let rows = 0;
  if (as === 'csv') out.write(`${csvLine(stream.columns)}\n`);
  for await (const chunk of stream.chunks()) {
    for (const row of chunk) {
      if (as === 'csv') out.write(`${csvLine(row)}\n`);
      else out.write(`${rows === 0 ? '[\n' : ',\n'}${jsonRowText(stream.columns, row)}`);
      rows++;
    }
    out.flush();
  }
  if (as === 'json') out.write(rows === 0 ? '[]\n' : '\n]\n');
  out.flush();
}

/** The text table: the first `limit` rows (0 = all), and a line saying when there were more. */
async function writeTable(stream: SqlStream, limit: number): Promise<void> {
  const rows: unknown[][] = [];
  let more = false;
  for await (const chunk of stream.chunks()) {
    for (const row of chunk) {
      if (limit > 0 && rows.length >= limit) {
        more = true;
        break;
      }
      rows.push(row);
    }
    if (more) break;
  }
  const note = more
    ? `\n(the first ${limit} rows: more follow; --limit 0 prints all, --csv or --json stream them)`
    : '';
  const out = new Output();
  out.write(`${formatSqlTable({ columns: stream.columns, rows })}${note}\n`);
  out.flush();
}
