/**
 * Times as the tables' BIGINT columns hold them (timestamp_us, start_us, end_us, alloc_us, free_us). A file's
 * times are u64 microseconds: one at or past 2^63 (about 292,000 years after 1970, so a corrupt or hostile file)
 * does not fit, and DuckDB's appender would throw a bare "bigint out of int64 range"; it is refused instead. The
 * sample interval (sample_interval_us, a u64 of the file too) takes the same check.
 */
import { ErrorCode, ProfpackError } from '../errors';

const INT64_END = 2 ** 63;

/** `timeUs` (microseconds) as a BIGINT value; `what` names it and `file` its profile in the error. */
export function bigintTimeUs(timeUs: number | bigint, what: string, file: string): bigint {
  const inRange =
    typeof timeUs === 'bigint'
      ? timeUs >= -(2n ** 63n) && timeUs < 2n ** 63n
      : timeUs >= -INT64_END && timeUs < INT64_END;
  if (!inRange) {
    throw new ProfpackError(`${file}: ${what} ${timeUs} us does not fit the tables' BIGINT columns`, {
      code: ErrorCode.FLEET_TIME_RANGE,
      expected: 'times below 2^63 us',
      details: { path: file, timeUs: String(timeUs) },
    });
  }
  return typeof timeUs === 'bigint' ? timeUs : BigInt(Math.round(timeUs));
}
