/**
 * `exportParquet()`: a fleet's profiles as Parquet files, one per table
 * (DIR/profiles.parquet, sample_types, frames, stacks, samples, labels), written by DuckDB's
 * `COPY … TO … (FORMAT parquet)` from the tables of tables.ts.
 */
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../errors';
import { writeDirectoryThroughTemporary } from '../output-file';
import { connectDuckDB, runSql, sqlString } from './duckdb';
import { listProfileFiles } from './source';
import { TABLE_NAMES, createTables, loadProfiles, type LoadOptions, type LoadResult, type TableName } from './tables';

export interface ExportOptions extends LoadOptions {
  /** Parquet compression codec (default zstd). */
  compression?: 'zstd' | 'snappy' | 'gzip' | 'uncompressed';
  /**
   * DuckDB's memory_limit while the tables are built and copied; beyond it DuckDB spills to a directory in
   * os.tmpdir(). Default 1GB.
   */
  memoryLimit?: string;
}

export interface ExportResult extends LoadResult {
  /** Each table's Parquet file and its size in bytes. */
  outputs: Record<TableName, { path: string; bytes: number }>;
}

const CODECS = ['zstd', 'snappy', 'gzip', 'uncompressed'];

export async function exportParquet(
  inputs: readonly string[],
  outDir: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const codec = options.compression ?? 'zstd';
  if (!CODECS.includes(codec))
    throw new ProfpackError(`compression must be ${CODECS.join(', ')}, not "${String(codec)}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: CODECS.join(' | '),
    });
  const files = listProfileFiles(inputs);
  // Every sample is held by DuckDB until COPY: bounded, so a large fleet spills to temp files instead of growing
  // to many GB.
  const db = await connectDuckDB({ memoryLimit: options.memoryLimit ?? '1GB' });
  try {
    await createTables(db.connection);
    const loaded = await loadProfiles(db.connection, files, options);
    const outputs = {} as ExportResult['outputs'];
    // Through a temporary directory: a full disk half-way leaves no partial set of tables.
    await writeDirectoryThroughTemporary(outDir, async (dir) => {
      for (const name of TABLE_NAMES) {
        const out = path.join(dir, `${name}.parquet`);
        // Rows stay in the order they were appended (file order): profile_id then compresses to runs.
        await runSql(db.connection, `COPY ${name} TO ${sqlString(out)} (FORMAT parquet, COMPRESSION ${codec})`);
        outputs[name] = { path: path.join(outDir, `${name}.parquet`), bytes: statSync(out).size };
      }
    });
    return { ...loaded, outputs };
  } finally {
    db.close();
  }
}
