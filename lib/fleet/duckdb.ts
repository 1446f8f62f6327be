/**
 * The one place that loads DuckDB (`@duckdb/node-api`, an optional
 * dependency: its engine is a per-platform binary package). Without it the
 * fleet's tables cannot be built, and every entry point says so with
 * ERR_DUCKDB_UNAVAILABLE instead of a require stack.
 */
import type * as DuckDB from '@duckdb/node-api';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../errors';

export type DuckDBModule = typeof DuckDB;
export type DuckDBConnection = DuckDB.DuckDBConnection;

let loaded: DuckDBModule | undefined;

export function loadDuckDB(): DuckDBModule {
  if (loaded !== undefined) return loaded;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('@duckdb/node-api') as DuckDBModule;
  } catch (err) {
    throw new ProfpackError(
      `DuckDB is not available (${(err as Error).message.split('\n', 1)[0]}); ` +
        'install it with "npm install @duckdb/node-api"',
      {
        code: ErrorCode.DUCKDB_UNAVAILABLE,
        expected: '@duckdb/node-api and its platform binary (@duckdb/node-bindings-<os>-<arch>)',
        cause: err,
      },
    );
  }
  return loaded;
}

/** DuckDB's settings for a database of profpack's. */
export interface DuckDBSettings {
  /** The most memory DuckDB's buffers may hold before spilling to the temp directory (DuckDB's default: 80% of RAM). */
  memoryLimit?: string;
}

/** A fresh in-memory database and a connection to it. */
export async function connectDuckDB(
  settings: DuckDBSettings = {},
): Promise<{ connection: DuckDBConnection; close(): void }> {
  const duckdb = loadDuckDB();
  // Spill files (a query larger than memory) go to the system's temp directory, never the directory profpack runs in:
  // a relative temp_directory once spilled 22 GB into a checkout.
  const config: Record<string, string> = { temp_directory: path.join(tmpdir(), `profpack-duckdb-${process.pid}`) };
  if (settings.memoryLimit !== undefined) config['memory_limit'] = settings.memoryLimit;
  let instance: DuckDB.DuckDBInstance;
  try {
    instance = await duckdb.DuckDBInstance.create(':memory:', config);
  } catch (err) {
    // DuckDB parses the limit itself ("1", "peak": a bare Error with its stack): the user's option, so theirs to fix.
    const message = (err as Error).message;
    if (settings.memoryLimit !== undefined)
      throw new ProfpackError(`--memory-limit ${settings.memoryLimit}: DuckDB refuses it (${message})`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'a size with its unit, as 256MB or 2GB',
        cause: err,
      });
    throw new ProfpackError(`DuckDB: ${message}`, { code: ErrorCode.SQL_FAILED, cause: err });
  }
  const connection = await instance.connect();
  return {
    connection,
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** Runs SQL; DuckDB's own errors become ERR_SQL_FAILED with DuckDB's message. */
export async function runSql(connection: DuckDBConnection, sql: string): Promise<DuckDB.DuckDBResultReader> {
  try {
    return await connection.runAndReadAll(sql);
  } catch (err) {
    throw new ProfpackError(`DuckDB: ${(err as Error).message}`, { code: ErrorCode.SQL_FAILED, cause: err });
  }
}

/** A string as an SQL literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * A file path as an SQL literal that DuckDB's file readers take as that one
 * path: read_parquet() globs its argument, so `*`, `?` and `[` become the
 * one-character classes `[*]`, `[?]`, `[[]` (a directory named
 * `exp[12]` read exp1 and exp2). Globs come only from the user's own SQL.
 */
export function sqlLiteralPath(value: string): string {
  return sqlString(value.replace(/[*?[]/g, (c) => `[${c}]`));
}

/** Runs SQL and hands its rows over in DuckDB's chunks (2,048 rows), never all at once. */
export async function streamSql(connection: DuckDBConnection, sql: string): Promise<DuckDB.DuckDBResult> {
  try {
    return await connection.stream(sql);
  } catch (err) {
    throw new ProfpackError(`DuckDB: ${(err as Error).message}`, { code: ErrorCode.SQL_FAILED, cause: err });
  }
}
