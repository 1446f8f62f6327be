/**
 * Turns V8 profile chunks (the DevTools Profiler.Profile objects a harvest
 * returns) into sink writes: frames interned once across chunks, one
 * writeStack per sample, innermost first.
 */
import { frameFromV8, statusForV8Leaf, type CpuProfile, type CpuProfileCallFrame } from '../../v8/index';
import { NodeStatus, type Frame } from '../../profile/index';
import type { ProfileSink } from './sink';
import { ErrorCode, ProfpackError } from '../../errors';
import { FrameNumbers, type WireProfile } from '../wire/index';

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

/** The call frames one sender numbered (wire FrameNumbers), and the sink's ids for them. */
export class FrameSpace {
  readonly callFrames: CpuProfileCallFrame[] = [];
  /** Sink frame id by number, for the sink of `generation` (a rotation starts a new frame table). */
  sinkIds: number[] = [];
  /** Sink frame id by frame number and hot line (the frame at a line V8's positionTicks name). */
  lineSinkIds = new Map<number, Map<number, number>>();
  generation = -1;
}

export class ChunkIngester {
  /** Chunks given as V8 profiles are numbered here, as a pipe's sender numbers them. */
  private readonly ownNumbers = new FrameNumbers();
  private readonly ownFrames = new FrameSpace();
  /** Bumped by retarget(): every space's sink ids are then stale. */
  private generation = 0;
  /** Per thread: the newest sample time written, to drop the samples two overlapping chunks share. */
  private readonly lastTime = new Map<bigint, bigint>();
  samples = 0;
  firstTimeUs: bigint | undefined;
  lastTimeUs: bigint | undefined;

  /**
   * `clockOffsetUs` is added to every sample time written (epochOffsetUs() for a file recording);
   * `mapFrame` turns each frame into the one written (source maps: lib/sourcemap).
   */
  constructor(
    private sink: ProfileSink,
    private readonly clockOffsetUs = 0n,
    private readonly mapFrame: (frame: Frame) => Frame = (frame) => frame,
  ) {}

  /**
   * Goes on into another sink (the next file of a rotating recording): its
   * frame table starts empty and the span starts afresh; the per-thread newest
   * time is kept, so a sample two overlapping harvests share is still written once.
   */
  retarget(sink: ProfileSink): void {
    this.sink = sink;
    this.generation++;
    this.firstTimeUs = undefined;
    this.lastTimeUs = undefined;
  }

  /** Writes one V8 profile chunk's samples for a thread; returns how many were written. */
  ingest(chunk: CpuProfile, threadId: bigint, isMainThread: boolean): number {
    return this.ingestWire(this.ownNumbers.encode(chunk), threadId, isMainThread, this.ownFrames);
  }

  /** The same for a chunk as it came over a pipe, whose frame numbers are `space`'s. */
  ingestWire(chunk: WireProfile, threadId: bigint, isMainThread: boolean, space: FrameSpace): number {
    for (const cf of chunk.newFrames) space.callFrames.push(cf);
    if (space.generation !== this.generation) {
      space.sinkIds = [];
      space.lineSinkIds = new Map();
      space.generation = this.generation;
    }
    const { parents, frames: frameNumbers } = chunk;
    const nodeCount = parents.length;
    const sinkId = (node: number): number => {
      const n = frameNumbers[node]!;
      let id = space.sinkIds[n];
      if (id === undefined) {
        const cf = space.callFrames[n];
        if (cf === undefined)
          throw new ProfpackError(`recording chunk: node ${node} names frame ${n}, which was never sent`, {
            code: ErrorCode.RECORD_FAILED,
            expected: `a frame number below ${space.callFrames.length}`,
          });
        space.sinkIds[n] = id = this.sink.internFrame(this.mapFrame(frameFromV8(cf)));
      }
      return id;
    };
    /** The leaf's frame at a hot line: the function's frame with that line and no column. */
    const lineSinkId = (node: number, line: number): number => {
      const n = frameNumbers[node]!;
      let byLine = space.lineSinkIds.get(n);
      if (byLine === undefined) space.lineSinkIds.set(n, (byLine = new Map()));
      let id = byLine.get(line);
      if (id === undefined) {
        sinkId(node); // checks the frame was sent
        byLine.set(
          line,
          (id = this.sink.internFrame(
            this.mapFrame({ ...frameFromV8(space.callFrames[n]!), lineno: line, column: null }),
          )),
        );
      }
      return id;
    };
    const stacks = new Map<number, { frames: Uint32Array; status: number }>();
    const lineStacks = new Map<string, { frames: Uint32Array; status: number }>();
    const stackOf = (leaf: number, line: number) => {
      let hit = line > 0 ? lineStacks.get(`${leaf}:${line}`) : stacks.get(leaf);
      if (hit !== undefined) return hit;
      const frames: number[] = [];
      // The node without a parent is "(root)": not a frame of the program.
      // At most one step per node: a tree with a cycle (a damaged message) ends.
      for (
        let cur = leaf, steps = 0;
        cur >= 0 && cur < nodeCount && parents[cur]! >= 0 && steps < nodeCount;
        cur = parents[cur]!, steps++
      ) {
        frames.push(cur === leaf && line > 0 ? lineSinkId(cur, line) : sinkId(cur));
      }
      const cf = frames.length > 0 ? space.callFrames[frameNumbers[leaf]!] : undefined;
      let status = statusForV8Leaf(cf?.functionName, cf?.url);
      if (isMainThread) status |= NodeStatus.MainThread;
      hit = { frames: Uint32Array.from(frames), status };
      if (line > 0) lineStacks.set(`${leaf}:${line}`, hit);
      else stacks.set(leaf, hit);
      return hit;
    };
    const after = this.lastTime.get(threadId);
    const { order, times } = newSamplesInOrder(chunk, after);
    const lines = chunk.lineTicks === undefined ? undefined : sampleLines(chunk, chunk.lineTicks);
    let written = 0;
    let newest = after;
    for (const i of order) {
      const t = times[i]! + this.clockOffsetUs;
      const { frames, status } = stackOf(chunk.samples[i]!, lines?.[i] ?? 0);
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
export function newSamplesInOrder(
  chunk: Pick<CpuProfile, 'samples' | 'timeDeltas' | 'startTime'>,
  after: bigint | undefined,
): { order: number[]; times: bigint[] } {
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

/**
 * A line for each sample of a chunk, from V8's positionTicks: V8 counts a
 * node's self ticks per line but does not say which tick was which, so the
 * node's samples, in time order, take its lines in the order V8 lists them,
 * each as many as it has ticks. Per line the counts are V8's own; only the
 * order within one node's samples of one harvest is a guess. Samples beyond
 * the ticks (or of a node without any) get 0: the function's own line.
 */
export function sampleLines(
  chunk: Pick<WireProfile, 'samples' | 'timeDeltas' | 'startTime'>,
  lineTicks: Record<number, number[]>,
): Uint32Array {
  const lines = new Uint32Array(chunk.samples.length);
  const cursor = new Map<number, { at: number; left: number }>();
  for (const i of newSamplesInOrder(chunk, undefined).order) {
    const node = chunk.samples[i]!;
    const ticks = lineTicks[node];
    if (ticks === undefined) continue;
    let c = cursor.get(node);
    if (c === undefined) cursor.set(node, (c = { at: 0, left: ticks[1] ?? 0 }));
    while (c.left <= 0 && c.at + 2 < ticks.length) {
      c.at += 2;
      c.left = ticks[c.at + 1] ?? 0;
    }
    if (c.left <= 0) continue;
    const line = ticks[c.at]!;
    c.left--;
    if (Number.isInteger(line) && line > 0) lines[i] = line;
  }
  return lines;
}
