/**
 * A fleet's profiles as four DuckDB tables (the schema of docs/fleet.md):
 *
 *   profiles(profile_id, path, host, start_us, end_us, duration_s, sample_interval_us, samples, threads)
 *   frames(profile_id, frame_id, funcname, filename, lineno, end_lineno, col, end_col, opcode)
 *   stacks(profile_id, stack_id, depth, frame_id)       depth 0 = innermost frame
 *   samples(profile_id, thread_id, timestamp_us, status, stack_id)
 *
 * Stacks are interned per file, so a sample is five small columns and a
 * stack's frames are stored once per file however many samples share it;
 * frame_id is the file's own frame-table index. profile_id is stable for a
 * file (a hash of its absolute path and start time), so exports of different
 * batches of files can be queried together.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { formatFromPath, openProfile } from '../convert/convert';
import type { Frame } from '../convert/model';
import { runSql, type DuckDBConnection } from './duckdb';

export const TABLE_NAMES = ['profiles', 'frames', 'stacks', 'samples'] as const;
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
  frames: [
    ['profile_id', 'BIGINT'],
    ['frame_id', 'INTEGER'],
    ['funcname', 'VARCHAR'],
    ['filename', 'VARCHAR'],
    ['lineno', 'INTEGER'],
    ['end_lineno', 'INTEGER'],
    ['col', 'INTEGER'],
    ['end_col', 'INTEGER'],
    ['opcode', 'SMALLINT'],
  ],
  stacks: [
    ['profile_id', 'BIGINT'],
    ['stack_id', 'INTEGER'],
    ['depth', 'SMALLINT'],
    ['frame_id', 'INTEGER'],
  ],
  samples: [
    ['profile_id', 'BIGINT'],
    ['thread_id', 'UBIGINT'],
    ['timestamp_us', 'BIGINT'],
    ['status', 'UTINYINT'],
    ['stack_id', 'INTEGER'],
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
  stacks: number;
  frames: number;
}

/** A stable 63-bit id of a profile file. */
export function profileId(file: string, startTimeUs: bigint): bigint {
  const digest = createHash('sha256').update(`${path.resolve(file)}\u0000${startTimeUs}`).digest();
  return digest.readBigUInt64BE(0) >> 1n;
}

/** Creates the four tables, each name with `prefix` before it. */
export async function createTables(connection: DuckDBConnection, prefix = ''): Promise<void> {
  for (const name of TABLE_NAMES) {
    await runSql(connection, `CREATE TABLE ${prefix}${name} (${SCHEMA[name].map(([c, t]) => `${c} ${t}`).join(', ')})`);
  }
}

function appendNullable(appender: { appendInteger(v: number): void; appendNull(): void }, v: number | null): void {
  if (v === null) appender.appendNull();
  else appender.appendInteger(v);
}

/** Streams each file's samples into the tables (one file open at a time). */
export async function loadProfiles(connection: DuckDBConnection, files: readonly string[], options: LoadOptions = {}, prefix = ''): Promise<LoadResult> {
  const app = {
    profiles: await connection.createAppender(`${prefix}profiles`),
    frames: await connection.createAppender(`${prefix}frames`),
    stacks: await connection.createAppender(`${prefix}stacks`),
    samples: await connection.createAppender(`${prefix}samples`),
  };
  const total: LoadResult = { files: files.length, samples: 0, stacks: 0, frames: 0 };
  for (let f = 0; f < files.length; f++) {
    const file = files[f]!;
    options.onFile?.(f, file);
    const src = openProfile(file, formatFromPath(file) === 'tachyon' ? 'tachyon' : undefined);
    try {
      const id = profileId(file, src.meta.startTimeUs);
      const stackIds = new Map<string, number>();
      const threads = new Set<bigint>();
      let last: bigint | undefined;
      let samples = 0;
      const a = app.samples;
      for (const s of src.samples()) {
        const key = Array.prototype.join.call(s.stack, ',');
        let stackId = stackIds.get(key);
        if (stackId === undefined) {
          stackId = stackIds.size;
          stackIds.set(key, stackId);
          for (let d = 0; d < s.stack.length; d++) {
            app.stacks.appendBigInt(id);
            app.stacks.appendInteger(stackId);
            app.stacks.appendSmallInt(d);
            app.stacks.appendInteger(s.stack[d]!);
            app.stacks.endRow();
          }
        }
        // Threads of different interpreters share a thread id in this table; CPython's subinterpreters are rare in fleets.
        threads.add(s.threadId);
        if (last === undefined || s.timestampUs > last) last = s.timestampUs;
        a.appendBigInt(id);
        a.appendUBigInt(s.threadId);
        a.appendBigInt(s.timestampUs);
        a.appendUTinyInt(s.status);
        a.appendInteger(stackId);
        a.endRow();
        samples++;
      }
      // Frames after the samples: a streaming source's table may grow while it is read.
      const frames: readonly Frame[] = src.frames;
      for (let i = 0; i < frames.length; i++) {
        const fr = frames[i]!;
        app.frames.appendBigInt(id);
        app.frames.appendInteger(i);
        app.frames.appendVarchar(fr.funcname);
        app.frames.appendVarchar(fr.filename);
        appendNullable(app.frames, fr.lineno);
        appendNullable(app.frames, fr.endLineno);
        appendNullable(app.frames, fr.column);
        appendNullable(app.frames, fr.endColumn);
        if (fr.opcode === null) app.frames.appendNull();
        else app.frames.appendSmallInt(fr.opcode);
        app.frames.endRow();
      }
      const p = app.profiles;
      const start = src.meta.startTimeUs;
      const end = last ?? start;
      const host = options.hostOf?.(file) ?? null;
      p.appendBigInt(id);
      p.appendVarchar(path.resolve(file));
      if (host === null) p.appendNull();
      else p.appendVarchar(host);
      p.appendBigInt(start);
      p.appendBigInt(end);
      p.appendDouble(end > start ? Number(end - start) / 1e6 : 0);
      p.appendBigInt(src.meta.sampleIntervalUs);
      p.appendBigInt(BigInt(samples));
      p.appendInteger(threads.size);
      p.endRow();
      total.samples += samples;
      total.stacks += stackIds.size;
      total.frames += frames.length;
    } finally {
      src.close();
    }
  }
  for (const a of Object.values(app)) a.closeSync();
  return total;
}
