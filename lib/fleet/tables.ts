/**
 * A fleet's profiles as six DuckDB tables (the schema of docs/fleet.md):
 *
 *   profiles(profile_id, path, host, start_us, end_us, duration_s, sample_interval_us, samples, threads)
 *   sample_types(profile_id, type_index, type, unit, is_default)
 *   frames(frame_id, funcname, filename, lineno, end_lineno, col, end_col, opcode)
 *   stacks(stack_id, depth, frame_id)                   depth 0 = innermost frame
 *   samples(profile_id, thread_id, timestamp_us, status, stack_id, value, type_values, label_set_id)
 *   labels(profile_id, label_set_id, key, str, num, unit)
 *   allocations(profile_id, thread_id, stack_id, size, bytes, alloc_us, free_us)   heap objects (allocations.ts)
 *
 * A sample row is one record of the profile, whatever it weighs: `value` is
 * its value of the profile's default sample type and `type_values[type_index + 1]`
 * its value of each type (sample_types says which), so "bytes by function" is
 * sum(value), never count(*). Labels are per profile and label set (0 = none).
 *
 * Frames and stacks are content-addressed: frame_id is a hash of the frame's
 * seven fields, stack_id a hash of its frame ids, so a stack is stored once
 * for the whole fleet however many files and samples share it (the files of
 * one service repeat each other's stacks), and ids agree between exports of
 * different batches. profile_id is a hash of the file's absolute path and
 * start time. All ids are 63-bit (first 8 bytes of SHA-256, shifted).
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { formatFromPath, openProfile } from '../formats/index';
import { frameKey, lastTickUs, sampleCountColumn, type Frame } from '../profile/index';
import type { DuckDBAppender, DuckDBDataChunk, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { loadDuckDB, runSql, type DuckDBConnection } from './duckdb';
import { AllocationRows, type RowSink } from './allocations';
import { bigintTimeUs } from './times';
import type { StackTable } from '../profile/index';
export const TABLE_NAMES = [
  'profiles',
  'sample_types',
  'frames',
  'stacks',
  'samples',
  'labels',
  'allocations',
] as const;
export type TableName = (typeof TABLE_NAMES)[number];

/** Column definitions, in order; the documented schema. */
export const SCHEMA: Record<TableName, readonly [string, string][]> = {
  profiles: [
    ['profile_id', 'BIGINT'],
    ['path', 'VARCHAR'],
    ['host', 'VARCHAR'],
    ['start_us', 'BIGINT'],
    ['end_us', 'BIGINT'],
    ['duration_s', 'DOUBLE'],
    ['sample_interval_us', 'BIGINT'],
    ['samples', 'BIGINT'],
    ['threads', 'INTEGER'],
  ],
  sample_types: [
    ['profile_id', 'BIGINT'],
    ['type_index', 'INTEGER'],
    ['type', 'VARCHAR'],
    ['unit', 'VARCHAR'],
    ['is_default', 'BOOLEAN'],
  ],
  frames: [
    ['frame_id', 'BIGINT'],
    ['funcname', 'VARCHAR'],
    ['filename', 'VARCHAR'],
    ['lineno', 'INTEGER'],
    ['end_lineno', 'INTEGER'],
    ['col', 'INTEGER'],
    ['end_col', 'INTEGER'],
    ['opcode', 'SMALLINT'],
  ],
  stacks: [
    ['stack_id', 'BIGINT'],
    ['depth', 'SMALLINT'],
    ['frame_id', 'BIGINT'],
  ],
  samples: [
    ['profile_id', 'BIGINT'],
    ['thread_id', 'UBIGINT'],
    ['timestamp_us', 'BIGINT'],
    ['status', 'UTINYINT'],
    ['stack_id', 'BIGINT'],
    ['value', 'DOUBLE'],
    ['type_values', 'DOUBLE[]'],
    ['label_set_id', 'INTEGER'],
  ],
  labels: [
    ['profile_id', 'BIGINT'],
    ['label_set_id', 'INTEGER'],
    ['key', 'VARCHAR'],
    ['str', 'VARCHAR'],
    ['num', 'DOUBLE'],
    ['unit', 'VARCHAR'],
  ],
  allocations: [
    ['profile_id', 'BIGINT'],
    ['thread_id', 'UBIGINT'],
    ['stack_id', 'BIGINT'],
    ['size', 'BIGINT'],
    ['bytes', 'DOUBLE'],
    ['alloc_us', 'BIGINT'],
    ['free_us', 'BIGINT'],
  ],
};

export interface LoadOptions {
  /** The host a file's samples come from (e.g. its directory's name); null = unknown. */
  hostOf?: (file: string) => string | null;
  onFile?: (index: number, file: string) => void;
}

export interface LoadResult {
  files: number;
  samples: number;
  /** Rows of `allocations`: sampled heap objects of the files recorded with --heap. */
  allocations: number;
  stacks: number;
  frames: number;
}

/** 63 bits of SHA-256: the tables' ids. */
function id63(data: string | Uint8Array): bigint {
  return createHash('sha256').update(data).digest().readBigUInt64BE(0) >> 1n;
}

/** A stable id of a profile file. */
export function profileId(file: string, startTimeUs: bigint): bigint {
  return id63(`${path.resolve(file)}\u0000${startTimeUs}`);
}

/** Creates the six tables, each name with `prefix` before it. */
export async function createTables(connection: DuckDBConnection, prefix = ''): Promise<void> {
  for (const name of TABLE_NAMES) {
    await runSql(connection, `CREATE TABLE ${prefix}${name} (${SCHEMA[name].map(([c, t]) => `${c} ${t}`).join(', ')})`);
  }
}

/** DuckDB's vector size: the most rows a data chunk holds. */
const CHUNK_ROWS = 2048;

/**
 * One table's rows gathered column by column and handed to DuckDB a data chunk
 * at a time: one native call per column per chunk instead of one per value
 * (appending value by value made the export ~80 s per million samples).
 */
class ChunkAppender {
  private readonly types: DuckDBType[] = [];
  private readonly columns: DuckDBValue[][] = [];
  private rows = 0;
  private chunk: DuckDBDataChunk | undefined;
  constructor(private readonly appender: DuckDBAppender) {
    for (let c = 0; c < appender.columnCount; c++) {
      this.types.push(appender.columnType(c));
      this.columns.push(new Array<DuckDBValue>(CHUNK_ROWS));
    }
  }
  /** Appends one row (values in column order); the caller may reuse its array. */
  appendRow(values: readonly DuckDBValue[]): void {
    for (let c = 0; c < this.columns.length; c++) this.columns[c]![this.rows] = values[c]!;
    if (++this.rows === CHUNK_ROWS) this.flushChunk();
  }
  /** Hands the rows gathered so far to the table. */
  flush(): void {
    this.flushChunk();
    this.appender.flushSync();
  }
  close(): void {
    this.flushChunk();
    this.appender.closeSync();
  }
  private flushChunk(): void {
    if (this.rows === 0) return;
    // One data chunk, reset and refilled: a fresh one per 2,048 rows is native memory that only a finalizer frees,
    // which GC runs too late (4 M allocation rows held ~400 MB past DuckDB's memory limit).
    this.chunk ??= loadDuckDB().DuckDBDataChunk.create(this.types);
    this.chunk.reset();
    this.chunk.rowCount = this.rows;
    for (let c = 0; c < this.columns.length; c++)
      this.chunk.setColumnValues(c, this.rows === CHUNK_ROWS ? this.columns[c]! : this.columns[c]!.slice(0, this.rows));
    this.appender.appendDataChunk(this.chunk);
    this.rows = 0;
  }
}

/** Where the rows of one table go: a value array in the table's column order, which the caller may reuse. */
/**
 * The destination of the rows: DuckDB's appenders (loadProfiles) or ClickHouse's batches (clickhouse.ts). The rows
 * are built once, here, for both.
 */
export interface RowTarget {
  tables: Record<TableName, RowSink>;
  /** samples.type_values as the target holds a DOUBLE[]. */
  list(values: number[]): DuckDBValue;
  /** After each batch of a file's samples: a target that sends rows elsewhere may wait here (backpressure). */
  afterBatch?(): Promise<void>;
  /**
   * After a file's rows. `moreRows`: rows of this profile_id may still come (its process's heap objects still
   * live, written by finish()).
   */
  endFile?(profileId: bigint, moreRows: boolean): Promise<void>;
}

/**
 * Streams each file's samples into the tables (one file open at a time); each distinct frame and stack is
 * written once.
 */
export async function loadProfiles(
  connection: DuckDBConnection,
  files: readonly string[],
  options: LoadOptions = {},
  prefix = '',
): Promise<LoadResult> {
  const appenders = await Promise.all(
    TABLE_NAMES.map(async (name) => new ChunkAppender(await connection.createAppender(`${prefix}${name}`))),
  );
  const tables = Object.fromEntries(TABLE_NAMES.map((name, i) => [name, appenders[i]!])) as Record<
    TableName,
    ChunkAppender
  >;
  const { listValue } = loadDuckDB();
  const total = await buildRows(
    {
      tables,
      list: listValue,
      // Each file's rows reach the table before the next file is read: JS holds at most a chunk per table.
      endFile: () => {
        for (const t of appenders) t.flush();
        return Promise.resolve();
      },
    },
    files,
    options,
  );
  for (const t of appenders) t.close();
  return total;
}

/** The rows of the seven tables for `files`, handed to `target`. */
export async function buildRows(
  target: RowTarget,
  files: readonly string[],
  options: LoadOptions = {},
): Promise<LoadResult> {
  const { profiles, sample_types: sampleTypes, frames, stacks, samples, labels } = target.tables;
  const total: LoadResult = { files: files.length, samples: 0, allocations: 0, stacks: 0, frames: 0 };
  const framesWritten = new Set<bigint>();
  const stacksWritten = new Set<bigint>();
  const frameIdOf = (fr: Frame): bigint => {
    const id = id63(frameKey(fr));
    if (!framesWritten.has(id)) {
      framesWritten.add(id);
      frames.appendRow([id, fr.funcname, fr.filename, fr.lineno, fr.endLineno, fr.column, fr.endColumn, fr.opcode]);
    }
    return id;
  };
  const stackRow: DuckDBValue[] = new Array<DuckDBValue>(3);
  /** The content-addressed stack_id of a file's stack (`frameIds`: its frame index → frame_id), written once. */
  const stackIdOf = (fileFrames: readonly Frame[], fileStacks: StackTable, sid: number, frameIds: bigint[]): bigint => {
    const stack = fileStacks.toArray(sid);
    const ids = new BigUint64Array(stack.length);
    for (let d = 0; d < ids.length; d++) ids[d] = frameIds[stack[d]!] ??= frameIdOf(fileFrames[stack[d]!]!);
    const stackId = id63(new Uint8Array(ids.buffer));
    if (!stacksWritten.has(stackId)) {
      stacksWritten.add(stackId);
      stackRow[0] = stackId;
      for (let d = 0; d < ids.length; d++) {
        stackRow[1] = d;
        stackRow[2] = ids[d]!;
        stacks.appendRow(stackRow);
      }
    }
    return stackId;
  };
  const allocations = new AllocationRows(target.tables.allocations, stackIdOf);
  const row: DuckDBValue[] = new Array<DuckDBValue>(8);
  for (let f = 0; f < files.length; f++) {
    const file = files[f]!;
    options.onFile?.(f, file);
    let ended: { id: bigint; moreRows: boolean } | undefined;
    const src = openProfile(file, { format: formatFromPath(file) === 'tachyon' ? 'tachyon' : undefined });
    try {
      const id = profileId(file, src.meta.startTimeUs);
      const start = bigintTimeUs(src.meta.startTimeUs, 'start time', file);
      src.meta.sampleTypes.forEach((t, k) =>
        sampleTypes.appendRow([id, k, t.type, t.unit, k === src.meta.defaultSampleType]),
      );
      const defaultColumn = src.meta.defaultSampleType;
      // This file's frame index -> frame_id, and its stack ids -> stack_id (content-addressed: the same across files).
      const frameIds: bigint[] = [];
      const stackIds = new Map<number, bigint>();
      const labelSetsWritten = new Set<number>();
      const threads = new Set<bigint>();
      let last: number | undefined;
      let count = 0;
      const countColumn = sampleCountColumn(src.meta);
      const intervalUs = Number(src.meta.sampleIntervalUs);
      for (const b of src.batches()) {
        for (let i = 0; i < b.length; i++) {
          const sid = b.stack[i]!;
          let stackId = stackIds.get(sid);
          if (stackId === undefined) {
            stackId = stackIdOf(src.frames, src.stacks, sid, frameIds);
            stackIds.set(sid, stackId);
          }
          const labelSet = b.labels[i]!;
          if (labelSet !== 0 && !labelSetsWritten.has(labelSet)) {
            labelSetsWritten.add(labelSet);
            for (const l of src.labelSets[labelSet]!)
              labels.appendRow([id, labelSet, l.key, l.str ?? null, l.num ?? null, l.unit ?? null]);
          }
          // Threads of different interpreters share a thread id in this table; CPython's subinterpreters are
          // rare in fleets.
          const thread = src.threads[b.thread[i]!]!.threadId;
          threads.add(thread);
          const time = b.time[i]!;
          const lastTick = countColumn < 0 ? time : lastTickUs(time, b.values[countColumn]![i]!, intervalUs);
          if (!Number.isNaN(lastTick) && (last === undefined || lastTick > last)) last = lastTick;
          const values: number[] = new Array<number>(b.values.length);
          for (let v = 0; v < values.length; v++) values[v] = b.values[v]![i]!;
          row[0] = id;
          row[1] = thread;
          row[2] = Number.isNaN(time) ? null : bigintTimeUs(time, 'sample time', file);
          row[3] = b.status[i]!;
          row[4] = stackId;
          row[5] = values[defaultColumn]!;
          row[6] = target.list(values);
          row[7] = labelSet;
          samples.appendRow(row);
          count++;
        }
        if (target.afterBatch !== undefined) await target.afterBatch();
      }
      // The end: the last sample, or the stated duration past the start if later (pprof's duration_nanos).
      let end = last === undefined ? start : bigintTimeUs(last, 'sample time', file);
      const stated = src.meta.durationUs === undefined ? undefined : start + src.meta.durationUs;
      if (stated !== undefined && stated > end) end = stated;
      const duration = end > start ? Number(end - start) / 1e6 : 0;
      profiles.appendRow([
        id,
        path.resolve(file),
        options.hostOf?.(file) ?? null,
        start,
        end,
        duration,
        bigintTimeUs(src.meta.sampleIntervalUs, 'sample interval', file),
        BigInt(count),
        threads.size,
      ]);
      total.samples += count;
      const processIdentity = src.meta.processIdentity ?? `file:${path.resolve(file)}`;
      total.allocations += allocations.addFile(file, id, processIdentity);
      ended = { id, moreRows: allocations.tracks(processIdentity) };
    } finally {
      src.close();
    }
    if (ended !== undefined) await target.endFile?.(ended.id, ended.moreRows);
    // The native reader's decoders are freed by N-API finalizers, which run only when the event loop turns:
    // without this a synchronous pass kept every file's decoder (~3 MB each; 6 GB RSS at 1,000 files).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  total.allocations += allocations.finish();
  total.stacks = stacksWritten.size;
  total.frames = framesWritten.size;
  return total;
}
