// `npm run bench -- fleet [FILES] [SAMPLES] [ROUNDS] [COPIES]`: a generated fleet
// (bench/_fleet.mjs: FILES Tachyon files × SAMPLES samples cut from the real
// node_tsc stream, 10 hosts, default 1,000 × 10,000 = 10 M samples), exported
// to Parquet through DuckDB, then the example queries over the Parquet,
// interleaved with the same aggregation done in JS by looping ProfileReader
// over the files (aggregate() over openProfiles(), what `profpack top DIR` does).
// COPIES > 1 (default 10) also times the top-functions query over the samples
// replicated COPIES times as other profiles (DuckDB copies the exported
// Parquet, each copy with new profile ids), for a sample count the machine
// could not export from Tachyon within a session.
// Then (unless PROFPACK_BENCH_CLICKHOUSE=0) the same fleet into a two-shard
// cluster of Debian's clickhouse-server on loopback (started as the tests start
// it): rows/s of `export --to clickhouse`, and the example queries on the
// cluster against DuckDB over the Parquet, interleaved in the same run.
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, median, table } from './_harness.mjs';
import { generateFleet } from './_fleet.mjs';
import {
  aggregate,
  openProfiles,
  exportParquet,
  exportClickHouse,
  queryClickHouse,
  querySql,
  EXAMPLE_QUERIES,
  CLICKHOUSE_QUERIES,
  backend,
} from '../dist/index.js';
import { connectDuckDB, runSql, sqlString } from '../dist/fleet/duckdb.js';

const [files = 1000, samples = 10_000, rounds = 2, copies = 10] = process.argv.slice(2).map(Number);
const root = path.join(os.tmpdir(), `profpack-bench-fleet-${files}x${samples}`);
const fleet = path.join(root, 'tach');
const parquet = path.join(root, 'parquet');
const done = path.join(root, 'generated');
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const seconds = async (fn) => {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  return { s: Number(process.hrtime.bigint() - t0) / 1e9, result };
};
const du = (dir) =>
  readdirSync(dir, { recursive: true }).reduce(
    (a, f) => a + (statSync(path.join(dir, f)).isFile() ? statSync(path.join(dir, f)).size : 0),
    0,
  );

console.log(`# fleet: ${files} files × ${samples} samples (${machine()}, backend ${backend.name})`);
console.log(`load average at start: ${load()}`);
if (!existsSync(done)) {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const g = await seconds(() => generateFleet(fleet, { files, samples, hosts: 10 }));
  writeFileSync(done, '');
  console.log(`generated in ${g.s.toFixed(1)} s`);
}
const tachBytes = du(fleet);
rmSync(parquet, { recursive: true, force: true });
const exp = await seconds(() => exportParquet([fleet], parquet, { hostOf: (f) => path.basename(path.dirname(f)) }));
const pq = exp.result.outputs;
const pqBytes = Object.values(pq).reduce((a, o) => a + o.bytes, 0);
console.log(
  `\nexport: ${exp.s.toFixed(1)} s for ${exp.result.samples.toLocaleString('en')} samples, ${exp.result.stacks.toLocaleString('en')} distinct stacks, ${exp.result.frames.toLocaleString('en')} distinct frames (load ${load()})`,
);
console.log(
  table(
    ['', 'bytes', 'bytes/sample'],
    [
      ['Tachyon files (zstd)', tachBytes.toLocaleString('en'), (tachBytes / exp.result.samples).toFixed(2)],
      ...Object.entries(pq).map(([name, o]) => [
        `Parquet ${name}`,
        o.bytes.toLocaleString('en'),
        (o.bytes / exp.result.samples).toFixed(3),
      ]),
      ['Parquet total', pqBytes.toLocaleString('en'), (pqBytes / exp.result.samples).toFixed(2)],
    ],
  ),
);

// The same answers both ways: SQL over the Parquet vs aggregate() looping ProfileReader over the files.
const span = (
  await querySql('SELECT min(start_us) AS t0, (min(start_us) + max(end_us)) // 2 AS mid FROM profiles', [parquet])
).rows[0];
const midMs = (Number(span[1]) - Number(span[0])) / 1000;
const cases = {
  'top functions': {
    sql: () => querySql(EXAMPLE_QUERIES.topFunctions(20), [parquet]),
    js: () => aggregate(openProfiles([fleet]), { limit: 20 }),
  },
  'window diff': {
    sql: () => querySql(EXAMPLE_QUERIES.windowDiff(20), [parquet]),
    js: () => [
      aggregate(openProfiles([fleet]), { limit: 0, toMs: midMs }),
      aggregate(openProfiles([fleet]), { limit: 0, fromMs: midMs }),
    ],
  },
  'per-thread CPU': { sql: () => querySql(EXAMPLE_QUERIES.threadCpu(0), [parquet]) },
  'stacks with a function': { sql: () => querySql(EXAMPLE_QUERIES.stacksWith('checkSourceFile', 20), [parquet]) },
};
const times = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, c] of Object.entries(cases)) {
    for (const kind of r % 2 === 0 ? ['sql', 'js'] : ['js', 'sql']) {
      if (!c[kind]) continue;
      const { s } = await seconds(c[kind]);
      (times[`${name} ${kind}`] ??= []).push(s);
      console.log(`round ${r + 1}: ${name} (${kind}) ${s.toFixed(2)} s, load ${load()}`);
    }
  }
}
console.log(
  `\nmedian of ${rounds} rounds (each: a fresh DuckDB reading the Parquet / a fresh pass over every file), load average at end: ${load()}`,
);
console.log(
  table(
    ['query', 'DuckDB over Parquet (s)', 'JS over the Tachyon files (s)', 'JS / DuckDB'],
    Object.entries(cases).map(([name, c]) => {
      const sql = median(times[`${name} sql`]);
      const js = c.js ? median(times[`${name} js`]) : undefined;
      return [
        name,
        sql.toFixed(2),
        js === undefined ? '—' : js.toFixed(1),
        js === undefined ? '—' : `${(js / sql).toFixed(0)}×`,
      ];
    }),
  ),
);

if (process.env.PROFPACK_BENCH_CLICKHOUSE !== '0') {
  const { startClickHouseServers } = await import('../test/support/clickhouse-servers.mjs');
  const ch = await startClickHouseServers(2);
  try {
    const hostOf = (f) => path.basename(path.dirname(f));
    const e = await seconds(() => exportClickHouse([fleet], ch.urls, { cluster: ch.cluster, hostOf }));
    const rows = Object.values(e.result.inserted).reduce((a, b) => a + b, 0);
    console.log(
      `\nClickHouse export (2 shards, loopback): ${e.s.toFixed(1)} s for ${rows.toLocaleString('en')} rows ` +
        `(${e.result.inserted.samples.toLocaleString('en')} samples rows): ${Math.round(rows / e.s).toLocaleString('en')} rows/s, load ${load()}`,
    );
    const chCases = {
      'top functions': ['topFunctions', 20],
      'window diff': ['windowDiff', 20],
      'per-thread CPU': ['threadCpu', 0],
      'stacks with a function': ['stacksWith', 'checkSourceFile', 20],
    };
    const chTimes = {};
    for (let r = 0; r < rounds; r++) {
      for (const [name, [q, ...args]] of Object.entries(chCases)) {
        for (const kind of r % 2 === 0 ? ['duckdb', 'clickhouse'] : ['clickhouse', 'duckdb']) {
          const run =
            kind === 'duckdb'
              ? () => querySql(EXAMPLE_QUERIES[q](...args), [parquet])
              : () => queryClickHouse(CLICKHOUSE_QUERIES[q](...args), ch.urls[0]);
          const { s } = await seconds(run);
          (chTimes[`${name} ${kind}`] ??= []).push(s);
          console.log(`round ${r + 1}: ${name} (${kind}) ${s.toFixed(2)} s, load ${load()}`);
        }
      }
    }
    console.log(`\nmedian of ${rounds} rounds, load average at end: ${load()}`);
    console.log(
      table(
        ['query', 'DuckDB over Parquet (s)', 'ClickHouse, 2 shards (s)'],
        Object.keys(chCases).map((name) => [
          name,
          median(chTimes[`${name} duckdb`]).toFixed(2),
          median(chTimes[`${name} clickhouse`]).toFixed(2),
        ]),
      ),
    );
  } finally {
    await ch.stop();
  }
}

if (copies > 1) {
  // The exported samples COPIES times over, as other profiles (profile_id shifted), with the same frames and stacks.
  const big = path.join(root, `parquet-x${copies}`);
  rmSync(big, { recursive: true, force: true });
  mkdirSync(big, { recursive: true });
  const db = await connectDuckDB();
  const src = (name) => sqlString(path.join(parquet, `${name}.parquet`));
  const dst = (name) => sqlString(path.join(big, `${name}.parquet`));
  await runSql(
    db.connection,
    `COPY (SELECT s.* REPLACE ((s.profile_id + c.range * 1000003) % 9223372036854775807 AS profile_id) FROM range(${copies}) c, read_parquet(${src('samples')}) s) TO ${dst('samples')} (FORMAT parquet, COMPRESSION zstd)`,
  );
  await runSql(
    db.connection,
    `COPY (SELECT p.* REPLACE ((p.profile_id + c.range * 1000003) % 9223372036854775807 AS profile_id) FROM range(${copies}) c, read_parquet(${src('profiles')}) p) TO ${dst('profiles')} (FORMAT parquet, COMPRESSION zstd)`,
  );
  for (const name of ['frames', 'stacks'])
    await runSql(
      db.connection,
      `COPY (SELECT * FROM read_parquet(${src(name)})) TO ${dst(name)} (FORMAT parquet, COMPRESSION zstd)`,
    );
  db.close();
  const n = (await querySql('SELECT count(*) AS n, count(DISTINCT profile_id) AS p FROM samples', [big])).rows[0];
  const t = [];
  for (let r = 0; r < rounds; r++) {
    const { s } = await seconds(() => querySql(EXAMPLE_QUERIES.topFunctions(20), [big]));
    t.push(s);
    console.log(`x${copies} round ${r + 1}: top functions (sql) ${s.toFixed(2)} s, load ${load()}`);
  }
  console.log(
    `\ntop functions over ${Number(n[0]).toLocaleString('en')} samples in ${n[1]} profiles (the export × ${copies}, ${du(big).toLocaleString('en')} Parquet bytes): median ${median(t).toFixed(2)} s, load ${load()}`,
  );
}
