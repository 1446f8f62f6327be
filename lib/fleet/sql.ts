/**
 * `querySql()`: SQL over a fleet's profiles. The tables of tables.ts are
 * DuckDB views over the inputs: profile files (and directories of them) are
 * loaded into memory; directories written by exportParquet() are read in
 * place as Parquet. Inputs of both kinds are queried together.
 */
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../errors';
import { connectDuckDB, loadDuckDB, runSql, sqlLiteralPath, streamSql } from './duckdb';
import { listProfileFiles } from './source';
import { TABLE_NAMES, createTables, loadProfiles, type LoadOptions } from './tables';

export interface SqlOptions extends LoadOptions {
  /** DuckDB's memory_limit (default 256MB): beyond it DuckDB spills to os.tmpdir() or fails with ERR_SQL_FAILED. */
  memoryLimit?: string;
}

/** A query's result, read a chunk at a time; close() ends it and the database. */
export interface SqlStream {
  columns: string[];
  /** The rows in DuckDB's chunks, as JSON-friendly JS (see SqlResult). */
  chunks(): AsyncIterable<unknown[][]>;
  close(): void;
}

export interface SqlResult {
  columns: string[];
  /** Values as JSON-friendly JS: integers beyond 2^53 as strings, dates as ISO strings. */
  rows: unknown[][];
}

/** A directory exportParquet() wrote. */
function isParquetDir(input: string): boolean {
  return existsSync(path.join(input, 'samples.parquet')) && statSync(input).isDirectory();
}

function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/**
 * Runs `sql` over `inputs` and hands back its rows as a stream (memory: one chunk, plus what DuckDB holds within
 * its limit).
 */
export async function openSqlQuery(
  sql: string,
  inputs: readonly string[],
  options: SqlOptions = {},
): Promise<SqlStream> {
  const parquetDirs = inputs.filter(isParquetDir);
  const profileInputs = inputs.filter((i) => !parquetDirs.includes(i));
  const files = profileInputs.length > 0 || parquetDirs.length === 0 ? listProfileFiles(profileInputs) : [];
  const db = await connectDuckDB({ memoryLimit: options.memoryLimit ?? DEFAULT_MEMORY_LIMIT });
  try {
    const c = db.connection;
    await createTables(c, 'loaded_');
    if (files.length > 0) await loadProfiles(c, files, options, 'loaded_');
    const sources = parquetDirs.length + (files.length > 0 ? 1 : 0);
    for (const name of TABLE_NAMES) {
      // An export from before the allocations table has none: it adds no rows.
      const parquet = parquetDirs
        .map((d) => path.resolve(d, `${name}.parquet`))
        .filter((file) => existsSync(file))
        .map(sqlLiteralPath);
      const union =
        parquet.length === 0 ? '' : ` UNION ALL BY NAME SELECT * FROM read_parquet([${parquet.join(', ')}])`;
      // Frames and stacks are content-addressed: two exports may both hold one; each must appear once.
      const distinct = sources > 1 && (name === 'frames' || name === 'stacks') ? 'DISTINCT ' : '';
      await runSql(c, `CREATE VIEW ${name} AS SELECT ${distinct}* FROM (SELECT * FROM loaded_${name}${union})`);
    }
    const result = await streamSql(c, sql);
    return {
      columns: result.columnNames(),
      async *chunks() {
        for (;;) {
          let chunk;
          try {
            chunk = await result.fetchChunk();
          } catch (err) {
            throw new ProfpackError(`DuckDB: ${(err as Error).message}`, { code: ErrorCode.SQL_FAILED, cause: err });
          }
          if (chunk === null || chunk.rowCount === 0) return;
          yield chunk.convertRows(loadDuckDB().JSDuckDBValueConverter).map((r) => r.map(plain));
        }
      },
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

const DEFAULT_MEMORY_LIMIT = '256MB';

/** Every row of the query at once (a library call whose caller wants them all; the CLI streams). */
export async function querySql(sql: string, inputs: readonly string[], options: SqlOptions = {}): Promise<SqlResult> {
  const stream = await openSqlQuery(sql, inputs, options);
  try {
    const rows: unknown[][] = [];
    for await (const chunk of stream.chunks()) rows.push(...chunk);
    return { columns: stream.columns, rows };
  } finally {
    stream.close();
  }
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' && !Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects took JSON.stringify: v is a primitive here
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A fixed-width text table; numbers right-aligned. */
export function formatSqlTable(result: SqlResult): string {
  const cells = result.rows.map((r) => r.map(cell));
  const numeric = result.columns.map((_, i) => result.rows.every((r) => r[i] === null || typeof r[i] === 'number'));
  const last = result.columns.length - 1;
  // A text column at the end (a stack, a path) is not padded: one long value must not widen every line.
  const widths = result.columns.map((h, i) =>
    i === last && !numeric[i] ? h.length : Math.max(h.length, ...cells.map((r) => r[i]!.length)),
  );
  const fmt = (row: string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    fmt(result.columns),
    fmt(widths.map((w) => '-'.repeat(w))),
    ...cells.map(fmt),
    `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`,
  ].join('\n');
}

/** One RFC 4180 CSV line (no line end). */
export function csvLine(values: readonly unknown[]): string {
  const quote = (v: unknown): string => {
    // Objects took JSON.stringify: v is a primitive here.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- v is a primitive
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return values.map(quote).join(',');
}

/** RFC 4180 CSV. */
export function formatSqlCsv(result: SqlResult): string {
  return [csvLine(result.columns), ...result.rows.map(csvLine)].join('\n');
}

/** One row as formatSqlJson's array element: an object keyed by column, indented for the array. */
export function jsonRowText(columns: readonly string[], row: readonly unknown[]): string {
  const text = JSON.stringify(Object.fromEntries(columns.map((c, i) => [c, row[i]])), null, 2);
  return text.replace(/^/gm, '  ');
}

/** Rows as objects keyed by column name. */
export function sqlRowObjects(result: SqlResult): Record<string, unknown>[] {
  return result.rows.map((r) => Object.fromEntries(result.columns.map((c, i) => [c, r[i]])));
}
