// test tier: slow (two real ClickHouse servers, ~29 s)
/**
 * Export into real ClickHouse servers (Debian's clickhouse-server 18.16, two
 * of them started by test/support/clickhouse-servers.ts as a two-shard
 * cluster, one cluster for the whole file). Oracles: the vectors' samples as
 * CPython's reader lists them (expected.json), aggregate() over the files
 * (what `profpack top` prints), DuckDB over the Parquet export, and the
 * strings the test wrote.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLICKHOUSE_QUERIES,
  EXAMPLE_QUERIES,
  exportClickHouse,
  exportParquet,
  openProfiles,
  queryClickHouse,
  querySql,
  type ClickHouseExportResult,
} from '../../lib/fleet/index';
import { aggregate } from '../../lib/query/aggregate';
import { ErrorCode, type ProfpackError } from '../../lib/errors';
import { ModelWriter } from '../../lib/tachyon/write/model-writer';
import { startClickHouseServers, type ClickHouseServers } from '../support/clickhouse-servers.mjs';
import { acceptedVectors, readExpected, vectorDir } from '../support/vectors';
import { scratchDir } from '../support/scratch-dir';

// @ts-expect-error: a plain ES module of the benchmarks, without types
import { generateFleet } from '../../bench/_fleet.mjs';

const work = scratchDir('profpack-clickhouse-');
/** The CLI as `npm test` compiled it (a fresh tsc build per file would spend this file's time budget). */
const cli = path.join(__dirname, '..', '..', 'dist', 'cli', 'main.js');
let ch: ClickHouseServers;
let fleet: string[];
const fleetDir = path.join(work, 'fleet');
const hostOf = (file: string) => path.basename(path.dirname(file));

/** The accepted vectors whose times fit the tables' BIGINT (the others are refused, as by the Parquet export). */
const vectors = acceptedVectors()
  .filter((v) => {
    const e = readExpected(v);
    return BigInt(e.info.start_time_us) < 2n ** 63n && e.samples.every((s) => BigInt(s.timestamp_us) < 2n ** 63n);
  })
  .map((v) => path.join(vectorDir, `${v}.bin`));
/**
 * Every vector sample, as CPython lists them: each weighs 1 (Tachyon's default sample type is a count); a row
 * of `samples` is a record, whose value is the samples it stands for (a run of repeats is one row).
 */
const vectorSamples = vectors.reduce((n, f) => n + readExpected(path.basename(f, '.bin')).samples.length, 0);

beforeAll(async () => {
  ch = await startClickHouseServers(2);
  fleet = generateFleet(fleetDir, { files: 6, samples: 1500, hosts: 2 });
}, 120_000);
afterAll(async () => {
  await ch?.stop();
});

type Row = Record<string, unknown>;
async function rows(url: string, sql: string, database = 'profpack'): Promise<Row[]> {
  const r = await queryClickHouse(sql, url, { database });
  return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i]])));
}
const one = async (url: string, sql: string, database?: string) => (await rows(url, sql, database))[0]!;
const noneAdded = (r: ClickHouseExportResult) => Object.values(r.inserted).every((n) => n === 0);

describe('export --to clickhouse (two real servers)', () => {
  it('one server: MergeTree tables; every sample once, the schema checked on a second export', async () => {
    const [url] = ch.urls;
    const first = await exportClickHouse(fleet, [url!], { database: 'single' });
    expect(first.files).toBe(fleet.length);
    const counted = await one(url!, 'SELECT count() AS n, sum(value) AS v FROM samples', 'single');
    // A row is a record of the file, `value` its weight.
    expect(counted).toEqual({ n: first.inserted.samples, v: aggregate(openProfiles(fleet), { limit: 0 }).samples });
    expect(await one(url!, 'SELECT count() AS n FROM profiles', 'single')).toEqual({ n: fleet.length });
    const engines = await rows(url!, "SELECT DISTINCT engine FROM system.tables WHERE database = 'single'", 'single');
    expect(engines).toEqual([{ engine: 'MergeTree' }]);
    const again = await exportClickHouse(fleet, [url!], { database: 'single' });
    expect(noneAdded(again)).toBe(true);
    expect(again.present).toBe(fleet.length);
    expect(await one(url!, 'SELECT count() AS n, sum(value) AS v FROM samples', 'single')).toEqual(counted);
  }, 60_000);

  it('a cluster: both shards hold rows, the Distributed sum is every sample, a second export changes no sum', async () => {
    const inputs = [...vectors, fleetDir];
    const expectedSamples = vectorSamples + aggregate(openProfiles(fleet), { limit: 0 }).samples;
    const first = await exportClickHouse(inputs, ch.urls, { cluster: ch.cluster, hostOf });
    const shards = await Promise.all(
      ch.urls.map((u) => one(u, 'SELECT count() AS n, sum(value) AS v FROM samples_local')),
    );
    for (const s of shards) expect(s['n']).toBeGreaterThan(0);
    expect(shards.reduce((n, s) => n + (s['n'] as number), 0)).toBe(first.inserted.samples);
    expect(shards.reduce((n, s) => n + (s['v'] as number), 0)).toBe(expectedSamples);
    const sums = 'SELECT sum(value) AS v, (SELECT count() FROM stacks) AS s, (SELECT count() FROM frames) AS f';
    for (const u of ch.urls) expect((await one(u, `${sums} FROM samples`))['v']).toBe(expectedSamples);
    const before = await one(ch.urls[0]!, `${sums} FROM samples`);
    const again = await exportClickHouse(inputs, ch.urls, { cluster: ch.cluster, hostOf });
    expect(noneAdded(again)).toBe(true);
    expect(await one(ch.urls[1]!, `${sums} FROM samples`)).toEqual(before);
  }, 60_000);
});

/** Numbers compared to 0.1 (round() of the two engines may differ in the last digit), rows in a stable order. */
function canonical(result: { columns: string[]; rows: unknown[][] }): string[] {
  return result.rows
    .map((r) =>
      JSON.stringify(
        Object.fromEntries(
          result.columns.map((c, i) => [c, typeof r[i] === 'number' ? Math.round(r[i] * 10) / 10 : r[i]]),
        ),
      ),
    )
    .sort();
}

describe('the example queries: the cluster answers as DuckDB over the Parquet export', () => {
  it('every example query; the top function as profpack top (aggregate) counts it', async () => {
    // The cluster's `profpack` database holds the vectors and the fleet (the test above).
    const parquet = path.join(work, 'parquet');
    await exportParquet([...vectors, fleetDir], parquet, { hostOf });
    const top = aggregate(openProfiles([...vectors, ...fleet]), { limit: 0 }).rows;
    const fn = top[0]!.funcname!;
    const asked: [string, string][] = [
      [EXAMPLE_QUERIES.topFunctions(0), CLICKHOUSE_QUERIES.topFunctions(0)],
      [EXAMPLE_QUERIES.windowDiff(0), CLICKHOUSE_QUERIES.windowDiff(0)],
      [EXAMPLE_QUERIES.threadCpu(0), CLICKHOUSE_QUERIES.threadCpu(0)],
      [EXAMPLE_QUERIES.stacksWith(fn, 0), CLICKHOUSE_QUERIES.stacksWith(fn, 0)],
      [EXAMPLE_QUERIES.liveBytesBySite(60, 0), CLICKHOUSE_QUERIES.liveBytesBySite(60, 0)],
    ];
    for (const [duck, click] of asked) {
      const expected = await querySql(duck, [parquet]);
      const got = await queryClickHouse(click, ch.urls[1]!);
      expect(got.columns).toEqual(expected.columns);
      expect(canonical(got)).toEqual(canonical(expected));
    }
    const [first] = (await queryClickHouse(CLICKHOUSE_QUERIES.topFunctions(1), ch.urls[0]!)).rows;
    expect(first).toEqual([top[0]!.funcname, top[0]!.filename, top[0]!.self, top[0]!.total]);
  }, 60_000);
});

describe('failures', () => {
  it('a server killed mid-export: ERR_CLICKHOUSE_UNREACHABLE naming it; the retry completes it exactly once', async () => {
    const samples = aggregate(openProfiles(fleet), { limit: 0 }).samples;
    let killed = false;
    const err = await exportClickHouse([fleetDir], ch.urls, {
      cluster: ch.cluster,
      database: 'retry',
      batchRows: 1000,
      attempts: 2,
      onProgress: () => {
        if (!killed) void ch.kill(1);
        killed = true;
      },
    }).then(
      () => null,
      (e: ProfpackError) => e,
    );
    expect(err?.code).toBe(ErrorCode.CLICKHOUSE_UNREACHABLE);
    expect(err?.message).toContain(ch.urls[1]);
    await ch.restart(1);
    const partial = await one(ch.urls[0]!, 'SELECT count() AS n FROM profiles', 'retry');
    expect(partial['n']).toBeLessThan(fleet.length);
    await exportClickHouse([fleetDir], ch.urls, { cluster: ch.cluster, database: 'retry' });
    const sql = 'SELECT sum(value) AS v, count() AS n, (SELECT count() FROM profiles) AS p FROM samples';
    const after = await one(ch.urls[0]!, sql, 'retry');
    expect(after['v']).toBe(samples);
    expect(after['p']).toBe(fleet.length);
    expect(await one(ch.urls[0]!, sql, 'single')).toEqual(after);
  }, 60_000);

  it('a table whose column differs: ERR_CLICKHOUSE_SCHEMA naming the column', async () => {
    const url = ch.urls[0]!;
    for (const ddl of [
      'CREATE DATABASE bad',
      'CREATE TABLE bad.frames (frame_id Int64, funcname Int32) ENGINE = MergeTree ORDER BY frame_id',
    ])
      expect((await fetch(url, { method: 'POST', body: ddl })).ok).toBe(true);
    const err = await exportClickHouse(fleet, [url], { database: 'bad' }).then(
      () => null,
      (e: ProfpackError) => e,
    );
    expect(err?.code).toBe(ErrorCode.CLICKHOUSE_SCHEMA);
    expect(err?.message).toMatch(/bad\.frames column 2 is funcname Int32, not funcname Nullable\(String\)/);
  });

  it('CLI: an unreachable server is exit 2 with one coded line naming it; sql --clickhouse runs a query', () => {
    const closed = 'http://127.0.0.1:9'; // discard: nothing listens on loopback
    const run = spawnSync(process.execPath, [cli, 'export', fleet[0]!, '--to', 'clickhouse', '--url', closed], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^profpack: ERR_CLICKHOUSE_UNREACHABLE: ClickHouse at http:\/\/127\.0\.0\.1:9 /);
    const sql = spawnSync(
      process.execPath,
      [
        cli,
        'sql',
        '--json',
        '--clickhouse',
        ch.urls[0]!,
        '--database',
        'single',
        'SELECT sum(value) AS v FROM samples',
      ],
      { encoding: 'utf8' },
    );
    expect(sql.status, sql.stderr).toBe(0);
    expect(JSON.parse(sql.stdout)).toEqual([{ v: aggregate(openProfiles(fleet), { limit: 0 }).samples }]);
  });
});

describe('hostile names, labels and paths', () => {
  it('arrive intact (the client encodes every value; no statement holds data)', async () => {
    const nasty = `it's "q" \\ \\' ; DROP TABLE samples; -- \t é 𝄞 \u0001`;
    const dir = path.join(work, `hostile ${nasty.replaceAll('/', '_')}`);
    mkdirSync(dir);
    const file = path.join(dir, `p'${'"'}\\.tach`);
    const w = new ModelWriter(file, {
      sampleIntervalUs: 1000n,
      startTimeUs: 1_000_000n,
      meta: {
        sampleTypes: [{ type: `bytes ${nasty}`, unit: `u ${nasty}` }],
        defaultSampleType: 0,
        periodType: { type: 'space', unit: 'bytes' },
        period: 1,
        durationUs: 0n,
        comments: [],
      },
    });
    const frames = [
      w.internFrame({ filename: `${nasty}.py`, funcname: `f ${nasty}`, lineno: 1 }),
      w.internFrame({ filename: 'main.py', funcname: `g\n${nasty}`, lineno: 2 }),
    ];
    const set = w.internLabels([{ key: `k ${nasty}`, str: `v ${nasty}\n` }]);
    w.writeSample(1n, 0, 1_001_000, 0, Uint32Array.from(frames), [[7]], 0, set);
    w.finalize();
    await exportClickHouse([file], ch.urls, { cluster: ch.cluster, database: 'hostile' });
    const url = ch.urls[0]!;
    const q = (sql: string) => rows(url, sql, 'hostile');
    expect(await q('SELECT funcname, filename FROM frames ORDER BY lineno')).toEqual([
      { funcname: `f ${nasty}`, filename: `${nasty}.py` },
      { funcname: `g\n${nasty}`, filename: 'main.py' },
    ]);
    expect(await q('SELECT key, str FROM labels')).toEqual([{ key: `k ${nasty}`, str: `v ${nasty}\n` }]);
    expect(await q('SELECT type, unit FROM sample_types')).toEqual([{ type: `bytes ${nasty}`, unit: `u ${nasty}` }]);
    expect(
      await q(
        'SELECT path, sum(value) AS v FROM profiles GLOBAL ALL INNER JOIN samples USING (profile_id) GROUP BY path',
      ),
    ).toEqual([{ path: path.resolve(file), v: 7 }]);
  });
});
