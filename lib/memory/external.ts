/**
 * External memory over time: the bytes outside V8's heap that JS objects hold
 * (Buffer and ArrayBuffer backing stores above all), as process.memoryUsage()
 * read them at the heap polls. V8's sampling heap profiler never sees them, so
 * a program holding 50 MB of Buffers shows "0B live" in the sampled heap; this
 * series is what shows it. A least-squares line through each thread's series
 * (fitLine, as leak suspects are judged) tells a growing line from one that
 * comes and goes.
 */
import { fitLine } from './leaks';
import type { ExternalMemorySample, HeapTraceSource } from '../profile/index';

/** A line grows (a suspect) from this much growth over the recording... */
export const EXTERNAL_SUSPECT_MIN_BYTES = 1 << 20;
/** ...steadily: at least this R² (as a leak suspect's, 1: a straight climb). */
export const EXTERNAL_SUSPECT_MIN_FIT = 0.5;

export interface ExternalMemoryTrend {
  /** The thread's id as recorded (Node's threadId: 0 the main thread). */
  threadId: string;
  samples: number;
  /** First and last sample, ms after the recording's start. */
  firstMs: number;
  lastMs: number;
  /** `external` at the first and last sample, and its highest. */
  firstBytes: number;
  endBytes: number;
  peakBytes: number;
  /** The ArrayBuffer (and Buffer) part of `external` at the last sample. */
  arrayBuffersEndBytes: number;
  /** Least-squares slope of `external` over the samples, and the R² of that line (0..1). */
  growthBytesPerMin: number;
  fit: number;
  /** Grew by at least EXTERNAL_SUSPECT_MIN_BYTES, steadily (EXTERNAL_SUSPECT_MIN_FIT): a leak V8's sampler misses. */
  suspect: boolean;
}

/** Each thread's external line (threads in the order the trace names them); empty when the trace has none. */
export function externalMemoryTrends(trace: HeapTraceSource): ExternalMemoryTrend[] {
  const series = trace.externalMemory?.() ?? [];
  const byThread = new Map<number, ExternalMemorySample[]>();
  for (const m of series) {
    let list = byThread.get(m.thread);
    if (list === undefined) byThread.set(m.thread, (list = []));
    list.push(m);
  }
  const startUs = trace.meta.startTimeUs;
  const out: ExternalMemoryTrend[] = [];
  for (const [thread, list] of [...byThread].sort((a, b) => a[0] - b[0])) {
    let st = 0;
    let stt = 0;
    let sy = 0;
    let syy = 0;
    let sty = 0;
    let peak = 0;
    let lowest = Infinity;
    for (const m of list) {
      // Minutes and MiB keep the sums' magnitudes small enough for doubles.
      const t = (m.timeUs - startUs) / 60e6;
      const y = m.externalBytes / 2 ** 20;
      st += t;
      stt += t * t;
      sy += y;
      syy += y * y;
      sty += t * y;
      peak = Math.max(peak, m.externalBytes);
      lowest = Math.min(lowest, m.externalBytes);
    }
    const { slope, r2 } = fitLine(list.length, st, stt, sy, syy, sty);
    const first = list[0]!;
    const last = list[list.length - 1]!;
    const growthBytesPerMin = slope * 2 ** 20;
    out.push({
      threadId: String(trace.threads[thread]?.threadId ?? thread),
      samples: list.length,
      firstMs: (first.timeUs - startUs) / 1000,
      lastMs: (last.timeUs - startUs) / 1000,
      firstBytes: first.externalBytes,
      endBytes: last.externalBytes,
      peakBytes: peak,
      arrayBuffersEndBytes: last.arrayBuffersBytes,
      growthBytesPerMin,
      fit: r2,
      suspect: growthBytesPerMin > 0 && r2 >= EXTERNAL_SUSPECT_MIN_FIT && peak - lowest >= EXTERNAL_SUSPECT_MIN_BYTES,
    });
  }
  return out;
}

/** One line per thread, for `leaks` and `info`. */
export function formatExternalLines(
  trends: readonly ExternalMemoryTrend[],
  unitBytes: (v: number) => string,
): string[] {
  return trends.map((x) => {
    const sign = x.growthBytesPerMin >= 0 ? '+' : '-';
    const growth = `${sign}${unitBytes(Math.abs(x.growthBytesPerMin))}/min, R² ${x.fit.toFixed(2)}`;
    const verdict = x.suspect
      ? ": growing, a suspect: V8's sampled heap does not see it (Buffer/ArrayBuffer backing stores)"
      : '';
    return (
      `external (thread ${x.threadId}): ${unitBytes(x.endBytes)} at the end ` +
      `(${unitBytes(x.arrayBuffersEndBytes)} ArrayBuffers; peak ${unitBytes(x.peakBytes)}; ${growth}; ` +
      `${x.samples} samples)${verdict}`
    );
  });
}
