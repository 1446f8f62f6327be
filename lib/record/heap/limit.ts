/**
 * Near out-of-memory. V8 aborts the process when a GC cannot get the old
 * space under its limit: no 'exit' handler runs, so whatever heap events were
 * not yet on the pipe are lost. Once the heap's use (oldGenerationUse) passes
 * `ratio` of its limit the recorder polls at once and then often, so that the writer process
 * holds the events of the allocations that led to the end.
 */
import * as v8 from 'node:v8';

/**
 * How often the heap's use is checked: v8.getHeapSpaceStatistics() takes ~2.5 µs (Node 20), and 64 MB/s of
 * hoarding fills 10 % of a 64 MB heap in 100 ms.
 */
export const LIMIT_CHECK_MS = 50;
/** The fastest poll pace near the limit. */
export const NEAR_LIMIT_MIN_POLL_MS = 100;
/**
 * Near the limit a poll may take at most 1/this of the time: a huge live set must not turn the recorder into the
 * load.
 */
const NEAR_LIMIT_POLL_SHARE = 5;

/** `--max-old-space-size` (MB) as the process was started with it, from its argv or NODE_OPTIONS. */
export function maxOldSpaceFlagMb(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): number | undefined {
  let mb: number | undefined;
  for (const arg of [...nodeOptions.split(/\s+/), ...execArgv]) {
    const m = /^--max[-_]old[-_]space[-_]size=(\d+(?:\.\d+)?)$/.exec(arg);
    if (m !== null) mb = Number(m[1]);
  }
  return mb;
}

/**
 * How close the heap is to V8's abort, bytes against the old generation's limit, read as V8 itself decides: before a
 * scavenge it asks whether the old generation could still take everything the young generation holds room for
 * (Heap::CanPromoteYoungAndExpandOldGeneration: the old spaces' committed pages plus the new space's capacity and
 * the young large objects), and when it cannot, it runs mark-compacts instead ("scavenge might not succeed") until
 * one fails to make room and it aborts. So the use is the old spaces' committed bytes plus the young generation's
 * capacity (new space: used + available) and its large objects. Measured with --max-old-space-size=64, hoarding
 * arrays of 100 to 100,000 doubles at ~16 MB/s, looking every 5 ms: the last look before the abort read 1.01-1.14
 * on Node 20, 22, 24 and 26. The old spaces alone (committed, or used plus young used, read before) were at times
 * 0.82-0.87 at that last look on Node 20: V8 had promoted a young generation the look had seen nearly empty.
 * On a small heap the young generation's capacity is a large part of the sum (Node 24: 32 MB of 64 MB, so 85 % is
 * crossed with 42 % of the abort's hoard), on a default one of gigabytes a small one.
 * heap_size_limit adds the young generation's reserve to the old limit (Node 20: 48 MB, Node 24: 192 MB),
 * most of it next to a small --max-old-space-size: so the limit is the flag when given, else heap_size_limit.
 */
export function oldGenerationUse(flagMb = maxOldSpaceFlagMb()): { usedBytes: number; limitBytes: number } {
  let usedBytes = 0;
  for (const space of v8.getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') usedBytes += space.space_used_size + space.space_available_size;
    else if (space.space_name.startsWith('new_')) usedBytes += space.space_used_size;
    else if (space.space_name !== 'read_only_space') usedBytes += space.space_size;
  }
  const limitBytes = flagMb !== undefined ? flagMb * 1024 * 1024 : v8.getHeapStatistics().heap_size_limit;
  return { usedBytes, limitBytes };
}

export class HeapLimitWatcher {
  private near = false;
  private readonly flagMb = maxOldSpaceFlagMb();

  constructor(readonly ratio: number) {}

  /** oldGenerationUse over its limit, 0..1 (about 1 when V8 gives up). */
  usage(): number {
    const { usedBytes, limitBytes } = oldGenerationUse(this.flagMb);
    return limitBytes > 0 ? usedBytes / limitBytes : 0;
  }

  /** `crossed`: the use has just passed the ratio (again, if it had dropped below). */
  check(): { crossed: boolean; near: boolean } {
    const near = this.usage() >= this.ratio;
    const crossed = near && !this.near;
    this.near = near;
    return { crossed, near };
  }

  get isNear(): boolean {
    return this.near;
  }

  /** The poll pace near the limit, given what the last poll cost. */
  static pollMs(lastPollCostMs: number): number {
    return Math.max(NEAR_LIMIT_MIN_POLL_MS, Math.ceil(lastPollCostMs * NEAR_LIMIT_POLL_SHARE));
  }
}
