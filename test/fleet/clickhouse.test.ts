/**
 * Export into real ClickHouse servers (Debian's clickhouse-server 18.16, two
 * of them started by test/support/clickhouse-servers.ts as a two-shard
 * cluster, one cluster for the whole file). Oracles: the vectors' samples as
 * CPython's reader lists them (expected.json), aggregate() over the files
 * (what `profpack top` prints), DuckDB over the Parquet export, and the
 * strings the test wrote.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportClickHouse, openProfiles, queryClickHouse, type ClickHouseExportResult } from '../../lib/fleet/index';
import { aggregate } from '../../lib/query/aggregate';
import { startClickHouseServers, type ClickHouseServers } from '../support/clickhouse-servers';
import { acceptedVectors, readExpected, vectorDir } from '../support/vectors';
import { scratchDir } from '../support/scratch-dir';

// @ts-expect-error: a plain ES module of the benchmarks, without types
import { generateFleet } from '../../bench/_fleet.mjs';

const work = scratchDir('profpack-clickhouse-');
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
  fleet = generateFleet(fleetDir, { files: 6, samples: 1500, hosts: 2 }) as string[];
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
