/**
 * Near out-of-memory. V8 aborts the process when a GC cannot get the old
 * space under its limit: no 'exit' handler runs, so whatever heap events were
 * not yet on the pipe are lost. Once the heap's use (oldGenerationUse) passes
 * `ratio` of its limit the recorder polls at once, and again at each check that
 * finds the use a step higher than at the last poll (nearPollDue), so that the
 * writer process holds the events of the allocations that led to the end.
 */
import * as v8 from 'node:v8';

/**
 * How often the heap's use is checked: v8.getHeapSpaceStatistics() takes ~2.5 µs (Node 20), and 64 MB/s of
 * hoarding fills 10 % of a 64 MB heap in 100 ms.
 */
export const LIMIT_CHECK_MS = 50;
/**
 * The fastest climb of the heap's use a check is spaced for, bytes per second (16 times the 64 MB/s above): far
 * below the near ratio the next check waits as long as the use would take to reach it at this rate, up to
 * LONGEST_LIMIT_CHECK_MS. A default heap of gigabytes at tens of MB is then checked once a second instead of 20
 * times (each check a timer and ~50 µs of a cold getHeapSpaceStatistics in a busy program); a 64 MB one is still
 * checked every LIMIT_CHECK_MS (its ratio is less than 60 ms away at this rate).
 */
export const FASTEST_CLIMB_BYTES_PER_S = 1024 * 1024 * 1024;
/** The longest wait between two checks. */
export const LONGEST_LIMIT_CHECK_MS = 1000;
/**
 * Near the limit a poll may take at most 1/this of the time: a huge live set must not turn the recorder into the
 * load.
 */
export const NEAR_LIMIT_POLL_SHARE = 5;
/**
 * Near the limit a check polls once the use has climbed this share of the headroom left at the last poll (or
 * NEAR_LIMIT_MIN_STEP of the limit, if more) above the use then: a heap climbing to the abort is polled at every
 * check, one that sits near the limit is left to the ordinary pace.
 */
export const NEAR_LIMIT_HEADROOM_STEP = 1 / 16;
/**
 * From this use on V8 is past what it could promote: it runs mark-compacts instead of scavenges until one fails.
 * New objects then stay young and the old spaces stand still, so a check polls whatever they do.
 */
export const NEAR_LIMIT_LAST_STAND = 1;
/** 0.25 % of a 64 MB limit is one old-space page (256 KB), ~20 ms of hoarding at 8 MB/s; of 4 GB, 10 MB. */
export const NEAR_LIMIT_MIN_STEP = 0.0025;

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
export function oldGenerationUse(flagMb: number | null = maxOldSpaceFlagMb() ?? null): {
  usedBytes: number;
  limitBytes: number;
  /** The old spaces' committed bytes alone: they only climb as a hoard grows, the young capacity may shrink. */
  oldBytes: number;
} {
  let youngBytes = 0;
  let oldBytes = 0;
  for (const space of v8.getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') youngBytes += space.space_used_size + space.space_available_size;
    else if (space.space_name.startsWith('new_')) youngBytes += space.space_used_size;
    else if (space.space_name !== 'read_only_space') oldBytes += space.space_size;
  }
  const limitBytes = flagMb !== null ? flagMb * 1024 * 1024 : v8.getHeapStatistics().heap_size_limit;
  return { usedBytes: oldBytes + youngBytes, limitBytes, oldBytes };
}

export class HeapLimitWatcher {
  private near = false;
  /** Read once: passed as undefined, oldGenerationUse's default would parse the flags again at every check. */
  private readonly flagMb = maxOldSpaceFlagMb() ?? null;
  /** The limit at the last read, bytes. */
  private limitBytes = 0;

  constructor(readonly ratio: number) {}

  /** oldGenerationUse over its limit, 0..1 (about 1 when V8 gives up). */
  usage(): number {
    return this.read().usage;
  }

  private read(): { usage: number; oldUsage: number } {
    const { usedBytes, limitBytes, oldBytes } = oldGenerationUse(this.flagMb);
    this.limitBytes = limitBytes;
    if (!(limitBytes > 0)) return { usage: 0, oldUsage: 0 };
    return { usage: usedBytes / limitBytes, oldUsage: oldBytes / limitBytes };
  }

  /**
   * `crossed`: the use has just passed the ratio (again, if it had dropped below); `usage` as usage() reads it,
   * `oldUsage` the old spaces' share alone.
   */
  check(): { crossed: boolean; near: boolean; usage: number; oldUsage: number } {
    const { usage, oldUsage } = this.read();
    const near = usage >= this.ratio;
    const crossed = near && !this.near;
    this.near = near;
    return { crossed, near, usage, oldUsage };
  }

  get isNear(): boolean {
    return this.near;
  }

  /**
   * How long the next check may wait after one that read `usage`: the time the use would take to climb to the
   * ratio at FASTEST_CLIMB_BYTES_PER_S, between LIMIT_CHECK_MS (near it, or past it) and LONGEST_LIMIT_CHECK_MS.
   */
  nextCheckMs(usage: number): number {
    const toRatioMs = (((this.ratio - usage) * this.limitBytes) / FASTEST_CLIMB_BYTES_PER_S) * 1000;
    if (!(toRatioMs > LIMIT_CHECK_MS)) return LIMIT_CHECK_MS;
    return Math.min(LONGEST_LIMIT_CHECK_MS, Math.floor(toRatioMs));
  }

  /**
   * Whether a check near the limit polls: the old spaces have climbed a step above their share just after the last
   * poll (`climb`, the share then and now; see NEAR_LIMIT_HEADROOM_STEP, the headroom being the whole use's), or the
   * use is past NEAR_LIMIT_LAST_STAND; and the last poll's cost has been paid NEAR_LIMIT_POLL_SHARE times over since.
   * The whole use is no measure of the climb: near the abort V8 shrinks the young generation as the old one grows.
   */
  static nearPollDue(
    use: { now: number; atLastPoll: number },
    climb: { now: number; atLastPoll: number },
    sinceLastPollMs: number,
    lastPollCostMs: number,
  ): boolean {
    const step = Math.max(NEAR_LIMIT_MIN_STEP, (1 - use.atLastPoll) * NEAR_LIMIT_HEADROOM_STEP);
    const pressed = use.now >= NEAR_LIMIT_LAST_STAND || climb.now >= climb.atLastPoll + step;
    return pressed && sinceLastPollMs >= lastPollCostMs * NEAR_LIMIT_POLL_SHARE;
  }
}
