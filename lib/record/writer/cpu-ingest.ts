/**
 * Turns harvests, as WireChunks (lib/record/wire: samples already in time order, each call frame numbered once by
 * its sender), into sink writes: each numbered frame interned once, one writeStack per sample, innermost first.
 */
import { frameFromV8, statusForV8Leaf, type CpuProfileCallFrame } from '../../v8/index';
import { NodeStatus, type Frame } from '../../profile/index';
import type { TickSink } from './tachyon-sink';
import { ErrorCode, ProfpackError } from '../../errors';
import type { WireChunk } from '../wire/index';

/** One sender's chunks into a sink (a writer has one sender: its pipe, or the recording beside it). */
export class ChunkIngester {
  /** The call frames the sender has numbered so far. */
  private readonly callFrames: CpuProfileCallFrame[] = [];
  /** Sink frame id by frame number, for the current sink (a rotation starts a new frame table). */
  private sinkIds: number[] = [];
  /** Sink frame id by frame number and hot line (the frame at a line V8's positionTicks name). */
  private lineSinkIds = new Map<number, Map<number, number>>();
  samples = 0;
  firstTimeUs: bigint | undefined;
  lastTimeUs: bigint | undefined;

  /**
   * `clockOffsetUs` is added to every sample time written (epochOffsetUs() for a file recording);
   * `mapFrame` turns each frame into the one written (source maps: lib/sourcemap).
   */
  constructor(
    private sink: TickSink,
    private readonly clockOffsetUs = 0n,
    private readonly mapFrame: (frame: Frame) => Frame = (frame) => frame,
  ) {}

  /**
   * Goes on into another sink (the next file of a rotating recording): its frame table starts empty and the span
   * starts afresh; the sender's frame numbers go on.
   */
  retarget(sink: TickSink): void {
    this.sink = sink;
    this.sinkIds = [];
    this.lineSinkIds = new Map();
    this.firstTimeUs = undefined;
    this.lastTimeUs = undefined;
  }

  /** Writes one chunk's samples for a thread, in the order they come; returns how many were written. */
  ingest(chunk: WireChunk, threadId: bigint, isMainThread: boolean): number {
    for (const cf of chunk.newFrames) this.callFrames.push(cf);
    const { parents, frames: frameNumbers } = chunk;
    const nodeCount = parents.length;
    const sinkId = (node: number): number => {
      const n = frameNumbers[node]!;
      let id = this.sinkIds[n];
      if (id === undefined) {
        const cf = this.callFrames[n];
        if (cf === undefined)
          throw new ProfpackError(`recording chunk: node ${node} names frame ${n}, which was never sent`, {
            code: ErrorCode.RECORD_FAILED,
            expected: `a frame number below ${this.callFrames.length}`,
          });
        this.sinkIds[n] = id = this.sink.internFrame(this.mapFrame(frameFromV8(cf)));
      }
      return id;
    };
    /** The leaf's frame at a hot line: the function's frame with that line and no column. */
    const lineSinkId = (node: number, line: number): number => {
      const n = frameNumbers[node]!;
      let byLine = this.lineSinkIds.get(n);
      if (byLine === undefined) this.lineSinkIds.set(n, (byLine = new Map()));
      let id = byLine.get(line);
      if (id === undefined) {
        sinkId(node); // checks the frame was sent
        byLine.set(
          line,
          (id = this.sink.internFrame(
            this.mapFrame({ ...frameFromV8(this.callFrames[n]!), lineno: line, column: null }),
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
      const cf = frames.length > 0 ? this.callFrames[frameNumbers[leaf]!] : undefined;
      let status = statusForV8Leaf(cf?.functionName, cf?.url);
      if (isMainThread) status |= NodeStatus.MainThread;
      hit = { frames: Uint32Array.from(frames), status };
      if (line > 0) lineStacks.set(`${leaf}:${line}`, hit);
      else stacks.set(leaf, hit);
      return hit;
    };
    const { samples, timeDeltas, lines } = chunk;
    let time = BigInt(chunk.startTime);
    for (let i = 0; i < samples.length; i++) {
      time += BigInt(timeDeltas[i] ?? 0);
      const t = time + this.clockOffsetUs;
      const { frames, status } = stackOf(samples[i]!, lines?.[i] ?? 0);
      this.sink.writeStack(threadId, 0, t, status, frames);
      if (this.firstTimeUs === undefined || t < this.firstTimeUs) this.firstTimeUs = t;
      if (this.lastTimeUs === undefined || t > this.lastTimeUs) this.lastTimeUs = t;
    }
    this.samples += samples.length;
    return samples.length;
  }
}
