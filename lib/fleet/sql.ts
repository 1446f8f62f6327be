/**
 * `querySql()`: SQL over a fleet's profiles. The tables of tables.ts are
 * DuckDB views over the inputs: profile files (and directories of them) are
 * loaded into memory; directories written by exportParquet() are read in
 * place as Parquet. Inputs of both kinds are queried together.
 */
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { connectDuckDB, runSql, sqlString } from './duckdb';
import { listProfileFiles } from './source';
import { TABLE_NAMES, createTables, loadProfiles, type LoadOptions } from './tables';

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
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

export async function querySql(sql: string, inputs: readonly string[], options: LoadOptions = {}): Promise<SqlResult> {
  const parquetDirs = inputs.filter(isParquetDir);
  const profileInputs = inputs.filter((i) => !parquetDirs.includes(i));
  const files = profileInputs.length > 0 || parquetDirs.length === 0 ? listProfileFiles(profileInputs) : [];
  const db = await connectDuckDB();
  try {
    const c = db.connection;
    await createTables(c, 'loaded_');
    if (files.length > 0) await loadProfiles(c, files, options, 'loaded_');
    const sources = parquetDirs.length + (files.length > 0 ? 1 : 0);
    for (const name of TABLE_NAMES) {
      const parquet = parquetDirs.map((d) => sqlString(path.resolve(d, `${name}.parquet`)));
      const union = parquet.length === 0 ? '' : ` UNION ALL BY NAME SELECT * FROM read_parquet([${parquet.join(', ')}])`;
      // Frames and stacks are content-addressed: two exports may both hold one; each must appear once.
      const distinct = sources > 1 && (name === 'frames' || name === 'stacks') ? 'DISTINCT ' : '';
      await runSql(c, `CREATE VIEW ${name} AS SELECT ${distinct}* FROM (SELECT * FROM loaded_${name}${union})`);
    }
    const reader = await runSql(c, sql);
    return { columns: reader.columnNames(), rows: reader.getRowsJS().map((r) => r.map(plain)) };
  } finally {
    db.close();
  }
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' && !Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A fixed-width text table; numbers right-aligned. */
export function formatSqlTable(result: SqlResult): string {
  const cells = result.rows.map((r) => r.map(cell));
  const numeric = result.columns.map((_, i) => result.rows.every((r) => r[i] === null || typeof r[i] === 'number'));
  const last = result.columns.length - 1;
  // A text column at the end (a stack, a path) is not padded: one long value must not widen every line.
  const widths = result.columns.map((h, i) => (i === last && !numeric[i] ? h.length : Math.max(h.length, ...cells.map((r) => r[i]!.length))));
  const fmt = (row: string[]) => row.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [fmt(result.columns), fmt(widths.map((w) => '-'.repeat(w))), ...cells.map(fmt), `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`].join('\n');
}

/** RFC 4180 CSV. */
export function formatSqlCsv(result: SqlResult): string {
  const quote = (v: unknown): string => {
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [result.columns.map(quote).join(','), ...result.rows.map((r) => r.map(quote).join(','))].join('\n');
}

/** Rows as objects keyed by column name. */
export function sqlRowObjects(result: SqlResult): Record<string, unknown>[] {
  return result.rows.map((r) => Object.fromEntries(result.columns.map((c, i) => [c, r[i]])));
}
