// test tier: slow (a generated fleet through DuckDB and Parquet, ~41 s)
/**
 * Many profiles: the multi-file source, merge, the DuckDB tables, Parquet
 * export and the example queries, on a fleet generated from a real stack
 * stream (bench/_fleet.mjs: node_tsc cut into windows over two hosts), with
 * the real DuckDB. Every query's answer is checked against aggregate().
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProfile } from '../../lib/formats/index';
import { samplesOf } from '../support/model';
import { threadKey } from '../../lib/profile/index';
import { ErrorCode } from '../../lib/errors';
import {
  EXAMPLE_QUERIES,
  FLEET_SCHEMA,
  FLEET_TABLES,
  exportParquet,
  listProfileFiles,
  mergeProfiles,
  openProfiles,
  querySql,
  sqlRowObjects,
} from '../../lib/fleet/index';
import { connectDuckDB, runSql, sqlString } from '../../lib/fleet/duckdb';
import { aggregate } from '../../lib/query/aggregate';
import { ProfileReader } from '../../lib/tachyon/index';
import { thrown } from '../support/refusals';
import { sharedPath } from '../support/environment';
import { compileBuild, type Build } from '../support/build';
// @ts-expect-error: a plain ES module of the benchmarks, without types
import { generateFleet } from '../../bench/_fleet.mjs';

let work: string;
let fleetDir: string;
let files: string[];

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'profpack-fleet-'));
  fleetDir = path.join(work, 'fleet');
  files = generateFleet(fleetDir, { files: 6, samples: 1500, hosts: 2 });
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

type Row = Record<string, unknown>;
const byKey = (rows: Row[], ...cols: string[]) =>
  new Map(rows.map((r) => [cols.map((c) => String(r[c])).join('\u0000'), r]));

describe('the multi-file source', () => {
  it('expands directories (sorted, recursively) and refuses missing or empty inputs with a code', () => {
    expect(listProfileFiles([fleetDir])).toEqual([...files].sort());
    expect(thrown(() => listProfileFiles([path.join(work, 'missing')])).code).toBe(ErrorCode.FLEET_NO_INPUT);
    expect(thrown(() => listProfileFiles([])).code).toBe(ErrorCode.FLEET_NO_INPUT);
    const empty = mkdtempSync(path.join(work, 'empty-'));
    expect(thrown(() => listProfileFiles([empty])).code).toBe(ErrorCode.FLEET_NO_INPUT);
  });

  it('aggregates as the sum of the files: every sample once, threads of different files apart', () => {
    const many = aggregate(openProfiles(files), { limit: 0 });
    const self = new Map<string, number>();
    let samples = 0;
    for (const f of files) {
      const src = openProfile(f);
      const one = aggregate(src, { limit: 0 });
      src.close();
      samples += one.samples;
      for (const r of one.rows) self.set(r.key, (self.get(r.key) ?? 0) + r.self);
    }
    expect(many.samples).toBe(samples);
    expect(new Map(many.rows.map((r) => [r.key, r.self]))).toEqual(self);
    const src = openProfiles(files);
    const threads = new Set<string>();
    for (const s of samplesOf(src)) threads.add(threadKey(s.threadId, s.interpreterId));
    // node_tsc has one thread (id 0 in every file): each file's gets its own id.
    expect(threads.size).toBe(files.length);
    expect(src.meta.startTimeUs).toBe(ProfileReader.open(files[0]!).info.startTimeUs);
  });
});

describe('merge', () => {
  it('keeps every sample, its time, status and stack, with threads renumbered apart', () => {
    const out = path.join(work, 'merged.tach');
    const r = mergeProfiles([fleetDir], out);
    const merged = openProfile(out);
    const got: string[] = [];
    for (const s of samplesOf(merged))
      got.push(
        `${s.timestampUs} ${s.status} ${Array.from(s.stack, (i) => `${merged.frames[i]!.funcname}@${merged.frames[i]!.filename}`).join(';')}`,
      );
    merged.close();
    const want: string[] = [];
    let wantSamples = 0;
    const perThread = new Set<string>();
    for (const f of listProfileFiles([fleetDir])) {
      const src = openProfile(f);
      for (const s of samplesOf(src)) {
        want.push(
          `${s.timestampUs} ${s.status} ${Array.from(s.stack, (i) => `${src.frames[i]!.funcname}@${src.frames[i]!.filename}`).join(';')}`,
        );
        perThread.add(`${f} ${threadKey(s.threadId, s.interpreterId)}`);
        wantSamples += s.values[0]!;
      }
      src.close();
    }
    // Samples (a record may be a REPEAT run of several).
    expect(r.samples).toBe(wantSamples);
    // The writer may flush one thread's records after another's: the order within each thread is what is kept.
    expect(got.sort()).toEqual(want.sort());
    expect(r.threads).toBe(perThread.size);
    const reader = ProfileReader.open(out);
    expect(reader.info.threadCount).toBe(perThread.size);
    expect(reader.info.startTimeUs).toBe(openProfiles(files).meta.startTimeUs);
    reader.close();
  });
});

describe('DuckDB tables and the example queries (real DuckDB)', () => {
  it('top functions equals aggregate() over the same files', async () => {
    const sql = sqlRowObjects(await querySql(EXAMPLE_QUERIES.topFunctions(0), [fleetDir]));
    const top = aggregate(openProfiles(files), { limit: 0 }).rows;
    expect(sql.length).toBe(top.length);
    const rows = byKey(sql, 'funcname', 'filename');
    for (const r of top)
      expect(rows.get(`${r.funcname}\u0000${r.filename}`)).toEqual({
        funcname: r.funcname,
        filename: r.filename,
        self: r.self,
        total: r.total,
      });
  });

  it('the window diff equals aggregate() with --from/--to at the middle of the fleet span', async () => {
    const sql = sqlRowObjects(await querySql(EXAMPLE_QUERIES.windowDiff(0), [fleetDir]));
    const span = sqlRowObjects(
      await querySql('SELECT min(start_us) AS t0, (min(start_us) + max(end_us)) // 2 AS mid FROM profiles', files),
    )[0]!;
    const midMs = (Number(span.mid) - Number(span.t0)) / 1000;
    const byFunc = (rows: { funcname: string | null; self: number }[]) => {
      const m = new Map<string, number>();
      for (const r of rows) if (r.self > 0) m.set(r.funcname!, (m.get(r.funcname!) ?? 0) + r.self);
      return m;
    };
    const before = byFunc(aggregate(openProfiles(files), { limit: 0, toMs: midMs }).rows);
    const after = byFunc(aggregate(openProfiles(files), { limit: 0, fromMs: midMs }).rows);
    expect(before.size).toBeGreaterThan(0);
    expect(after.size).toBeGreaterThan(0);
    expect(new Map(sql.filter((r) => Number(r.before) > 0).map((r) => [r.funcname, r.before]))).toEqual(before);
    expect(new Map(sql.filter((r) => Number(r.after) > 0).map((r) => [r.funcname, r.after]))).toEqual(after);
    for (const r of sql) expect(r.change).toBe(Number(r.after) - Number(r.before));
  });

  it('per-thread CPU adds up to the on-CPU samples aggregate() counts', async () => {
    const sql = sqlRowObjects(
      await querySql(EXAMPLE_QUERIES.threadCpu(0), files, { hostOf: (f) => path.basename(path.dirname(f)) }),
    );
    const sum = (col: string) => sql.reduce((a, r) => a + Number(r[col]), 0);
    expect(sum('samples')).toBe(aggregate(openProfiles(files), { limit: 1 }).samples);
    expect(sum('on_cpu')).toBe(aggregate(openProfiles(files), { limit: 1, status: 'on-cpu' }).samples);
    expect(new Set(sql.map((r) => r.host))).toEqual(new Set(['host-0', 'host-1']));
  });

  it('the stacks that contain a function add up to its total samples', async () => {
    const top = aggregate(openProfiles(files), { limit: 0, sort: 'total' }).rows.filter(
      (r) => r.funcname !== '' && r.funcname !== '(anonymous)',
    );
    const fn = top[3]!.funcname!;
    const want = top.filter((r) => r.funcname === fn).reduce((a, r) => a + r.total, 0);
    const sql = sqlRowObjects(await querySql(EXAMPLE_QUERIES.stacksWith(fn, 0), files));
    expect(sql.reduce((a, r) => a + Number(r.samples), 0)).toBe(want);
    for (const r of sql) expect(String(r.stack).split(';')).toContain(fn);
  });

  it('export writes Parquet that DuckDB reads back with the documented schema, and SQL over it answers as over the files', async () => {
    const out = path.join(work, 'parquet');
    const r = await exportParquet([fleetDir], out, { hostOf: (f) => path.basename(path.dirname(f)) });
    expect(r.files).toBe(files.length);
    const db = await connectDuckDB();
    try {
      for (const name of FLEET_TABLES) {
        const described = (
          await runSql(db.connection, `DESCRIBE SELECT * FROM read_parquet(${sqlString(r.outputs[name].path)})`)
        ).getRowObjectsJS();
        expect(described.map((d) => [d.column_name, d.column_type])).toEqual(
          FLEET_SCHEMA[name].map(([c, t]) => [c, t]),
        );
      }
      const count = (
        await runSql(
          db.connection,
          `SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(r.outputs.samples.path)})`,
        )
      ).getRowObjectsJS()[0]!.n;
      expect(count).toBe(r.samples);
    } finally {
      db.close();
    }
    const fromParquet = await querySql(EXAMPLE_QUERIES.topFunctions(0), [out]);
    const fromFiles = await querySql(EXAMPLE_QUERIES.topFunctions(0), [fleetDir]);
    expect(fromParquet).toEqual(fromFiles);
    // Two exports of different batches share frames and stacks (content-addressed): queried together, each counts once.
    const [a, b] = [path.join(work, 'batch-a'), path.join(work, 'batch-b')];
    await exportParquet(files.slice(0, 3), a);
    await exportParquet(files.slice(3), b);
    expect(await querySql(EXAMPLE_QUERIES.topFunctions(0), [a, b])).toEqual(fromFiles);
    expect(await querySql(EXAMPLE_QUERIES.topFunctions(0), [a, ...files.slice(3)])).toEqual(fromFiles);
  });

  it('a query DuckDB refuses is ERR_SQL_FAILED', async () => {
    await expect(querySql('SELECT nope FROM samples', files)).rejects.toMatchObject({ code: ErrorCode.SQL_FAILED });
  });
});

describe('CLI: top over many files, merge, export, sql', () => {
  let build: Build;
  beforeAll(() => {
    build = compileBuild();
  });
  afterAll(() => build?.cleanup());
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}, pre: string[] = []) => {
    const run = spawnSync(process.execPath, [...pre, build.cli, ...args], {
      encoding: 'utf8',
      cwd: work,
      env: { ...process.env, ...env },
    });
    return { code: run.status, stdout: run.stdout, stderr: run.stderr };
  };

  it('top DIR, merge, export and sql --json/--csv agree', () => {
    const top = cli(['top', fleetDir, '--json', '-n', '0']);
    expect(top.code).toBe(0);
    const want = aggregate(openProfiles(files), { limit: 0 });
    expect(JSON.parse(top.stdout).samples).toBe(want.samples);
    expect(cli(['merge', fleetDir, '-o', 'm.tach']).code).toBe(0);
    expect(JSON.parse(cli(['top', 'm.tach', '--json', '-n', '0']).stdout).rows).toEqual(JSON.parse(top.stdout).rows);
    expect(cli(['export', fleetDir, '--to', 'parquet', '-o', 'pq', '--host-from-dir']).code).toBe(0);
    const json = cli([
      'sql',
      'SELECT host, sum(value)::INTEGER AS n FROM samples JOIN profiles USING (profile_id) GROUP BY host ORDER BY host',
      'pq',
      '--json',
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { host: 'host-0', n: 3 * 1500 },
      { host: 'host-1', n: 3 * 1500 },
    ]);
    const csv = cli(['sql', 'SELECT sum(value)::BIGINT AS n FROM samples', fleetDir, '--csv']);
    expect(csv.stdout).toBe(`n\n${want.samples}\n`);
    const table = cli(['sql', EXAMPLE_QUERIES.topFunctions(3), fleetDir]);
    expect(table.stdout.split('\n')[0]).toMatch(/^funcname\s+filename\s+self\s+total$/);
    expect(table.stdout).toContain('(3 rows)');
  });

  it('errors: one line with the code, exit 2', () => {
    writeFileSync(path.join(work, 'garbage.tach'), 'not a profile');
    const cases: [string[], string][] = [
      [['sql', 'SELECT nope', fleetDir], 'ERR_SQL_FAILED'],
      [['export', path.join(work, 'missing'), '-o', 'x'], 'ERR_FLEET_NO_INPUT'],
      [['merge', 'garbage.tach', '-o', 'g.tach'], 'ERR_TACHYON_'],
      [['sql', 'SELECT 1', fleetDir, '--json', '--csv'], 'ERR_INVALID_ARGUMENT'],
    ];
    for (const [args, code] of cases) {
      const r = cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^profpack: ${code}`));
    }
  });

  it('without @duckdb/node-api, export and sql say ERR_DUCKDB_UNAVAILABLE', () => {
    // A preload that makes the package unresolvable, as on a platform without its binary.
    const hide = path.join(work, 'hide-duckdb.cjs');
    writeFileSync(
      hide,
      `const M = require('module'); const r = M._resolveFilename; M._resolveFilename = function (req, ...a) { if (req.startsWith('@duckdb/')) { const e = new Error("Cannot find module '" + req + "'"); e.code = 'MODULE_NOT_FOUND'; throw e; } return r.call(this, req, ...a); };`,
    );
    for (const args of [
      ['sql', 'SELECT 1', fleetDir],
      ['export', fleetDir, '-o', 'nodb'],
    ]) {
      const r = cli(args, {}, ['--require', hide]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^profpack: ERR_DUCKDB_UNAVAILABLE: /);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    // What needs no DuckDB still works.
    expect(cli(['top', fleetDir, '-n', '1'], {}, ['--require', hide]).code).toBe(0);
  });
});

describe('profiles rows of outside pprof files', () => {
  it('start_us ≤ end_us and duration_s is duration_nanos; @datadog/pprof time_nanos is the end', async () => {
    const inputs = [
      sharedPath('data', 'outside', 'datadog-pprof-5.20.0-wall-labels.pb.gz'),
      sharedPath('data', 'outside', 'go-runtime-pprof.cpu.pb.gz'),
    ];
    const rows = sqlRowObjects(await querySql('SELECT path, start_us, end_us, duration_s FROM profiles', inputs));
    expect(rows).toHaveLength(2);
    for (const file of inputs) {
      // Oracle: the header fields as pprof-format decodes them.
      const decoded = Profile.decode(gunzipSync(readFileSync(file)));
      const timeUs = BigInt(decoded.timeNanos) / 1000n;
      const durationUs = BigInt(decoded.durationNanos) / 1000n;
      expect(durationUs).toBeGreaterThan(0n);
      const datadog = file.includes('datadog');
      const start = datadog ? (BigInt(decoded.timeNanos) - BigInt(decoded.durationNanos)) / 1000n : timeUs;
      const row = rows.find((r) => r.path === file)!;
      expect(BigInt(row.start_us as bigint)).toBe(start);
      expect(BigInt(row.end_us as bigint)).toBe(start + durationUs);
      expect(row.duration_s).toBeCloseTo(Number(durationUs) / 1e6, 6);
    }
  });
});
