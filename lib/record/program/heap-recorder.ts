/**
 * The heap side of a recording in the recorded thread: polls the sampler at
 * each harvest, turns each poll into one heap frame (wire/heap.ts), and watches
 * the old generation so that near V8's limit harvests come at once and often.
 * A poll that fails ends heap recording with a warning, never the program.
 *
 * With the inspector (probe.ts) every poll forces a full GC: V8's inspector
 * starts the sampling heap profiler with kSamplingForceGC
 * (v8-heap-profiler-agent-impl.cc), and getSamplingProfile then collects all
 * garbage first. That makes frees exact at each poll, and costs 20-100 ms on a
 * 15-30 MB heap (bench/RESULTS.md, ## heap), more on a bigger one; and the CPU
 * measured around a poll is about a quarter of what it costs the process (one
 * service run, polled every second: 0.5-0.9 s of CPU inside the polls, +1.9-2.9 s
 * against the same runs without; presumably V8's concurrent sweeping on helper
 * threads after the poll returns). So a timed poll comes at a harvest only
 * once the process has used POLL_CPU_SHARE times the last poll's CPU since it,
 * or once POLL_WALL_SHARE times the last poll's wall time has passed (a mostly
 * idle program, a slow leak: its few polls still show growth over time, at a
 * bounded share of a core), or once the old generation has used up a quarter
 * of the headroom it had under its limit at the last poll (a program hoarding
 * toward V8's abort: before the near-limit measure counted the young
 * generation's capacity, V8 gave up below its ratio on a 64 MB limit, and only
 * these polls had the events out in time).
 * V8's API sampler (native/heap/) forces no GC: a poll costs its walk of the
 * allocation tree and the live samples (0.2 ms on a 10-200 MB heap at 512 KiB,
 * ~4 ms of CPU for 9,000 live samples), all of it measured, so the same rule
 * runs with NATIVE_POLL_SHARE for both: polls at every harvest but on a heap
 * whose poll would take more than a twentieth of the time between harvests.
 * Its timed polls leave dead objects to V8's own next GC (a free is then known
 * to lie between the last poll that saw it and the first poll after that GC).
 * Polls asked for directly (harvest(), the last one at stop) and those near
 * the heap limit always run; on the native sampler the direct ones collect
 * the garbage first (a full GC and a scavenge: program/heap/sampler.ts), so that what is live at the end is exact.
 * Near the limit (limit.ts) a check every LIMIT_CHECK_MS (spaced further, up to a second, while the use is far
 * below the ratio: HeapLimitWatcher.nextCheckMs) harvests at once when
 * the use has climbed a step since the last poll, at most once per five times
 * the last poll's cost; a heap that sits near the limit without climbing gets
 * only the timed polls, paced as anywhere else. A near poll forces no GC: V8
 * is collecting often enough by then.
 */
import {
  ExternalSampler,
  HeapLimitWatcher,
  HeapSampler,
  LIMIT_CHECK_MS,
  monotonicUs,
  type HeapSamplerKind,
} from './heap/index';
import type { HeapOptions } from '../settings/index';
import { encodeHeapFrame, type PollMemory } from '../wire/index';

/**
 * Timed polls take about 4/this of the process's CPU (a quarter of each measured; see above). Not fewer: a program
 * hoarding to V8's abort is saved by its timed polls (V8 gave up at ~80 % of a 64 MB limit by the old measure,
 * under the near-limit ratio; test/record/program/heap/heap-record.test.ts lost two thirds of the hoard at 200).
 */
export const POLL_CPU_SHARE = 50;
/** ...or of the wall time, when that allows more (a mostly idle program). */
export const POLL_WALL_SHARE = 200;

/** ...or when the heap has used up this share of the headroom under its limit it had at the last poll. */
export const POLL_HEADROOM_SHARE = 0.25;

/** The CPU and wall multiples of V8's API sampler, whose polls force no GC: a poll takes at most ~5 % of either. */
export const NATIVE_POLL_SHARE = 20;

/** How many times a poll's own CPU and wall time must pass before the next timed poll. */
export interface PollShares {
  cpu: number;
  wall: number;
}

export const INSPECTOR_POLL_SHARES: PollShares = { cpu: POLL_CPU_SHARE, wall: POLL_WALL_SHARE };
export const NATIVE_POLL_SHARES: PollShares = { cpu: NATIVE_POLL_SHARE, wall: NATIVE_POLL_SHARE };

/** The CPU and wall time of the last poll and of what came after it (µs); the old generation's use of its limit. */
export interface PollPace {
  cpuSinceUs: number;
  lastCpuUs: number;
  wallSinceUs: number;
  lastWallUs: number;
  /** Used over limit, 0..1, now and just after the last poll. */
  heapUsage: number;
  heapUsageAtLastPoll: number;
}

/** Whether a timed poll is due (see POLL_CPU_SHARE, POLL_WALL_SHARE, POLL_HEADROOM_SHARE, NATIVE_POLL_SHARE). */
export function timedPollDue(pace: PollPace, shares: PollShares = INSPECTOR_POLL_SHARES): boolean {
  const headroom = 1 - pace.heapUsageAtLastPoll;
  const headroomUsed = pace.heapUsage - pace.heapUsageAtLastPoll >= headroom * POLL_HEADROOM_SHARE;
  return (
    pace.cpuSinceUs >= pace.lastCpuUs * shares.cpu || pace.wallSinceUs >= pace.lastWallUs * shares.wall || headroomUsed
  );
}

function wallUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function processCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export class HeapRecorder {
  private readonly sampler: HeapSampler;
  /** The Buffer and ArrayBuffer stores' sampler (external.ts); undefined with `buffers: false`. */
  private readonly external: ExternalSampler | undefined;
  private readonly watcher: HeapLimitWatcher;
  private disposed = false;
  /** Set while drive()'s timer harvests: those polls are paced (unless options.polls is 'harvest'). */
  private timed = false;
  /** Set while a near-limit check harvests: not paced, no forced GC. */
  private urgent = false;
  private readonly paced: boolean;
  private readonly shares: PollShares;
  private lastPollCpuUs = 0;
  private lastPollWallUs = 0;
  private cpuAtLastPollUs = processCpuUs();
  private wallAtLastPollUs = wallUs();
  private heapUsageAtLastPoll = 0;
  private oldUsageAtLastPoll = 0;
  private lastMemory: PollMemory | undefined;
  polls = 0;
  /** Harvests a near-limit check started. */
  nearPolls = 0;
  /** Timed polls left out by the pacing. */
  skipped = 0;
  /** Allocation and free events sent. */
  events = 0;

  constructor(
    options: Required<HeapOptions>,
    /** Takes one whole heap frame (length word included). */
    private readonly send: (frame: Buffer) => void,
    private readonly threadId: number,
  ) {
    this.sampler = new HeapSampler(options.intervalBytes, undefined, options.shortLived);
    this.watcher = new HeapLimitWatcher(options.nearLimitRatio);
    if (options.buffers) this.external = new ExternalSampler(options.intervalBytes, this.sampler.numbers);
    this.paced = options.polls === 'paced';
    this.shares = this.sampler.kind === 'native' ? NATIVE_POLL_SHARES : INSPECTOR_POLL_SHARES;
  }

  /** Which path polls (probe.ts). */
  get samplerKind(): HeapSamplerKind {
    return this.sampler.kind;
  }

  poll(): void {
    if (this.disposed) return;
    if (this.timed && this.paced && !this.urgent) {
      const pace = {
        cpuSinceUs: processCpuUs() - this.cpuAtLastPollUs,
        lastCpuUs: this.lastPollCpuUs,
        wallSinceUs: wallUs() - this.wallAtLastPollUs,
        lastWallUs: this.lastPollWallUs,
        heapUsage: this.watcher.usage(),
        heapUsageAtLastPoll: this.heapUsageAtLastPoll,
      };
      if (!timedPollDue(pace, this.shares)) {
        this.skipped++;
        this.sendMemoryAlone();
        return;
      }
    }
    try {
      const cpuBefore = processCpuUs();
      const wallBefore = wallUs();
      // A timed (or near-limit) poll on the native sampler leaves the garbage to V8; one asked for directly sees
      // exactly the live.
      const poll = this.sampler.poll(!this.timed);
      this.cpuAtLastPollUs = processCpuUs();
      this.wallAtLastPollUs = wallUs();
      this.lastPollCpuUs = this.cpuAtLastPollUs - cpuBefore;
      this.lastPollWallUs = this.wallAtLastPollUs - wallBefore;
      const { usage, oldUsage } = this.watcher.check();
      this.heapUsageAtLastPoll = usage;
      this.oldUsageAtLastPoll = oldUsage;
      if (poll === undefined) return;
      this.polls++;
      const memory = this.memoryChange();
      const external = this.external?.take();
      const externalEvents =
        external === undefined ? 0 : external.ordinals.length + external.freed.length + external.collected.length;
      if (
        poll.ordinals.length === 0 &&
        poll.freed.length === 0 &&
        poll.shortLived === 0 &&
        memory === undefined &&
        externalEvents === 0
      )
        return;
      this.events += poll.ordinals.length + poll.freed.length + (poll.collected?.length ?? 0) + externalEvents;
      this.send(encodeHeapFrame(poll, this.threadId, this.sampler.numbers, memory, external));
    } catch (err) {
      this.dispose();
      process.emitWarning(`profpack: heap recording stopped: ${(err as Error).message}`);
    }
  }

  /**
   * The isolate's external memory now, when it differs from what the last frame carried (an idle program sends no
   * frames). process.memoryUsage() takes ~10 µs (it reads the RSS too); Node counts `external` per isolate, so a
   * worker's is its own.
   */
  private memoryChange(): PollMemory | undefined {
    const { external, arrayBuffers } = process.memoryUsage();
    const last = this.lastMemory;
    if (last !== undefined && last.externalBytes === external && last.arrayBuffersBytes === arrayBuffers) return;
    return (this.lastMemory = { externalBytes: external, arrayBuffersBytes: arrayBuffers });
  }

  /**
   * A harvest the pacing left without a poll still samples the external memory (cheap, and a line with a point per
   * harvest shows its growth): a frame of no events.
   */
  private sendMemoryAlone(): void {
    try {
      const memory = this.memoryChange();
      if (memory === undefined) return;
      const timeUs = monotonicUs();
      const none = new Uint32Array(0);
      const poll = { intervalBytes: this.sampler.intervalBytes, timeUs, sinceUs: timeUs, costMs: 0, shortLived: 0 };
      const empty = { ...poll, ordinals: none, sizes: none, stackIds: none, freed: none };
      this.send(encodeHeapFrame(empty, this.threadId, this.sampler.numbers, memory));
    } catch (err) {
      this.dispose();
      process.emitWarning(`profpack: heap recording stopped: ${(err as Error).message}`);
    }
  }

  /** Whether a check that found this use near the limit harvests now (limit.ts, nearPollDue). */
  private nearPollDue(usage: number, oldUsage: number): boolean {
    const use = { now: usage, atLastPoll: this.heapUsageAtLastPoll };
    const climb = { now: oldUsage, atLastPoll: this.oldUsageAtLastPoll };
    const sinceMs = (wallUs() - this.wallAtLastPollUs) / 1000;
    return HeapLimitWatcher.nearPollDue(use, climb, sinceMs, this.lastPollWallUs / 1000);
  }

  /**
   * Runs `harvest` every `normalMs`, and at once when a check (every
   * LIMIT_CHECK_MS to a second: nextCheckMs) finds the heap near its limit and climbing (nearPollDue).
   * Returns the function that stops both timers. The timers never keep the program alive.
   */
  drive(harvest: () => void, normalMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const run = (urgent: boolean): void => {
      this.timed = true;
      this.urgent = urgent;
      try {
        harvest();
      } finally {
        this.timed = false;
        this.urgent = false;
      }
    };
    const schedule = (): void => {
      timer = setTimeout(() => {
        run(false);
        if (!stopped) schedule();
      }, normalMs);
      timer.unref();
    };
    let watch: NodeJS.Timeout | undefined;
    const check = (): void => {
      const { near, usage, oldUsage } = this.watcher.check();
      if (near && this.nearPollDue(usage, oldUsage)) {
        clearTimeout(timer);
        this.nearPolls++;
        run(true);
        if (!stopped) schedule();
      }
      if (!stopped) watchIn(this.watcher.nextCheckMs(usage));
    };
    const watchIn = (ms: number): void => {
      watch = setTimeout(check, ms);
      watch.unref();
    };
    watchIn(LIMIT_CHECK_MS);
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(watch);
    };
  }

  get nearLimit(): boolean {
    return this.watcher.isNear;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.sampler.dispose();
    this.external?.dispose();
  }
}

/**
 * A recording thread's harvests: `harvest` every `harvestMs` on an unref'd timer, or through the heap recorder's
 * drive() when the thread records its heap (near the heap limit harvests then come at once and faster, limit.ts).
 * Returns the function that stops them.
 */
export function driveHarvests(recorder: HeapRecorder | undefined, harvest: () => void, harvestMs: number): () => void {
  if (recorder !== undefined) return recorder.drive(harvest, harvestMs);
  const timer = setInterval(harvest, harvestMs);
  timer.unref();
  return () => clearInterval(timer);
}
