/**
 * The heap side of a recording in the recorded thread: polls the sampler at
 * each harvest, turns each poll into one heap frame (wire.ts), and watches
 * the old generation so that near V8's limit harvests come at once and often.
 * A poll that fails ends heap recording with a warning, never the program.
 */
import { HeapLimitWatcher, LIMIT_CHECK_MS } from './limit';
import type { HeapOptions } from './options';
import { HeapSampler } from './sampler';
import { encodeHeapFrame } from './wire';

export class HeapRecorder {
  private readonly sampler: HeapSampler;
  private readonly watcher: HeapLimitWatcher;
  private lastCostMs = 0;
  private disposed = false;
  polls = 0;
  /** Allocation and free events sent. */
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
    if (this.disposed) return;
    try {
      const poll = this.sampler.poll();
      if (poll === undefined) return;
      this.polls++;
      this.lastCostMs = poll.costMs;
      if (poll.ordinals.length === 0 && poll.freed.length === 0 && poll.shortLived === 0) return;
      this.events += poll.ordinals.length + poll.freed.length;
      this.send(encodeHeapFrame(poll, this.threadId, this.sampler.numbers));
    } catch (err) {
      this.dispose();
      process.emitWarning(`profpack: heap recording stopped: ${(err as Error).message}`);
    }
  }

  /** The harvest pace: `normalMs`, or faster near the heap limit, never so fast that polling is most of the work. */
  harvestMs(normalMs: number): number {
    return this.watcher.isNear ? Math.min(normalMs, HeapLimitWatcher.pollMs(this.lastCostMs)) : normalMs;
  }

  /**
   * Runs `harvest` every `normalMs` (harvestMs() near the limit), and at once
   * when the old generation passes the ratio (checked every LIMIT_CHECK_MS).
   * Returns the function that stops both timers. The timers never keep the program alive.
   */
  drive(harvest: () => void, normalMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const schedule = (): void => {
      timer = setTimeout(() => {
        harvest();
        if (!stopped) schedule();
      }, this.harvestMs(normalMs));
      timer.unref();
    };
    const watch = setInterval(() => {
      if (stopped || !this.watcher.check().crossed) return;
      clearTimeout(timer);
      harvest();
      if (!stopped) schedule();
    }, LIMIT_CHECK_MS);
    watch.unref();
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearInterval(watch);
    };
  }

  get nearLimit(): boolean {
    return this.watcher.isNear;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.sampler.dispose();
  }
}
