/**
 * The example queries of docs/fleet.md and the README, over the tables of
 * tables.ts. Tests check each against `aggregate()` on the same files; the
 * fleet benchmark times them.
 */
import { sqlString } from './duckdb';

/** Value (of each profile's default sample type) per interned stack: the joins below then touch stacks, not samples. */
const PER_STACK = 'SELECT stack_id, sum(value) AS n FROM samples GROUP BY stack_id';

export const EXAMPLE_QUERIES = {
  /**
   * `profpack top` across files, in each profile's default sample type: self = innermost frame, total = anywhere
   * on the stack (once per sample).
   */
  topFunctions: (limit = 10): string => `WITH per_stack AS (${PER_STACK}),
self AS (
  SELECT funcname, filename, sum(n) AS self
  FROM per_stack JOIN stacks USING (stack_id) JOIN frames USING (frame_id)
  WHERE depth = 0 GROUP BY ALL),
total AS (
  SELECT funcname, filename, sum(n) AS total
  FROM per_stack JOIN (SELECT DISTINCT stack_id, funcname, filename
                       FROM stacks JOIN frames USING (frame_id)) USING (stack_id)
  GROUP BY ALL)
SELECT funcname, filename, coalesce(self, 0) AS self, total
FROM total LEFT JOIN self USING (funcname, filename)
ORDER BY self DESC, total DESC, funcname, filename${limit > 0 ? `\nLIMIT ${limit}` : ''}`,

  /** Self samples per function in the first and the second half of the fleet's time span. */
  windowDiff: (limit = 10): string => `WITH span AS (SELECT (min(start_us) + max(end_us)) // 2 AS mid FROM profiles),
leaf AS (
  SELECT timestamp_us, funcname, value
  FROM samples JOIN stacks USING (stack_id) JOIN frames USING (frame_id)
  WHERE depth = 0)
SELECT funcname,
       coalesce(sum(value) FILTER (WHERE timestamp_us < mid), 0) AS before,
       coalesce(sum(value) FILTER (WHERE timestamp_us >= mid), 0) AS after,
       after - before AS change
FROM leaf, span
GROUP BY funcname
ORDER BY abs(change) DESC, funcname${limit > 0 ? `\nLIMIT ${limit}` : ''}`,

  /**
   * On-CPU share of each thread of each profile, per second since the profile's start (status bit 2 = ON_CPU),
   * in the default sample type (samples for Tachyon files).
   */
  threadCpu: (limit = 10): string => `SELECT host, profile_id % 100000 AS profile, thread_id,
       (timestamp_us - start_us) // 1000000 AS second,
       sum(value) AS samples,
       coalesce(sum(value) FILTER (WHERE status & 2 <> 0), 0) AS on_cpu,
       round(100 * coalesce(sum(value) FILTER (WHERE status & 2 <> 0), 0) / sum(value), 1) AS cpu_pct
FROM samples JOIN profiles USING (profile_id)
GROUP BY host, profile, thread_id, second
ORDER BY host, profile, thread_id, second${limit > 0 ? `\nLIMIT ${limit}` : ''}`,

  /** The stacks (outermost first, collapsed-stack style) that contain a function, with their samples. */
  stacksWith: (funcname: string, limit = 10): string => `WITH hit AS (
  SELECT DISTINCT stack_id FROM stacks JOIN frames USING (frame_id)
  WHERE funcname = ${sqlString(funcname)}),
counted AS (SELECT stack_id, sum(value) AS samples FROM samples JOIN hit USING (stack_id) GROUP BY stack_id),
named AS (
  SELECT stack_id, string_agg(funcname, ';' ORDER BY depth DESC) AS stack
  FROM hit JOIN stacks USING (stack_id) JOIN frames USING (frame_id)
  GROUP BY stack_id)
SELECT sum(samples) AS samples, stack
FROM counted JOIN named USING (stack_id)
GROUP BY stack
ORDER BY samples DESC, stack${limit > 0 ? `\nLIMIT ${limit}` : ''}`,

  /**
   * Live bytes per allocation site (innermost frame) every `stepSeconds`, across every host: a sampled
   * object counts at time t when it was first seen at or before t and gone after t (free_us NULL: never).
   * `bytes` is what the object stands for (scaled as pprof scales heap samples), so sums are heap bytes.
   */
  liveBytesBySite: (stepSeconds = 60, limit = 10, step = Math.round(stepSeconds * 1e6)): string => `WITH span AS (
  SELECT min(alloc_us) AS lo, greatest(max(alloc_us), max(free_us)) AS hi FROM allocations),
grid AS (SELECT unnest(generate_series(lo, hi + ${step}, ${step})) AS t FROM span),
site AS (SELECT stack_id, funcname, filename FROM stacks JOIN frames USING (frame_id) WHERE depth = 0)
SELECT t AS time_us, funcname, filename, count(DISTINCT host) AS hosts, round(sum(bytes)) AS live_bytes
FROM allocations JOIN profiles USING (profile_id) JOIN site USING (stack_id)
  JOIN grid ON alloc_us <= t AND coalesce(free_us, 9223372036854775807) > t
GROUP BY ALL
ORDER BY time_us, live_bytes DESC, funcname, filename${limit > 0 ? `\nLIMIT ${limit}` : ''}`,
};

/** A string as a ClickHouse literal (backslash escapes, as ClickHouse's own quoting). */
export function clickhouseString(value: string): string {
  return `'${value.replace(/[\\']/g, (c) => `\\${c}`).replaceAll('\0', '\\0')}'`;
}

/** Stack and frame fields by stack: the frames table shipped once to every shard (GLOBAL) on a cluster. */
const STACK_FRAMES = (columns: string, where: string) =>
  `SELECT ${columns} FROM stacks GLOBAL ALL INNER JOIN frames USING (frame_id)${where === '' ? '' : ` WHERE ${where}`}`;

const limitClause = (limit: number) => (limit > 0 ? `\nLIMIT ${limit}` : '');

/**
 * The example queries in ClickHouse's dialect (18.16 and later: one JOIN per SELECT, joins to a Distributed
 * table GLOBAL), the same answers as EXAMPLE_QUERIES (tests compare them on a cluster and on DuckDB over the
 * Parquet export).
 */
export const CLICKHOUSE_QUERIES = {
  topFunctions: (limit = 10): string => `SELECT funcname, filename, ifNull(s, 0) AS self, total
FROM (
  SELECT funcname, filename, sum(n) AS total
  FROM (${STACK_FRAMES('DISTINCT stack_id, funcname, filename', '')})
  ALL INNER JOIN (${PER_STACK}) USING (stack_id)
  GROUP BY funcname, filename)
ALL LEFT JOIN (
  SELECT funcname, filename, sum(n) AS s
  FROM (${STACK_FRAMES('stack_id, funcname, filename', 'depth = 0')})
  ALL INNER JOIN (${PER_STACK}) USING (stack_id)
  GROUP BY funcname, filename) USING (funcname, filename)
ORDER BY self DESC, total DESC, funcname, filename${limitClause(limit)}`,

  windowDiff: (limit = 10): string => `SELECT funcname, sum(b) AS before, sum(a) AS after, after - before AS change
FROM (
  WITH (SELECT intDiv(min(start_us) + max(end_us), 2) FROM profiles) AS mid
  SELECT stack_id, sumIf(value, timestamp_us < mid) AS b, sumIf(value, timestamp_us >= mid) AS a
  FROM samples GROUP BY stack_id)
ALL INNER JOIN (${STACK_FRAMES('stack_id, funcname', 'depth = 0')}) USING (stack_id)
GROUP BY funcname
ORDER BY abs(change) DESC, funcname${limitClause(limit)}`,

  threadCpu: (limit = 10): string => `SELECT host, profile_id % 100000 AS profile, thread_id,
       intDiv(timestamp_us - start_us, 1000000) AS second,
       sum(value) AS samples,
       sumIf(value, bitAnd(status, 2) != 0) AS on_cpu,
       round(100 * on_cpu / samples, 1) AS cpu_pct
FROM samples GLOBAL ALL INNER JOIN (SELECT profile_id, host, start_us FROM profiles) USING (profile_id)
GROUP BY host, profile, thread_id, second
ORDER BY host, profile, thread_id, second${limitClause(limit)}`,

  stacksWith: (funcname: string, limit = 10): string => {
    const hit = `stack_id GLOBAL IN (${STACK_FRAMES('stack_id', `funcname = ${clickhouseString(funcname)}`)})`;
    return `SELECT sum(samples) AS samples, stack
FROM (
  SELECT stack_id, sum(value) AS samples FROM samples WHERE ${hit} GROUP BY stack_id)
ALL INNER JOIN (
  SELECT stack_id,
    arrayStringConcat(arrayMap(x -> x.2, arraySort(x -> -x.1, groupArray((depth, ifNull(funcname, ''))))), ';') AS stack
  FROM (${STACK_FRAMES('stack_id, depth, funcname', hit)})
  GROUP BY stack_id) USING (stack_id)
GROUP BY stack
ORDER BY samples DESC, stack${limitClause(limit)}`;
  },

  liveBytesBySite: (
    stepSeconds = 60,
    limit = 10,
    step = Math.round(stepSeconds * 1e6),
  ): string => `SELECT time_us, funcname, filename, uniqExact(host) AS hosts, round(sum(bytes)) AS live_bytes
FROM (
  WITH
    (SELECT assumeNotNull(min(alloc_us)) FROM allocations) AS lo,
    (SELECT assumeNotNull(greatest(max(alloc_us), ifNull(max(free_us), max(alloc_us)))) FROM allocations) AS hi
  SELECT profile_id, stack_id, bytes, host,
    intDiv(assumeNotNull(alloc_us) - lo + ${step - 1}, ${step}) AS k0,
    least(intDiv(hi + ${step} - lo, ${step}) + 1,
          if(isNull(free_us), intDiv(hi + ${step} - lo, ${step}) + 1,
             intDiv(assumeNotNull(free_us) - lo + ${step - 1}, ${step}))) AS k1,
    arrayJoin(arrayMap(i -> lo + (k0 + i) * ${step}, range(toUInt64(greatest(k1 - k0, 0))))) AS time_us
  FROM allocations
  GLOBAL ALL INNER JOIN (SELECT profile_id, host FROM profiles) USING (profile_id))
ALL INNER JOIN (${STACK_FRAMES('stack_id, funcname, filename', 'depth = 0')}) USING (stack_id)
GROUP BY time_us, funcname, filename
ORDER BY time_us, live_bytes DESC, funcname, filename${limitClause(limit)}`,
} satisfies Record<keyof typeof EXAMPLE_QUERIES, (...args: never[]) => string>;
