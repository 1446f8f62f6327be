/**
 * The commands over many profiles (lib/fleet): `merge` into one Tachyon file,
 * `export` to Parquet, `sql` through DuckDB.
 */
import { compressionOf, compressionOption, type CompressionFlag } from '../compression';
import * as path from 'node:path';
import { type Command, Option } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import {
  csvLine,
  exportClickHouse,
  exportParquet,
  formatSqlTable,
  jsonRowText,
  mergeProfiles,
  openSqlQuery,
  queryClickHouse,
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
    .addOption(compressionOption('sample region compression'))
    .action(
      action((inputs: string[], flags: { compression: CompressionFlag }, command: Command) => {
        const out = outputPath(command);
        const r = mergeProfiles(inputs, out, {
          compression: compressionOf(flags.compression),
          onWarning: (message) => process.stderr.write(`profpack: warning: ${message}\n`),
        });
        process.stderr.write(
          `profpack: wrote ${out}: ${r.samples.toLocaleString('en')} samples from ${r.files} files, ` +
            `${r.threads} threads, ${r.frames} frames (${r.bytes.toLocaleString('en')} bytes)\n`,
        );
      }),
    );
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerExport(program: Command): Command {
  return program
    .command('export')
    .description('write profiles as Parquet tables, or into ClickHouse (profiles, frames, stacks, samples…)')
    .argument('<inputs...>', 'profile files or directories of them')
    .addOption(new Option('--to <format>', 'output format').choices(['parquet', 'clickhouse']).default('parquet'))
    .option('-o, --output <dir>', 'directory for the .parquet files')
    .addOption(new Option('--out <dir>').hideHelp())
    .option('--url <url>', 'ClickHouse HTTP interface (--to clickhouse); one per shard with --cluster', collect, [])
    .option('--database <name>', 'ClickHouse database (default profpack)')
    .option('--cluster <name>', "a cluster of the servers' remote_servers: Distributed tables over its shards")
    .option('--host-from-dir', "each file's host is its directory's name (DIR/HOST/file.tach)")
    .option(
      '--memory-limit <size>',
      "--to parquet: DuckDB's memory limit (default 1GB; beyond it DuckDB spills to the temp directory)",
    )
    .action(
      action(
        async (
          inputs: string[],
          flags: {
            to: string;
            url: string[];
            database?: string;
            cluster?: string;
            hostFromDir?: boolean;
            memoryLimit?: string;
          },
          command: Command,
        ) => {
          const hostOf = flags.hostFromDir === true ? hostFromDir : undefined;
          if (flags.to === 'clickhouse') {
            if (flags.memoryLimit !== undefined)
              throw new ProfpackError('--memory-limit applies to --to parquet (DuckDB builds those tables)', {
                code: ErrorCode.INVALID_ARGUMENT,
              });
            const progress = process.stderr.isTTY
              ? (p: { files: number; rows: number }) =>
                  process.stderr.write(`\rprofpack: ${p.files} files, ${p.rows.toLocaleString('en')} rows sent`)
              : undefined;
            const r = await exportClickHouse(inputs, flags.url, {
              hostOf,
              database: flags.database,
              cluster: flags.cluster,
              onProgress: progress,
            });
            const rows = Object.entries(r.inserted).map(([name, n]) => `${name} ${n.toLocaleString('en')}`);
            process.stderr.write(
              `${progress === undefined ? '' : '\n'}profpack: exported ${r.files} files ` +
                `(${r.present} there already) to ${flags.url.join(', ')}: rows added: ${rows.join(', ')}\n`,
            );
            return;
          }
          if (flags.url.length > 0 || flags.cluster !== undefined || flags.database !== undefined)
            throw new ProfpackError('--url, --cluster and --database apply to --to clickhouse', {
              code: ErrorCode.INVALID_ARGUMENT,
            });
          const out = outputPath(command);
          const r = await exportParquet(inputs, out, { hostOf, memoryLimit: flags.memoryLimit });
          const sizes = Object.entries(r.outputs).map(([name, o]) => `${name} ${o.bytes.toLocaleString('en')}`);
          // The samples table's rows are records (a REPEAT run of ticks is one): `merge` counts samples.
          process.stderr.write(
            `profpack: wrote ${out}: ${r.samples.toLocaleString('en')} records from ${r.files} files (bytes: ` +
              `${sizes.join(', ')})\n`,
          );
        },
      ),
    );
}

/** Rows `sql` prints as a text table unless told otherwise (--json and --csv stream every row). */
const DEFAULT_TEXT_LIMIT = 1000;

export function registerSql(program: Command): Command {
  return program
    .command('sql')
    .description('run SQL over profiles: tables profiles, frames, stacks, samples, allocations … (docs/fleet.md)')
    .argument('<query>', 'the SQL')
    .argument('[inputs...]', 'profile files, directories of them, or directories written by export')
    .option('--clickhouse <url>', 'run the query on ClickHouse (tables written by export --to clickhouse), not DuckDB')
    .option('--database <name>', 'with --clickhouse: the database (default profpack)')
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
          flags: {
            json?: boolean;
            csv?: boolean;
            limit?: string;
            memoryLimit?: string;
            hostFromDir?: boolean;
            clickhouse?: string;
            database?: string;
          },
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
          if (flags.clickhouse !== undefined && inputs.length > 0)
            throw new ProfpackError('--clickhouse queries the server: no input files', {
              code: ErrorCode.INVALID_ARGUMENT,
            });
          const stream =
            flags.clickhouse === undefined
              ? await openSqlQuery(query, inputs, {
                  hostOf: flags.hostFromDir === true ? hostFromDir : undefined,
                  memoryLimit: flags.memoryLimit,
                })
              : rowsStream(await queryClickHouse(query, flags.clickhouse, { database: flags.database }));
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

/** Rows already fetched (ClickHouse answers a query whole) as the stream the writers take. */
function rowsStream(result: { columns: string[]; rows: unknown[][] }): SqlStream {
  return {
    columns: result.columns,
    // eslint-disable-next-line @typescript-eslint/require-await -- the writers iterate asynchronously
    async *chunks() {
      yield result.rows;
    },
    close: () => undefined,
  };
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
