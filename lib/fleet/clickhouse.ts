/**
 * `exportClickHouse()`: the seven tables of tables.ts in ClickHouse, over its
 * HTTP interface with ClickHouse's own client (@clickhouse/client). Rows are
 * sent as JSONEachRow, encoded by the client: no statement is built from the
 * data (ids in existence checks are integers profpack computed).
 *
 * One server: a MergeTree table per table. A cluster (each URL one shard, in
 * the order of the servers' `remote_servers`): on every shard NAME_local
 * (MergeTree) and NAME, a Distributed table over the NAME_local of every
 * shard. profpack routes the rows itself, by the Distributed table's sharding
 * key: a profile's rows to shard profile_id % shards, a frame's to
 * frame_id % shards, a stack's rows to stack_id % shards.
 *
 * Exactly once: a profile's `profiles` row is inserted after all its other
 * rows. Before a file's rows, its shard is asked for its profile_id: present,
 * its rows are dropped (a second export adds nothing); absent but with rows
 * in other tables (an export that died), those rows are deleted first.
 * Frames and stacks (content-addressed) are inserted only when their id is
 * absent. Tested on Debian's ClickHouse 18.16.
 */
import type * as ClickHouse from '@clickhouse/client';
import { ErrorCode, ProfpackError } from '../errors';
import { listProfileFiles } from './source';
import { SCHEMA, TABLE_NAMES, buildRows, type LoadOptions, type LoadResult, type TableName } from './tables';

export interface ClickHouseExportOptions extends LoadOptions {
  /** Database (default `profpack`), created when missing. */
  database?: string;
  /** A cluster of the servers' `remote_servers`, with one shard per URL: the tables become Distributed. */
  cluster?: string;
  /** Rows gathered (all tables) before they are sent; default 50,000. */
  batchRows?: number;
  /** Attempts of a request that could not connect, with backoff (100 ms doubling); default 5. */
  attempts?: number;
  /** After each batch is sent. */
  onProgress?: (progress: { files: number; rows: number }) => void;
}

export interface ClickHouseExportResult extends LoadResult {
  /** Rows inserted per table (0 everywhere for a second export of the same files). */
  inserted: Record<TableName, number>;
  /** Profiles that were there already. */
  present: number;
}

let loaded: typeof ClickHouse | undefined;
function loadClient(): typeof ClickHouse {
  // Loaded on first use: the CLI's other commands never pay for it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loaded ??= require('@clickhouse/client') as typeof ClickHouse);
}

/** ClickHouse's type of each DuckDB type of SCHEMA. */
const TYPES: Record<string, string> = {
  BIGINT: 'Int64',
  UBIGINT: 'UInt64',
  INTEGER: 'Int32',
  SMALLINT: 'Int16',
  UTINYINT: 'UInt8',
  DOUBLE: 'Float64',
  BOOLEAN: 'UInt8',
  VARCHAR: 'String',
  'DOUBLE[]': 'Array(Float64)',
};

/** Each table's sorting key (never NULL) and the column its rows are sharded by. */
const KEYS: Record<TableName, { order: string[]; shard: string }> = {
  profiles: { order: ['profile_id'], shard: 'profile_id' },
  sample_types: { order: ['profile_id', 'type_index'], shard: 'profile_id' },
  frames: { order: ['frame_id'], shard: 'frame_id' },
  stacks: { order: ['stack_id', 'depth'], shard: 'stack_id' },
  samples: { order: ['profile_id', 'stack_id', 'thread_id'], shard: 'profile_id' },
  labels: { order: ['profile_id', 'label_set_id'], shard: 'profile_id' },
  allocations: { order: ['profile_id', 'thread_id'], shard: 'profile_id' },
};

/** The tables whose rows belong to one profile. */
const PER_PROFILE: readonly TableName[] = ['sample_types', 'labels', 'samples', 'allocations'];

/** The ClickHouse columns of a table: [name, type], in SCHEMA's order. */
export function clickhouseColumns(name: TableName): [string, string][] {
  return SCHEMA[name].map(([c, t]) => {
    const type = TYPES[t]!;
    return [c, KEYS[name].order.includes(c) || type.startsWith('Array') ? type : `Nullable(${type})`];
  });
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
function identifier(value: string, what: string): string {
  if (!IDENTIFIER.test(value))
    throw new ProfpackError(`${what} "${value}" is not a plain identifier`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'letters, digits and _ (not starting with a digit)',
    });
  return value;
}

/** Errors that mean the request never reached the server: safe to send again. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ETIMEDOUT']);
/** The connection broke: a read may be sent again; an insert may have landed (the next export resolves it). */
const BROKEN_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

function errnoOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.code === 'string' && /^E[A-Z]+$|^UND_/.test(e.code)) return e.code;
  }
  return /socket hang up/.test(String((err as Error)?.message)) ? 'ECONNRESET' : undefined;
}

/** A statement as errors name it: its start. */
function brief(query: string): string {
  return query.length <= 60 ? query : `${query.slice(0, 57)}...`;
}

/** One server: its client, its name in errors (the URL without credentials). */
export class ClickHouseServer {
  readonly name: string;
  readonly client: ClickHouse.ClickHouseClient;
  constructor(
    url: string,
    private readonly attempts = 5,
    /** The database unqualified names are in (the export qualifies its own). */
    database?: string,
  ) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ProfpackError(`--url "${url}" is not a URL`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'http://HOST:PORT (ClickHouse HTTP interface)',
      });
    }
    this.name = `${parsed.protocol}//${parsed.host}`;
    const { createClient, ClickHouseLogLevel } = loadClient();
    this.client = createClient({
      url,
      database,
      // Loopback and LAN: compressing costs more CPU than it saves (18.16 accepts gzip both ways).
      compression: { request: false, response: false },
      request_timeout: 300_000,
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  /** `fn` with retries (backoff) while the server cannot be reached; anything else a coded error naming it. */
  async call<T>(what: string, fn: () => Promise<T>, idempotent = true): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const errno = errnoOf(err);
        const retry = errno !== undefined && (CONNECT_ERRORS.has(errno) || (idempotent && BROKEN_ERRORS.has(errno)));
        if (retry && attempt < this.attempts) {
          await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1)));
          continue;
        }
        throw this.error(what, err, errno);
      }
    }
  }

  private error(what: string, err: unknown, errno: string | undefined): ProfpackError {
    const message = String((err as Error)?.message ?? err).split('\n', 1)[0]!;
    if (errno !== undefined)
      return new ProfpackError(`ClickHouse at ${this.name} unreachable (${what}): ${message}`, {
        code: ErrorCode.CLICKHOUSE_UNREACHABLE,
        cause: err,
        details: { server: this.name },
      });
    return new ProfpackError(`ClickHouse at ${this.name} (${what}): ${message}`, {
      code: ErrorCode.CLICKHOUSE_SERVER,
      cause: err,
      details: { server: this.name },
    });
  }

  async command(query: string): Promise<void> {
    await this.call(brief(query), () => this.client.command({ query }));
  }

  async rows<T>(query: string): Promise<T[]> {
    return this.call(brief(query), async () => {
      const r = await this.client.query({
        query,
        format: 'JSONEachRow',
        // Long IN lists of ids; 64-bit integers as JSON numbers would lose digits: strings.
        clickhouse_settings: { max_query_size: '16777216' },
      });
      return r.json<T>();
    });
  }

  async insert(table: string, values: Record<string, unknown>[]): Promise<void> {
    await this.call(
      `INSERT INTO ${table}`,
      () =>
        this.client.insert({
          table,
          values,
          format: 'JSONEachRow',
          // One block per request however large, so a table's rows of a batch land all or none.
          clickhouse_settings: { max_insert_block_size: String(Math.max(values.length, 1048576)) },
        }),
      false,
    );
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** A value as JSONEachRow carries it: 64-bit integers as strings (JSON numbers lose digits past 2^53). */
function json(value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Where profpack's tables are: `local` names the MergeTree tables rows are inserted into. */
export interface ClickHouseLayout {
  database: string;
  cluster: string | undefined;
  local(name: TableName): string;
}

function layoutOf(database: string, cluster: string | undefined): ClickHouseLayout {
  return {
    database,
    cluster,
    local: (name) => `${database}.${cluster === undefined ? name : `${name}_local`}`,
  };
}

/** Creates the database and tables on each server when missing, checks them when present. */
async function ensureSchema(servers: ClickHouseServer[], layout: ClickHouseLayout): Promise<void> {
  const { database, cluster } = layout;
  for (const [shard, server] of servers.entries()) {
    if (cluster !== undefined) {
      const shards = await server.rows<{ shard_num: number; is_local: number }>(
        `SELECT shard_num, is_local FROM system.clusters WHERE cluster = '${cluster}' ORDER BY shard_num`,
      );
      const local = shards.filter((s) => Number(s.is_local) === 1).map((s) => Number(s.shard_num));
      if (shards.length !== servers.length || (local.length > 0 && !local.includes(shard + 1)))
        throw new ProfpackError(
          `ClickHouse at ${server.name}: cluster ${cluster} has ${new Set(shards.map((s) => s.shard_num)).size} ` +
            `shards${local.length > 0 ? ` and this server is shard ${local.join(', ')}` : ''}; ` +
            `--url ${shard + 1} of ${servers.length} must be its shard ${shard + 1}`,
          {
            code: ErrorCode.CLICKHOUSE_SCHEMA,
            expected: `one --url per shard of ${cluster}, in its shard order`,
            details: { server: server.name },
          },
        );
    }
    await server.command(`CREATE DATABASE IF NOT EXISTS ${database}`);
    const existing = await server.rows<{ table: string; name: string; type: string }>(
      `SELECT table, name, type FROM system.columns WHERE database = '${database}'`,
    );
    for (const name of TABLE_NAMES) {
      const columns = clickhouseColumns(name);
      const wanted = [layout.local(name).split('.')[1]!];
      if (cluster !== undefined) wanted.push(name);
      for (const table of wanted) {
        const have = existing.filter((c) => c.table === table);
        if (have.length === 0) {
          const distributed = table === name && cluster !== undefined;
          await server.command(
            distributed
              ? `CREATE TABLE IF NOT EXISTS ${database}.${name} AS ${layout.local(name)} ` +
                  `ENGINE = Distributed(${cluster}, ${database}, ${name}_local, ${KEYS[name].shard})`
              : `CREATE TABLE IF NOT EXISTS ${database}.${table} ` +
                  `(${columns.map(([c, t]) => `${c} ${t}`).join(', ')}) ` +
                  `ENGINE = MergeTree ORDER BY (${KEYS[name].order.join(', ')})`,
          );
          continue;
        }
        for (const [i, [c, t]] of columns.entries()) {
          const got = have[i];
          if (got?.name !== c || got.type !== t)
            throw new ProfpackError(
              `ClickHouse at ${server.name}: ${database}.${table} column ${i + 1} is ` +
                `${got === undefined ? 'missing' : `${got.name} ${got.type}`}, not ${c} ${t}`,
              {
                code: ErrorCode.CLICKHOUSE_SCHEMA,
                expected: `${c} ${t}`,
                details: { server: server.name, table, column: c },
              },
            );
        }
      }
    }
  }
}

/** The ids among `ids` that `table` holds already in `column`. */
async function presentIds(
  server: ClickHouseServer,
  table: string,
  column: string,
  ids: readonly bigint[],
): Promise<Set<string>> {
  const present = new Set<string>();
  for (let i = 0; i < ids.length; i += 20_000) {
    const list = ids.slice(i, i + 20_000).join(',');
    const rows = await server.rows<Record<string, string>>(
      `SELECT DISTINCT ${column} AS id FROM ${table} WHERE ${column} IN (${list})`,
    );
    for (const r of rows) present.add(String(r['id']));
  }
  return present;
}

/** Rows of one table waiting to be sent, per shard. */
class Batches {
  readonly rows: Record<string, unknown>[][];
  constructor(
    readonly name: TableName,
    shards: number,
  ) {
    this.rows = Array.from({ length: shards }, () => []);
  }
}

/**
 * Exports `inputs` (profile files and directories) into ClickHouse at `urls`. Memory: a batch of rows
 * (`batchRows`), the ids of the frames and stacks written, and a profiles row per file with live heap objects.
 */
export async function exportClickHouse(
  inputs: readonly string[],
  urls: readonly string[],
  options: ClickHouseExportOptions = {},
): Promise<ClickHouseExportResult> {
  if (urls.length === 0)
    throw new ProfpackError('no ClickHouse --url', { code: ErrorCode.INVALID_ARGUMENT, expected: '--url URL' });
  if (urls.length > 1 && options.cluster === undefined)
    throw new ProfpackError(`${urls.length} URLs need --cluster NAME (the cluster whose shards they are)`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: '--cluster NAME',
    });
  const database = identifier(options.database ?? 'profpack', 'database');
  const cluster = options.cluster === undefined ? undefined : identifier(options.cluster, 'cluster');
  const files = listProfileFiles(inputs);
  const servers = urls.map((u) => new ClickHouseServer(u, options.attempts));
  const layout = layoutOf(database, cluster);
  const shards = servers.length;
  const batchRows = options.batchRows ?? 50_000;
  try {
    await ensureSchema(servers, layout);
    const shardOf = (id: bigint) => Number(id % BigInt(shards));
    const batches = Object.fromEntries(TABLE_NAMES.map((n) => [n, new Batches(n, shards)])) as Record<
      TableName,
      Batches
    >;
    const inserted = Object.fromEntries(TABLE_NAMES.map((n) => [n, 0])) as Record<TableName, number>;
    /** Each profile_id seen, once its shard was asked: true = there already (its rows are not sent again). */
    const decided = new Map<bigint, boolean>();
    /** profiles rows of finished files, sent after the batch that holds their other rows. */
    let finished: Record<string, unknown>[] = [];
    /** profiles rows whose process may still add heap objects: sent at the end. */
    const deferred: Record<string, unknown>[] = [];
    const pendingProfiles = new Map<bigint, Record<string, unknown>>();
    let gathered = 0;
    let filesDone = 0;
    const idOf = (row: Record<string, unknown>, column: string) => BigInt(row[column] as string);

    const sink = (name: TableName) => {
      const columns = SCHEMA[name].map(([c]) => c);
      const key = columns.indexOf(KEYS[name].shard);
      return {
        appendRow(values: readonly unknown[]) {
          const row: Record<string, unknown> = {};
          for (let c = 0; c < columns.length; c++) row[columns[c]!] = json(values[c]);
          if (name === 'profiles') pendingProfiles.set(values[0] as bigint, row);
          else {
            batches[name].rows[shardOf(values[key] as bigint)]!.push(row);
            gathered++;
          }
        },
      };
    };

    /**
     * Asks each shard, in one query, about the profiles of `rows` not asked about yet: present ones are
     * remembered (their rows dropped); absent ones with rows in other tables (an export that died) lose them.
     */
    const decide = async (shard: number, rows: Record<string, unknown>[]) => {
      const ids = [...new Set(rows.map((r) => idOf(r, 'profile_id')))].filter((id) => !decided.has(id));
      if (ids.length === 0) return;
      const server = servers[shard]!;
      const counts = await server.rows<{ t: string; id: string }>(
        ['profiles', ...PER_PROFILE]
          .map(
            (n) =>
              `SELECT DISTINCT '${n}' AS t, profile_id AS id FROM ${layout.local(n as TableName)} ` +
              `WHERE profile_id IN (${ids.join(',')})`,
          )
          .join(' UNION ALL '),
      );
      const there = (t: string) => new Set(counts.filter((c) => c.t === t).map((c) => BigInt(c.id)));
      const profiles = there('profiles');
      for (const id of ids) decided.set(id, profiles.has(id));
      for (const n of PER_PROFILE) {
        const partial = [...there(n)].filter((id) => !profiles.has(id));
        if (partial.length === 0) continue;
        const where = `profile_id IN (${partial.join(',')})`;
        await server.command(`ALTER TABLE ${layout.local(n)} DELETE WHERE ${where}`);
        // 18.16 has no synchronous mutations: wait until the rows are gone.
        while (
          Number(
            (await server.rows<{ n: string }>(`SELECT count() AS n FROM ${layout.local(n)} WHERE ${where}`))[0]?.n,
          ) > 0
        )
          await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    /** Sends every gathered row: frames and stacks first (absent ids only), then the profiles of finished files. */
    const flush = async (alsoDeferred: boolean) => {
      const profiles = alsoDeferred ? [...finished, ...deferred] : finished;
      finished = [];
      const profilesOf = Array.from({ length: shards }, (_, shard) =>
        profiles.filter((r) => shardOf(idOf(r, 'profile_id')) === shard),
      );
      for (let shard = 0; shard < shards; shard++)
        await decide(shard, [...profilesOf[shard]!, ...PER_PROFILE.flatMap((n) => batches[n].rows[shard]!)]);
      for (const name of TABLE_NAMES) {
        if (name === 'profiles') continue;
        for (const [shard, rows] of batches[name].rows.entries()) {
          if (rows.length === 0) continue;
          let send = rows;
          if (name === 'frames' || name === 'stacks') {
            const column = KEYS[name].shard;
            const ids = [...new Set(rows.map((r) => idOf(r, column)))];
            const there = await presentIds(servers[shard]!, layout.local(name), column, ids);
            if (there.size > 0) send = rows.filter((r) => !there.has(r[column] as string));
          } else send = rows.filter((r) => decided.get(idOf(r, 'profile_id')) !== true);
          if (send.length > 0) await servers[shard]!.insert(layout.local(name), send);
          inserted[name] += send.length;
          batches[name].rows[shard] = [];
        }
      }
      for (let shard = 0; shard < shards; shard++) {
        const rows = profilesOf[shard]!.filter((r) => decided.get(idOf(r, 'profile_id')) !== true);
        if (rows.length > 0) await servers[shard]!.insert(layout.local('profiles'), rows);
        inserted.profiles += rows.length;
      }
      gathered = 0;
      options.onProgress?.({ files: filesDone, rows: Object.values(inserted).reduce((a, b) => a + b, 0) });
    };

    const loaded = await buildRows(
      {
        tables: Object.fromEntries(TABLE_NAMES.map((n) => [n, sink(n)])) as Record<TableName, ReturnType<typeof sink>>,
        list: (values) => values as never,
        afterBatch: async () => {
          if (gathered >= batchRows) await flush(false);
        },
        endFile: async (id, moreRows) => {
          filesDone++;
          const row = pendingProfiles.get(id);
          pendingProfiles.delete(id);
          if (row !== undefined) (moreRows ? deferred : finished).push(row);
          if (gathered >= batchRows) await flush(false);
        },
      },
      files,
      options,
    );
    await flush(true);
    return { ...loaded, inserted, present: [...decided.values()].filter(Boolean).length };
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

/** A query's rows from ClickHouse at `url`, as querySql() gives them (64-bit integers past 2^53 as strings). */
export async function queryClickHouse(
  sql: string,
  url: string,
  options: { database?: string } = {},
): Promise<{ columns: string[]; rows: unknown[][] }> {
  const server = new ClickHouseServer(url, 5, identifier(options.database ?? 'profpack', 'database'));
  try {
    const result = await server.call(brief(sql), async () => {
      const r = await server.client.query({ query: sql, format: 'JSONCompact' });
      return r.json<unknown[]>();
    });
    const meta = result.meta ?? [];
    const integer = meta.map((m) => /^(Nullable\()?U?Int64/.test(m.type));
    const plain = (v: unknown, i: number) =>
      integer[i] && typeof v === 'string' && Number.isSafeInteger(Number(v)) ? Number(v) : v;
    return { columns: meta.map((m) => m.name), rows: result.data.map((r) => r.map(plain)) };
  } finally {
    await server.close();
  }
}
