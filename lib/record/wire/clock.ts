/** The clocks both ends of a recording agree on. */

/**
 * µs to add to a V8 sample time (CLOCK_MONOTONIC, the clock process.hrtime
 * reads) to make it Unix epoch µs. Recordings written to a file keep the epoch
 * in start_time_us and every sample time (docs/interop.md), where CPython's
 * own sampler keeps its monotonic clock.
 */
export function epochOffsetUs(): bigint {
  const monotonicUs = process.hrtime.bigint() / 1000n;
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) - monotonicUs;
}

/** A file recording's start (Unix epoch µs, its header's start time) and the offset its sample times take. */
export function recordingClock(): { startTimeUs: bigint; epochOffsetUs: bigint } {
  const offset = epochOffsetUs();
  return { startTimeUs: process.hrtime.bigint() / 1000n + offset, epochOffsetUs: offset };
}
