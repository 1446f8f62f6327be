/**
 * Turns V8 profile chunks (the DevTools Profiler.Profile objects a harvest
 * returns) into sink writes: frames interned once across chunks, one
 * writeStack per sample, innermost first.
 */
import { frameFromV8, statusForV8Leaf, type CpuProfile, type CpuProfileCallFrame } from '../convert/cpuprofile';
import { NodeStatus, type ProfileSink } from '../convert/model';

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

export class ChunkIngester {
  private readonly frameIds = new Map<string, number>();
  /** Per thread: the newest sample time written, to drop the samples two overlapping chunks share. */
  private readonly lastTime = new Map<bigint, bigint>();
  samples = 0;
  firstTimeUs: bigint | undefined;
  lastTimeUs: bigint | undefined;

  /** `clockOffsetUs` is added to every sample time written (epochOffsetUs() for a file recording). */
  constructor(
    private readonly sink: ProfileSink,
    private readonly clockOffsetUs = 0n,
  ) {}

  private frameId(cf: CpuProfileCallFrame): number {
    const key = `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.sink.internFrame(frameFromV8(cf));
      this.frameIds.set(key, id);
    }
    return id;
  }

  /** Writes one chunk's samples for a thread; returns how many were written. */
  ingest(chunk: CpuProfile, threadId: bigint, isMainThread: boolean): number {
    const parent = new Map<number, number>();
    const byId = new Map<number, CpuProfileCallFrame>();
    for (const node of chunk.nodes) {
      byId.set(node.id, node.callFrame);
      for (const child of node.children ?? []) parent.set(child, node.id);
    }
    const stacks = new Map<number, { frames: Uint32Array; status: number }>();
    const stackOf = (id: number) => {
      let hit = stacks.get(id);
      if (hit !== undefined) return hit;
      const frames: number[] = [];
      let cur: number | undefined = id;
      // The node without a parent is "(root)": not a frame of the program.
      while (cur !== undefined && parent.has(cur)) {
        frames.push(this.frameId(byId.get(cur)!));
        cur = parent.get(cur);
      }
      const leaf = frames.length > 0 ? byId.get(id) : undefined;
      let status = statusForV8Leaf(leaf?.functionName, leaf?.url);
      if (isMainThread) status |= NodeStatus.MainThread;
      hit = { frames: Uint32Array.from(frames), status };
      stacks.set(id, hit);
      return hit;
    };
    const after = this.lastTime.get(threadId);
    const { order, times } = newSamplesInOrder(chunk, after);
    let written = 0;
    let newest = after;
    for (const i of order) {
      const t = times[i]! + this.clockOffsetUs;
      const { frames, status } = stackOf(chunk.samples[i]!);
      this.sink.writeStack(threadId, 0, t, status, frames);
      if (this.firstTimeUs === undefined || t < this.firstTimeUs) this.firstTimeUs = t;
      if (this.lastTimeUs === undefined || t > this.lastTimeUs) this.lastTimeUs = t;
      newest = times[i]!;
      written++;
    }
    if (newest !== undefined) this.lastTime.set(threadId, newest);
    this.samples += written;
    return written;
  }
}

/**
 * The samples of `chunk` newer than `after` (the newest time already written
 * for its thread), as indices in time order, with every sample's time.
 * V8 occasionally records a tick a few µs before the previous one (negative
 * timeDeltas; DevTools sorts them too), and two overlapping harvests share a
 * few ticks: both are settled here, so sender and writer count alike.
 */
export function newSamplesInOrder(chunk: CpuProfile, after: bigint | undefined): { order: number[]; times: bigint[] } {
  const samples = chunk.samples ?? [];
  const deltas = chunk.timeDeltas ?? [];
  const times = new Array<bigint>(samples.length);
  let time = BigInt(Math.round(chunk.startTime));
  for (let i = 0; i < samples.length; i++) {
    time += BigInt(Math.round(deltas[i] ?? 0));
    times[i] = time;
  }
  const order: number[] = [];
  for (let i = 0; i < times.length; i++) if (after === undefined || times[i]! > after) order.push(i);
  order.sort((a, b) => (times[a]! < times[b]! ? -1 : times[a]! > times[b]! ? 1 : a - b));
  return { order, times };
}
