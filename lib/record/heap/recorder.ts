/**
 * The heap side of a recording in the recorded thread: polls the sampler at
 * each harvest, turns each poll into one heap frame (wire.ts), and watches
 * the heap's use so that harvests come at once and often near V8's limit.
 */
import { HeapLimitWatcher, LIMIT_CHECK_MS } from './limit';
import type { HeapOptions } from './options';
import { HeapSampler } from './sampler';
import { encodeHeapFrame } from './wire';

export class HeapRecorder {
  private readonly sampler: HeapSampler;
  private readonly watcher: HeapLimitWatcher;
  private watchTimer: NodeJS.Timeout | undefined;
  private lastCostMs = 0;
  polls = 0;
  events = 0;

  constructor(
    options: Required<HeapOptions>,
    /** Takes one whole heap frame (length word included). */
    private readonly send: (frame: Buffer) => void,
    private readonly threadId: number,
  ) {
    this.sampler = new HeapSampler(options.intervalBytes);
    this.watcher = new HeapLimitWatcher(options.nearLimitRatio);
  }

  poll(): void {
    const poll = this.sampler.poll();
    if (poll === undefined) return;
    this.polls++;
    this.lastCostMs = poll.costMs;
    if (poll.ordinals.length === 0 && poll.freed.length === 0 && poll.shortLived === 0) return;
    this.events += poll.ordinals.length + poll.freed.length;
    this.send(encodeHeapFrame(poll, this.threadId, this.sampler.numbers));
  }

  /** The harvest pace: `normalMs`, or faster near the heap limit (never so fast that polling is most of the work). */
  harvestMs(normalMs: number): number {
    return this.watcher.isNear ? Math.min(normalMs, HeapLimitWatcher.pollMs(this.lastCostMs)) : normalMs;
  }

  /** Checks the heap's use every LIMIT_CHECK_MS; `onNear` runs when it passes the ratio. */
  watch(onNear: () => void): void {
    this.watchTimer = setInterval(() => {
      if (this.watcher.check().crossed) onNear();
    }, LIMIT_CHECK_MS);
    this.watchTimer.unref();
  }

  get nearLimit(): boolean {
    return this.watcher.isNear;
  }

  dispose(): void {
    clearInterval(this.watchTimer);
    this.sampler.dispose();
  }
}
