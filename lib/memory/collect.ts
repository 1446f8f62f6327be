/**
 * HeapTraceCollector: a heap recording kept in memory as a HeapTraceSource.
 * It is a heap event sink (lib/record/wire's HeapEventSink, matched by shape
 * so this folder does not depend on the recorder): the recorder's batches
 * come in with their V8 call-frame stacks, and go out over the model's
 * tables. Memory grows with the events held, so it serves tests and short
 * recordings; files are the long-lived form.
 */
import { frameFromV8, type CpuProfileCallFrame } from '../v8/index';
import { FrameTable, StackTable, ThreadTable, type Frame, type ThreadRef } from '../profile/index';
import {
  NO_HEAP_STACK,
  type ExternalMemorySample,
  type HeapEventBatch,
  type HeapTraceMeta,
  type HeapTraceSource,
} from '../profile/index';

/** The recorder's stack tree, as much of it as the collector reads. */
interface RecorderStacks {
  readonly size: number;
  readonly callFrames: readonly CpuProfileCallFrame[];
  parentOf(id: number): number;
  frameOf(id: number): number;
}

interface RecorderBatch {
  threadId: number;
  timeUs: number;
  sinceUs: number;
  ordinals: Uint32Array;
  external?: boolean;
}

interface RecorderAllocations extends RecorderBatch {
  sizes: Uint32Array;
  stackIds: Uint32Array;
  shortLived: number;
  stacks: RecorderStacks;
}

export class HeapTraceCollector implements HeapTraceSource {
  private readonly frameTable = new FrameTable();
  private readonly threadTable = new ThreadTable();
  readonly stacks = new StackTable();
  private readonly held: HeapEventBatch[] = [];
  private readonly memorySeries: ExternalMemorySample[] = [];
  /** Recorder stack id → model stack id (-1: not mapped yet). */
  private stackMap = new Int32Array(0);
  private intervalBytes = 0;
  private firstUs = Number.NaN;
  private lastUs = Number.NaN;

  get frames(): readonly Frame[] {
    return this.frameTable.list;
  }

  get threads(): readonly ThreadRef[] {
    return this.threadTable.list;
  }

  get meta(): HeapTraceMeta {
    const start = Number.isNaN(this.firstUs) ? 0 : this.firstUs;
    return {
      intervalBytes: this.intervalBytes,
      startTimeUs: start,
      durationUs: Number.isNaN(this.lastUs) ? 0 : this.lastUs - start,
    };
  }

  begin(info: { intervalBytes: number }): void {
    this.intervalBytes = info.intervalBytes;
  }

  allocations(batch: RecorderAllocations): void {
    const stackIds = new Uint32Array(batch.stackIds.length);
    for (let i = 0; i < stackIds.length; i++) stackIds[i] = this.modelStack(batch.stacks, batch.stackIds[i]!);
    this.span(batch);
    this.held.push({
      kind: 'alloc',
      thread: this.thread(batch.threadId),
      timeUs: batch.timeUs,
      sinceUs: batch.sinceUs,
      ordinals: batch.ordinals,
      sizes: batch.sizes,
      stackIds,
      shortLived: batch.shortLived,
      ...(batch.external === true ? { external: true } : {}),
    });
  }

  frees(batch: RecorderBatch): void {
    this.span(batch);
    this.held.push({
      kind: 'free',
      thread: this.thread(batch.threadId),
      timeUs: batch.timeUs,
      sinceUs: batch.sinceUs,
      ordinals: batch.ordinals,
      ...(batch.external === true ? { external: true } : {}),
    });
  }

  memory(sample: { threadId: number; timeUs: number; externalBytes: number; arrayBuffersBytes: number }): void {
    this.span({ ...sample, sinceUs: sample.timeUs, ordinals: new Uint32Array(0) });
    const { timeUs, externalBytes, arrayBuffersBytes } = sample;
    this.memorySeries.push({ thread: this.thread(sample.threadId), timeUs, externalBytes, arrayBuffersBytes });
  }

  *events(): Iterable<HeapEventBatch> {
    yield* this.held;
  }

  externalMemory(): ExternalMemorySample[] {
    return this.memorySeries.slice();
  }

  private span(batch: RecorderBatch): void {
    if (Number.isNaN(this.firstUs)) this.firstUs = batch.sinceUs;
    this.lastUs = Number.isNaN(this.lastUs) ? batch.timeUs : Math.max(this.lastUs, batch.timeUs);
  }

  private thread(threadId: number): number {
    return this.threadTable.intern(BigInt(threadId));
  }

  /**
   * The model stack of recorder stack `id`, mapping its not-yet-seen ancestors first (iteratively: stacks can be
   * deep).
   */
  private modelStack(stacks: RecorderStacks, id: number): number {
    if (id === NO_HEAP_STACK || id >= stacks.size) return NO_HEAP_STACK;
    if (this.stackMap.length < stacks.size) {
      const grown = new Int32Array(Math.max(stacks.size, this.stackMap.length * 2)).fill(-1);
      grown.set(this.stackMap);
      this.stackMap = grown;
    }
    const pending: number[] = [];
    for (let s = id; s >= 0 && this.stackMap[s] === -1; s = stacks.parentOf(s)) pending.push(s);
    for (let i = pending.length - 1; i >= 0; i--) {
      const s = pending[i]!;
      const parent = stacks.parentOf(s);
      const frame = this.frameTable.intern(frameFromV8(stacks.callFrames[stacks.frameOf(s)]!));
      this.stackMap[s] = this.stacks.push(parent < 0 ? 0 : this.stackMap[parent]!, frame);
    }
    return this.stackMap[id]!;
  }
}
