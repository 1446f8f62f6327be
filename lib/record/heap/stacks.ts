/**
 * Numbers the allocation stacks of V8's sampling heap profile. V8 sends its
 * whole allocation tree at every poll; each call frame and each stack (a
 * frame called from a stack) gets a number once, so that a batch names
 * stacks by number and only the stacks first met cross the pipe.
 */
import { pathToFileURL } from 'node:url';
import { callFrameKey, type CpuProfileCallFrame } from '../../v8/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { HeapStacks } from './events';

/** A node of V8's sampling heap profile (HeapProfiler.SamplingHeapProfileNode). */
export interface SamplingHeapNode {
  id: number;
  callFrame: CpuProfileCallFrame;
  selfSize?: number;
  children?: SamplingHeapNode[];
}

/** Frames and stacks share one numeric key: parent stack (+1) above, frame below. */
const FRAME_KEY_SPAN = 2 ** 24;

export class HeapStackNumbers {
  readonly stacks = new HeapStacks();
  private readonly frameNumbers = new Map<string, number>();
  private readonly stackIds = new Map<number, number>();
  /** Stacks and frames below these have been handed on (takeNew()). */
  private sentStacks = 0;
  private sentFrames = 0;
  /** Per stack: 1 when a frame of it is the recorder's own code (its allocations are not the program's). */
  private ownStacks = new Uint8Array(64);
  private readonly ownFrames: boolean[] = [];
  private readonly ownPrefixes: string[];

  /** `ownDir`: the recorder's code; allocations with a frame in it are left out. */
  constructor(ownDir?: string) {
    this.ownPrefixes = ownDir === undefined ? [] : [ownDir, pathToFileURL(ownDir).href];
  }

  /** Whether an allocation with this stack was the recorder's own. */
  isOwn(stack: number): boolean {
    return stack >= 0 && this.ownStacks[stack] === 1;
  }

  private frameNumber(cf: CpuProfileCallFrame): number {
    const key = callFrameKey(cf);
    let n = this.frameNumbers.get(key);
    if (n === undefined) {
      n = this.stacks.callFrames.length;
      if (n >= FRAME_KEY_SPAN)
        throw new ProfpackError(`heap recording: more than ${FRAME_KEY_SPAN} distinct call frames`, {
          code: ErrorCode.RECORD_FAILED,
        });
      this.frameNumbers.set(key, n);
      this.stacks.callFrames.push({
        functionName: cf.functionName,
        scriptId: cf.scriptId,
        url: cf.url,
        lineNumber: cf.lineNumber,
        columnNumber: cf.columnNumber,
      });
      this.ownFrames.push(this.ownPrefixes.some((p) => typeof cf.url === 'string' && cf.url.startsWith(p)));
    }
    return n;
  }

  private stackId(parent: number, frame: number): number {
    const key = (parent + 1) * FRAME_KEY_SPAN + frame;
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stacks.add(parent, frame);
      this.stackIds.set(key, id);
      if (id >= this.ownStacks.length) {
        const grown = new Uint8Array(this.ownStacks.length * 2);
        grown.set(this.ownStacks);
        this.ownStacks = grown;
      }
      this.ownStacks[id] = this.isOwn(parent) || this.ownFrames[frame] === true ? 1 : 0;
    }
    return id;
  }

  /**
   * Each node's stack id (by V8 node id). The head is V8's "(root)", not a
   * frame of the program: its stack is -1, and its children are outermost frames.
   */
  number(head: SamplingHeapNode): Map<number, number> {
    const byNode = new Map<number, number>([[head.id, -1]]);
    const pending: SamplingHeapNode[] = [head];
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      const own = byNode.get(node.id)!;
      for (const child of node.children ?? []) {
        byNode.set(child.id, this.stackId(own, this.frameNumber(child.callFrame)));
        pending.push(child);
      }
    }
    return byNode;
  }

  /** The frames and stacks numbered since the last call (what the pipe has not carried yet). */
  takeNew(): { frames: CpuProfileCallFrame[]; stackParents: Int32Array; stackFrames: Uint32Array } {
    const frames = this.stacks.callFrames.slice(this.sentFrames);
    const count = this.stacks.size - this.sentStacks;
    const stackParents = new Int32Array(count);
    const stackFrames = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
      stackParents[i] = this.stacks.parentOf(this.sentStacks + i);
      stackFrames[i] = this.stacks.frameOf(this.sentStacks + i);
    }
    this.sentFrames = this.stacks.callFrames.length;
    this.sentStacks = this.stacks.size;
    return { frames, stackParents, stackFrames };
  }
}
