/**
 * A fleet's profiles as four DuckDB tables (the schema of docs/fleet.md):
 *
 *   profiles(profile_id, path, host, start_us, end_us, duration_s, sample_interval_us, samples, threads)
 *   frames(frame_id, funcname, filename, lineno, end_lineno, col, end_col, opcode)
 *   stacks(stack_id, depth, frame_id)                   depth 0 = innermost frame
 *   samples(profile_id, thread_id, timestamp_us, status, stack_id)
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
import { formatFromPath, openProfile } from '../convert/convert';
import { frameKey, type Frame } from '../convert/model';
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

/** 63 bits of SHA-256: the tables' ids. */
function id63(data: string | Uint8Array): bigint {
  return createHash('sha256').update(data).digest().readBigUInt64BE(0) >> 1n;
}

/** A stable id of a profile file. */
export function profileId(file: string, startTimeUs: bigint): bigint {
  return id63(`${path.resolve(file)}\u0000${startTimeUs}`);
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

/** Streams each file's samples into the tables (one file open at a time); each distinct frame and stack is written once. */
export async function loadProfiles(connection: DuckDBConnection, files: readonly string[], options: LoadOptions = {}, prefix = ''): Promise<LoadResult> {
  const app = {
    profiles: await connection.createAppender(`${prefix}profiles`),
    frames: await connection.createAppender(`${prefix}frames`),
    stacks: await connection.createAppender(`${prefix}stacks`),
    samples: await connection.createAppender(`${prefix}samples`),
  };
  const total: LoadResult = { files: files.length, samples: 0, stacks: 0, frames: 0 };
  const framesWritten = new Set<bigint>();
  const stacksWritten = new Set<bigint>();
  const frameIdOf = (fr: Frame): bigint => {
    const id = id63(frameKey(fr));
    if (!framesWritten.has(id)) {
      framesWritten.add(id);
      const a = app.frames;
      a.appendBigInt(id);
      a.appendVarchar(fr.funcname);
      a.appendVarchar(fr.filename);
      appendNullable(a, fr.lineno);
      appendNullable(a, fr.endLineno);
      appendNullable(a, fr.column);
      appendNullable(a, fr.endColumn);
      if (fr.opcode === null) a.appendNull();
      else a.appendSmallInt(fr.opcode);
      a.endRow();
    }
    return id;
  };
  for (let f = 0; f < files.length; f++) {
    const file = files[f]!;
    options.onFile?.(f, file);
    const src = openProfile(file, formatFromPath(file) === 'tachyon' ? 'tachyon' : undefined);
    try {
      const id = profileId(file, src.meta.startTimeUs);
      // This file's frame index → frame_id, and its stacks (by frame indices) → stack_id.
      const frameIds: bigint[] = [];
      const stackIds = new Map<string, bigint>();
      const threads = new Set<bigint>();
      let last: bigint | undefined;
      let samples = 0;
      const a = app.samples;
      for (const s of src.samples()) {
        const key = Array.prototype.join.call(s.stack, ',');
        let stackId = stackIds.get(key);
        if (stackId === undefined) {
          const ids = new BigUint64Array(s.stack.length);
          for (let d = 0; d < ids.length; d++) ids[d] = frameIds[s.stack[d]!] ??= frameIdOf(src.frames[s.stack[d]!]!);
          stackId = id63(new Uint8Array(ids.buffer));
          stackIds.set(key, stackId);
          if (!stacksWritten.has(stackId)) {
            stacksWritten.add(stackId);
            for (let d = 0; d < ids.length; d++) {
              app.stacks.appendBigInt(stackId);
              app.stacks.appendSmallInt(d);
              app.stacks.appendBigInt(ids[d]!);
              app.stacks.endRow();
            }
          }
        }
        // Threads of different interpreters share a thread id in this table; CPython's subinterpreters are rare in fleets.
        threads.add(s.threadId);
        if (last === undefined || s.timestampUs > last) last = s.timestampUs;
        a.appendBigInt(id);
        a.appendUBigInt(s.threadId);
        a.appendBigInt(s.timestampUs);
        a.appendUTinyInt(s.status);
        a.appendBigInt(stackId);
        a.endRow();
        samples++;
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
    } finally {
      src.close();
    }
  }
  for (const a of Object.values(app)) a.closeSync();
  total.stacks = stacksWritten.size;
  total.frames = framesWritten.size;
  return total;
}
