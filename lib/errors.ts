/**
 * The one error class of profpack. Both backends throw it with the same codes:
 * the native addon receives this constructor at load time (see backend.ts).
 */

/** Stable error codes. Each concern adds its own here, in one place. */
export const ErrorCode = {
  // backend
  NATIVE_UNAVAILABLE: 'ERR_NATIVE_UNAVAILABLE',
  INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT',
  // varint
  VARINT_TRUNCATED: 'ERR_VARINT_TRUNCATED',
  VARINT_OVERFLOW: 'ERR_VARINT_OVERFLOW',
  SLOT_OVERFLOW: 'ERR_SLOT_OVERFLOW',
  SLOT_OUT_OF_RANGE: 'ERR_SLOT_OUT_OF_RANGE',
  // tachyon writer
  TACHYON_WRITE_IO: 'ERR_TACHYON_WRITE_IO',
  TACHYON_WRITE_BROKEN: 'ERR_TACHYON_WRITE_BROKEN',
  TACHYON_WRITE_CLOSED: 'ERR_TACHYON_WRITE_CLOSED',
  TACHYON_WRITE_LIMIT: 'ERR_TACHYON_WRITE_LIMIT',
  TACHYON_WRITE_UNKNOWN_ID: 'ERR_TACHYON_WRITE_UNKNOWN_ID',
  // convert
  CONVERT_BAD_INPUT: 'ERR_CONVERT_BAD_INPUT',
  CONVERT_UNKNOWN_FORMAT: 'ERR_CONVERT_UNKNOWN_FORMAT',
  CONVERT_SAMPLE_TYPE: 'ERR_CONVERT_SAMPLE_TYPE',
  /** A gzip that inflates past its bound (pprof maxInflatedBytes). */
  CONVERT_INPUT_TOO_LARGE: 'ERR_CONVERT_INPUT_TOO_LARGE',
  RECORD_FAILED: 'ERR_RECORD_FAILED',
  RECORD_NOT_STARTED: 'ERR_RECORD_NOT_STARTED', // the recorded command never ran the recording preload
  // view (flame, diff)
  VIEW_ASSET_MISSING: 'ERR_VIEW_ASSET_MISSING',
  // svb
  SVB_TRUNCATED: 'ERR_SVB_TRUNCATED',
  // pctable
  PCTABLE_TRUNCATED: 'ERR_PCTABLE_TRUNCATED',
  PCTABLE_VARINT_OVERFLOW: 'ERR_PCTABLE_VARINT_OVERFLOW',
  PCTABLE_EMPTY_RUN: 'ERR_PCTABLE_EMPTY_RUN',
  PCTABLE_PC_OVERFLOW: 'ERR_PCTABLE_PC_OVERFLOW',
  PCTABLE_SIZE_MISMATCH: 'ERR_PCTABLE_SIZE_MISMATCH',
  PCTABLE_BAD_OFFSET: 'ERR_PCTABLE_BAD_OFFSET',
  PCTABLE_BAD_LENGTH_CODE: 'ERR_PCTABLE_BAD_LENGTH_CODE',
  PCTABLE_BAD_PCS: 'ERR_PCTABLE_BAD_PCS',
  PCTABLE_PC_OUT_OF_RANGE: 'ERR_PCTABLE_PC_OUT_OF_RANGE',
  // tachyon reader (CPython 3.15.2's BinaryReader failures, one code each; stage in comments)
  TACHYON_TOO_SMALL: 'ERR_TACHYON_TOO_SMALL', // open
  TACHYON_NOT_FINALIZED: 'ERR_TACHYON_NOT_FINALIZED', // open: 64 zero bytes of header (magic 0)
  TACHYON_BAD_MAGIC: 'ERR_TACHYON_BAD_MAGIC', // open
  TACHYON_FUTURE_VERSION: 'ERR_TACHYON_FUTURE_VERSION', // open
  TACHYON_UNSUPPORTED_VERSION: 'ERR_TACHYON_UNSUPPORTED_VERSION', // open
  TACHYON_BAD_MODE: 'ERR_TACHYON_BAD_MODE', // open
  TACHYON_TABLE_OFFSET_PAST_END: 'ERR_TACHYON_TABLE_OFFSET_PAST_END', // open
  TACHYON_TABLE_OFFSET_BEFORE_DATA: 'ERR_TACHYON_TABLE_OFFSET_BEFORE_DATA', // open
  TACHYON_TABLE_OFFSETS_ORDER: 'ERR_TACHYON_TABLE_OFFSETS_ORDER', // open
  TACHYON_STATS_SIZE: 'ERR_TACHYON_STATS_SIZE', // open
  TACHYON_STATS_VALUES: 'ERR_TACHYON_STATS_VALUES', // open
  TACHYON_ZSTD_FRAME_HEADER: 'ERR_TACHYON_ZSTD_FRAME_HEADER', // open
  TACHYON_ZSTD_ERROR: 'ERR_TACHYON_ZSTD_ERROR', // open
  TACHYON_ZSTD_TRUNCATED: 'ERR_TACHYON_ZSTD_TRUNCATED', // open
  TACHYON_ZSTD_TOO_LARGE: 'ERR_TACHYON_ZSTD_TOO_LARGE', // open
  TACHYON_STRING_COUNT: 'ERR_TACHYON_STRING_COUNT', // open
  TACHYON_FRAME_COUNT: 'ERR_TACHYON_FRAME_COUNT', // open
  TACHYON_STRING_TABLE_VARINT: 'ERR_TACHYON_STRING_TABLE_VARINT', // open
  TACHYON_STRING_TABLE_OVERFLOW: 'ERR_TACHYON_STRING_TABLE_OVERFLOW', // open
  TACHYON_FRAME_TABLE_VARINT: 'ERR_TACHYON_FRAME_TABLE_VARINT', // open
  TACHYON_FRAME_TABLE_TRUNCATED: 'ERR_TACHYON_FRAME_TABLE_TRUNCATED', // open
  TACHYON_TRUNCATED_RECORD: 'ERR_TACHYON_TRUNCATED_RECORD', // replay
  TACHYON_THREAD_COUNT: 'ERR_TACHYON_THREAD_COUNT', // replay
  TACHYON_UNKNOWN_ENCODING: 'ERR_TACHYON_UNKNOWN_ENCODING', // replay
  TACHYON_RLE_COUNT_VARINT: 'ERR_TACHYON_RLE_COUNT_VARINT', // replay
  TACHYON_RLE_COUNT: 'ERR_TACHYON_RLE_COUNT', // replay
  TACHYON_RLE_VARINT: 'ERR_TACHYON_RLE_VARINT', // replay
  TACHYON_RLE_TRUNCATED: 'ERR_TACHYON_RLE_TRUNCATED', // replay
  TACHYON_SAMPLE_VARINT: 'ERR_TACHYON_SAMPLE_VARINT', // replay
  TACHYON_SAMPLE_TRUNCATED: 'ERR_TACHYON_SAMPLE_TRUNCATED', // replay
  TACHYON_STACK_VARINT: 'ERR_TACHYON_STACK_VARINT', // replay
  TACHYON_STACK_DEPTH: 'ERR_TACHYON_STACK_DEPTH', // replay
  TACHYON_SHARED_COUNT: 'ERR_TACHYON_SHARED_COUNT', // replay
  TACHYON_FINAL_STACK_DEPTH: 'ERR_TACHYON_FINAL_STACK_DEPTH', // replay
  TACHYON_FRAME_INDEX: 'ERR_TACHYON_FRAME_INDEX', // replay
  TACHYON_STRING_INDEX: 'ERR_TACHYON_STRING_INDEX', // replay
  TACHYON_SAMPLE_COUNT_MISMATCH: 'ERR_TACHYON_SAMPLE_COUNT_MISMATCH', // replay
  TACHYON_READER_CLOSED: 'ERR_TACHYON_READER_CLOSED',
  TACHYON_IO: 'ERR_TACHYON_IO', // open: the file cannot be opened or read
  // v2 (format version 2: predicted stacks, stack table, compressed tables)
  V2_TRUNCATED: 'ERR_V2_TRUNCATED',
  V2_BAD_BLOCK: 'ERR_V2_BAD_BLOCK',
  V2_UNDEFINED_BUCKET: 'ERR_V2_UNDEFINED_BUCKET',
  V2_BAD_CODEWORD: 'ERR_V2_BAD_CODEWORD',
  V2_BAD_KEEP: 'ERR_V2_BAD_KEEP',
  V2_UNDEFINED_STACK: 'ERR_V2_UNDEFINED_STACK',
  V2_STACK_CYCLE: 'ERR_V2_STACK_CYCLE',
  V2_STACK_TOO_DEEP: 'ERR_V2_STACK_TOO_DEEP', // a stack past version 2's 4,096 frames (256 in earlier releases)
  V2_UNDEFINED_THREAD: 'ERR_V2_UNDEFINED_THREAD',
  V2_BAD_MTF: 'ERR_V2_BAD_MTF',
  V2_BAD_HEADER: 'ERR_V2_BAD_HEADER',
  V2_BAD_TABLES: 'ERR_V2_BAD_TABLES',
  V2_UNSUPPORTED: 'ERR_V2_UNSUPPORTED',
  V2_ZSTD: 'ERR_V2_ZSTD',
  V2_WRITER_STATE: 'ERR_V2_WRITER_STATE',
  V2_BAD_MODEL: 'ERR_V2_BAD_MODEL', // version 2's model section (sample types, value columns, labels) is malformed
  /** Heap events asked of a version-1 writer: only version 2 holds them. */
  TACHYON_V1_HEAP: 'ERR_TACHYON_V1_HEAP',
  /** A weighted profile that version 1's one-tick samples cannot hold: write version 2. */
  TACHYON_V1_WEIGHTED: 'ERR_TACHYON_V1_WEIGHTED',
  /** Version 2's heap section (allocation and free events) is malformed. */
  V2_BAD_HEAP: 'ERR_V2_BAD_HEAP',
  V2_LIMIT: 'ERR_V2_LIMIT', // a reader bound: prediction state for too many threads, a block too large or too deep
  // Many profiles (lib/fleet)
  FLEET_NO_INPUT: 'ERR_FLEET_NO_INPUT', // a path that is missing, or a directory without profiles
  DUCKDB_UNAVAILABLE: 'ERR_DUCKDB_UNAVAILABLE', // the optional @duckdb/node-api is not installed or does not load
  SQL_FAILED: 'ERR_SQL_FAILED', // DuckDB refused a query or a Parquet file
  FLEET_TIME_RANGE: 'ERR_FLEET_TIME_RANGE', // a time at or past 2^63 us: the tables' BIGINT cannot hold it
  // ClickHouse (lib/fleet/clickhouse.ts): each names the server (details.server)
  CLICKHOUSE_UNREACHABLE: 'ERR_CLICKHOUSE_UNREACHABLE', // no connection, or it broke, after the retries
  CLICKHOUSE_SERVER: 'ERR_CLICKHOUSE_SERVER', // the server answered with an error (HTTP status, exception text, auth)
  CLICKHOUSE_SCHEMA: 'ERR_CLICKHOUSE_SCHEMA', // a table whose column differs from the schema, or a cluster's shards

  // recovery of a profile whose writer died (writing half)
  TACHYON_JOURNAL_CORRUPT: 'ERR_TACHYON_JOURNAL_CORRUPT',
  TACHYON_RECOVER_FAILED: 'ERR_TACHYON_RECOVER_FAILED',
  TACHYON_RECOVER_V2: 'ERR_TACHYON_RECOVER_V2', // an unfinished version-2 file without its writer's journal

  // reading files (lib/input.ts) and bounded memory
  IO: 'ERR_IO', // a fs failure outside the Tachyon reader (convert, openProfile, CLI outputs)
  NOT_REGULAR_FILE: 'ERR_NOT_REGULAR_FILE', // a FIFO, device, directory or socket given as a profile
  TACHYON_FILE_CHANGED: 'ERR_TACHYON_FILE_CHANGED', // the file shrank or was rewritten after open
  CONVERT_TOO_MANY_SAMPLES: 'ERR_CONVERT_TOO_MANY_SAMPLES', // past ConvertOptions.maxSamples
  /** A profile format recognised but not read (gecko, trace events, pstats, Go legacy text…). */
  CONVERT_UNSUPPORTED_FORMAT: 'ERR_CONVERT_UNSUPPORTED_FORMAT',

  // outputs and writers
  OUTPUT_IS_INPUT: 'ERR_OUTPUT_IS_INPUT', // an output path that is (the same file as) an input
  TACHYON_LOCKED: 'ERR_TACHYON_LOCKED', // another live ProfileWriter holds the path's lock
  VIEW_TOO_LARGE: 'ERR_VIEW_TOO_LARGE', // a flame or diff page past MAX_TREE_NODES stack nodes

  // numbers
  /** A negative value (a diff profile's) for a format whose own readers refuse it (speedscope, collapsed). */
  CONVERT_NEGATIVE_VALUE: 'ERR_CONVERT_NEGATIVE_VALUE',
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode] | (string & {});

export interface ProfpackErrorOptions {
  code: ErrorCodeValue;
  /** Byte offset in the input where the problem is, when one applies. */
  offset?: number | bigint;
  /** What the decoder expected to find there. */
  expected?: string;
  cause?: unknown;
  /** Extra facts for callers (e.g. samples delivered before a replay error). */
  details?: Record<string, unknown>;
}

export class ProfpackError extends Error {
  readonly code: ErrorCodeValue;
  readonly offset: number | undefined;
  readonly expected: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: ProfpackErrorOptions) {
    const offset = options.offset === undefined ? undefined : Number(options.offset);
    super(
      offset === undefined ? message : `${message} (at byte ${offset})`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ProfpackError';
    this.code = options.code;
    this.offset = offset;
    this.expected = options.expected;
    this.details = options.details;
  }
}

/** True for a ProfpackError, also one from another copy of the module. */
export function isProfpackError(value: unknown): value is ProfpackError {
  return (
    value instanceof ProfpackError ||
    (value instanceof Error && value.name === 'ProfpackError' && typeof (value as ProfpackError).code === 'string')
  );
}

export function invalidArgument(message: string, expected?: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.INVALID_ARGUMENT, expected });
}
