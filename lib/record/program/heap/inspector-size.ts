/**
 * V8's inspector reports a sampled object's size already unsampled: `HeapProfiler.getSamplingProfile` sets each
 * sample's size to `size * count` (v8-heap-profiler-agent-impl.cc), where `count` is
 * SamplingHeapProfiler::ScaleSample(size, 1), that is round(1 / p), p = 1 - exp(-size / interval). Scaled once
 * more by 1/p as the file's raw sizes are (unsampledWeight), an object much smaller than the interval read as
 * 1 / (1 - 1/e) = 1.58 times its share at the default interval, and a 2.6 KB array at 4 KiB as 1.3 times.
 *
 * The raw size cannot be recovered in general (2,608 bytes counted twice and 5,216 bytes counted once are both
 * reported as 5,216 at a 4 KiB interval), so the inspector's size is kept as the estimate it is: the size
 * recorded is the one whose unsampled weight is the reported bytes. Exact for the bytes (V8's own estimate,
 * with its rounding of the count), approximate for the object's size. V8's C++ API hands the raw size and the
 * count apart (v8::AllocationProfile::Sample): a sampler on it records the raw size and needs none of this.
 */

/** The size s, bytes, whose unsampledWeight at `intervalBytes` is `reportedBytes`: s / (1 - exp(-s / I)) = S. */
export function sizeForUnsampledBytes(reportedBytes: number, intervalBytes: number): number {
  if (!(reportedBytes > 0) || !(intervalBytes > 0)) return Math.max(0, Math.round(reportedBytes)) || 0;
  const weight = (s: number) => s / -Math.expm1(-s / intervalBytes);
  // The weight grows from `intervalBytes` (s -> 0) and is never below s: the size is in (0, reportedBytes].
  if (reportedBytes <= weight(1)) return 1;
  let low = 1;
  let high = reportedBytes;
  while (high - low > 0.5) {
    const mid = (low + high) / 2;
    if (weight(mid) < reportedBytes) low = mid;
    else high = mid;
  }
  return Math.round((low + high) / 2);
}
