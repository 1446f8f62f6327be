/**
 * Heap events as the recorder hands them on: sampled allocations and the
 * frees that end their lives, one batch per poll, in typed columns (a poll of
 * a big heap holds thousands of events; one object per event would be the
 * recorder's own garbage). Stacks are ids in a HeapStacks table that only grows.
 */
import type { CpuProfileCallFrame } from '../../v8/index';
import { NO_HEAP_STACK } from '../../profile/index';
import type { HeapSinkAllocations, HeapSinkFrees, HeapSinkMemory } from '../../tachyon/index';
import { resized } from '../../typed-arrays';

/** A stack id for an object V8 gave no allocation node. */
export const NO_STACK = NO_HEAP_STACK;

/**
 * Sampled objects first seen at a poll: allocated after the previous poll (`sinceUs`), at or before `timeUs`.
 * lib/tachyon's file sink takes it as it is (HeapSinkAllocations); `stacks` is shared by all batches of a recording.
 */
export interface HeapAllocationBatch extends HeapSinkAllocations {
  stacks: HeapStacks;
}

/** Objects present at the previous poll and gone at this one: freed in between. */
export type HeapFreeBatch = HeapSinkFrees;

/** A thread's external memory at a poll: what V8's sampler does not see (Buffer and ArrayBuffer backing stores). */
export type HeapMemorySample = HeapSinkMemory;

/** What a heap recording starts with. */
export interface HeapRecordingInfo {
  /**
   * V8's mean sampling interval, bytes: an object of `size` bytes is sampled with probability
   * 1 − exp(−size / intervalBytes).
   */
  intervalBytes: number;
}

/**
 * Where heap events go (the writer process's file writer, a test's collector).
 * Batches of one thread arrive in poll order; a batch's arrays belong to the sink.
 */
export interface HeapEventSink {
  begin?(info: HeapRecordingInfo): void;
  allocations(batch: HeapAllocationBatch): void;
  frees(batch: HeapFreeBatch): void;
  /** After the poll's batches (senders from before it send none). */
  memory?(sample: HeapMemorySample): void;
}

/**
 * Allocation stacks as a tree: stack `id` is frame `frameOf(id)` called from
 * stack `parentOf(id)` (-1: an outermost frame). Frames are numbers into
 * `callFrames`, each call frame once.
 */
export class HeapStacks {
  readonly callFrames: CpuProfileCallFrame[] = [];
  private parents = new Int32Array(64);
  private frames = new Uint32Array(64);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds stack (parent, frame) as the next id; the caller interns. */
  add(parent: number, frame: number): number {
    if (this.count === this.parents.length) {
      this.parents = resized(this.parents, this.count * 2);
      this.frames = resized(this.frames, this.count * 2);
    }
    this.parents[this.count] = parent;
    this.frames[this.count] = frame;
    return this.count++;
  }

  parentOf(id: number): number {
    return this.parents[id]!;
  }

  frameOf(id: number): number {
    return this.frames[id]!;
  }

  /** The stack's call frames, innermost first. */
  callFramesOf(id: number): CpuProfileCallFrame[] {
    const out: CpuProfileCallFrame[] = [];
    for (let s = id, steps = 0; s >= 0 && s < this.count && steps <= this.count; s = this.parents[s]!, steps++) {
      const cf = this.callFrames[this.frames[s]!];
      if (cf !== undefined) out.push(cf);
    }
    return out;
  }
}
