/** The heap recording's options, checked alike for the library and the CLI. */
import { ErrorCode, ProfpackError } from '../../errors';

export interface HeapOptions {
  /** V8's mean sampling interval in bytes (default DEFAULT_HEAP_INTERVAL_BYTES). */
  intervalBytes?: number;
  /** Poll at once, then often, when the heap's use (limit.ts) passes this share of V8's limit (default 0.85). */
  nearLimitRatio?: number;
  /**
   * When timed polls run (default 'paced'): 'paced' spaces them so they stay a small share of the CPU
   * (program/heap-recorder.ts: an inspector poll is a full GC, a native one is not and comes at nearly every
   * harvest); 'harvest' polls at every harvest, for the detail of short programs and of garbage that lives well
   * under a second.
   */
  polls?: HeapPolls;
  /**
   * What is kept of sampled objects that die between two polls (default 'stacks'): 'stacks' keeps their stacks and
   * sizes on the native sampler (a GC prologue looks before each GC, native/heap/), so `alloc_space` names who makes
   * the garbage; 'count' only counts them, as the inspector path always does (docs/memory.md).
   */
  shortLived?: HeapShortLived;
  /**
   * Sample the Buffer and ArrayBuffer stores the program allocates from JavaScript (default true; external.ts):
   * V8's sampler sees only their small JS objects. false leaves Buffer and the ArrayBuffer constructors untouched.
   */
  buffers?: boolean;
}

export type HeapShortLived = 'stacks' | 'count';
export const HEAP_SHORT_LIVED: readonly HeapShortLived[] = ['stacks', 'count'];

export type HeapPolls = 'paced' | 'harvest';
export const HEAP_POLLS: readonly HeapPolls[] = ['paced', 'harvest'];

/**
 * 512 KiB, kept after measuring (bench/RESULTS.md ## heap, `npm run bench -- heap`). On an HTTP service loop
 * the recorder's cost did not move with the interval (128 KiB to 4 MiB: +52 to +70 % target CPU at load ~24,
 * all of it the full GC that every inspector poll forces, see program/heap-recorder.ts), while the detail did: 816,
 * 178, 96 and 20 sampled objects per second of the program's CPU at 128 KiB, 512 KiB, 1 MiB, 4 MiB. At 512 KiB a site
 * taking 1 % of a busy core's allocations gets ~100 samples a minute (±10 %). What the interval does set is a
 * poll's serialization on a big heap, 5-7 µs per live sampled object (Node 20 and 24 alike): a 1 GB live heap
 * polled once a second costs ~1.2 % of a core at 512 KiB, ~5 % at 128 KiB. Go's MemProfileRate and
 * @datadog/pprof's heap default are 512 KiB too, so pprof readers see the scale they expect.
 */
export const DEFAULT_HEAP_INTERVAL_BYTES = 512 * 1024;
/**
 * 0.85: the use limit.ts reads was at 0.876-1.08 of the limit at the last 5-ms look before V8 aborted (Node 20,
 * 64 MB, small arrays hoarded at ~16 MB/s, dozens of runs on a loaded machine), and the recorder looks every
 * LIMIT_CHECK_MS, up to ~1.3 % of such a heap earlier.
 */
export const DEFAULT_NEAR_LIMIT_RATIO = 0.85;
/** Below this V8 samples nearly every object: a trace, not a sample, and the target crawls. */
export const MIN_HEAP_INTERVAL_BYTES = 1024;
/** V8 takes the interval as an int. */
export const MAX_HEAP_INTERVAL_BYTES = 2 ** 30;

export function checkHeapOptions(options: HeapOptions | true): Required<HeapOptions> {
  if (options === true) options = {};
  if (options === null || typeof options !== 'object')
    throw new ProfpackError('heap must be true or { intervalBytes?, nearLimitRatio? }', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'true or an object',
    });
  const intervalBytes = options.intervalBytes ?? DEFAULT_HEAP_INTERVAL_BYTES;
  if (
    !Number.isInteger(intervalBytes) ||
    intervalBytes < MIN_HEAP_INTERVAL_BYTES ||
    intervalBytes > MAX_HEAP_INTERVAL_BYTES
  ) {
    throw new ProfpackError(
      `heap.intervalBytes must be an integer in [${MIN_HEAP_INTERVAL_BYTES}, ${MAX_HEAP_INTERVAL_BYTES}], ` +
        `not ${String(intervalBytes)}`,
      {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `bytes in [${MIN_HEAP_INTERVAL_BYTES}, ${MAX_HEAP_INTERVAL_BYTES}]`,
      },
    );
  }
  const nearLimitRatio = options.nearLimitRatio ?? DEFAULT_NEAR_LIMIT_RATIO;
  if (typeof nearLimitRatio !== 'number' || !(nearLimitRatio > 0 && nearLimitRatio <= 1)) {
    throw new ProfpackError(`heap.nearLimitRatio must be in (0, 1], not ${String(nearLimitRatio)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'a ratio in (0, 1]',
    });
  }
  const polls = options.polls ?? 'paced';
  if (!HEAP_POLLS.includes(polls)) {
    throw new ProfpackError(`heap.polls must be 'paced' or 'harvest', not ${String(polls)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'paced | harvest',
    });
  }
  const shortLived = options.shortLived ?? 'stacks';
  if (!HEAP_SHORT_LIVED.includes(shortLived)) {
    throw new ProfpackError(`heap.shortLived must be 'stacks' or 'count', not ${String(shortLived)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'stacks | count',
    });
  }
  const buffers = options.buffers ?? true;
  if (typeof buffers !== 'boolean')
    throw new ProfpackError(`heap.buffers must be true or false, not ${String(buffers)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'a boolean',
    });
  return { intervalBytes, nearLimitRatio, polls, shortLived, buffers };
}

/** "524288", "512k", "512KiB", "1m", "1MiB" → bytes (the CLI's --heap-interval). */
export function parseByteSize(text: string): number {
  const m = /^(\d+)\s*(k|kb|kib|m|mb|mib)?$/i.exec(text.trim());
  if (m === null)
    throw new ProfpackError(`not a byte size: "${text}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'bytes, e.g. 524288, 512k, 1m',
    });
  const unit = m[2] === undefined ? 1 : m[2].toLowerCase().startsWith('k') ? 1024 : 1024 * 1024;
  return Number(m[1]) * unit;
}
