/**
 * The replay as stack nodes, for readers that intern stacks themselves (the
 * profile model's Tachyon adapter): each decoder event is one call with the
 * stack's node in the reader's trie (parent node, frame index per node), so no
 * frame list is built per sample and no bigint per timestamp. A version-1
 * REPEAT run is one call with its count; version 2 delivers one sample a call.
 */
import type { ReplayRun, RunVisitor } from './replay';
import { StackTable } from '../../profile/index';
import type { V2Profile } from './v2/index';
import { checkFrameIndex, walk, type V2Cursor } from './v2/index';
import type { Frame } from './tables';

/** The stacks and threads a node replay names. */
export interface StackNodes {
  /** The caller's node (0 = the empty stack). */
  parent(node: number): number;
  /** The frame index of a node, checked against the frame table as CPython checks it. */
  frame(node: number): number;
  threadId(t: number): bigint;
  interpreterId(t: number): number;
}

/** A version-1 run's own tick times, valid during the `samples` call that hands it out (one object, reused). */
export interface RunTimes {
  /** µs of the run's tick k (0 <= k < count; exact below 2^53): CPython stores a time per tick. */
  at(k: number): number;
}

export interface NodeVisitor {
  /** Called once, before any sample. */
  start(nodes: StackNodes): void;
  /**
   * `count` samples of thread `t` (first-seen order), stack `node`, times firstUs..lastUs (µs; exact below 2^53);
   * `times` gives every tick's time of a version-1 REPEAT run (count > 1).
   */
  samples(
    t: number,
    node: number,
    status: number,
    firstUs: number,
    lastUs: number,
    count: number,
    times?: RunTimes,
  ): void;
  /** Node ids restarted (the version-1 decoder rebuilt its trie): whatever is keyed by node is void. */
  reset(): void;
}

/** A node replay in steps: next() decodes a window (version 1) or up to 16 Ki samples (version 2); true at the end. */
export interface NodeReplay {
  next(): boolean;
}

const V2_STEP = 16384;

/** µs of a u64 timestamp read as two u32 halves (little-endian host). */
function timeAt(halves: Uint32Array, i: number): number {
  return halves[2 * i]! + halves[2 * i + 1]! * 4294967296;
}

export function replayNodesV1(
  run: ReplayRun,
  frames: readonly (Frame | null)[],
  visitor: NodeVisitor,
  check: (f: number) => void,
): NodeReplay {
  visitor.start({
    parent: (n) => run.nodeParent[n]!,
    frame: (n) => {
      const f = run.nodeFrame[n]!;
      if (frames[f] == null) check(f);
      return f;
    },
    threadId: (t) => run.threadIds[t]!,
    interpreterId: (t) => run.interpreterIds[t]!,
  });
  let buffer: BigUint64Array | null = null;
  let halves: Uint32Array = new Uint32Array(0);
  let delivered = 0;
  let runAt = 0;
  const times: RunTimes = { at: (k) => timeAt(halves, runAt + k) };
  const runVisitor: RunVisitor = {
    samples(t, node, status, ts, tsPos, count) {
      if (ts !== buffer) {
        buffer = ts;
        halves = new Uint32Array(ts.buffer, ts.byteOffset, ts.length * 2);
      }
      runAt = tsPos;
      visitor.samples(t, node, status, timeAt(halves, tsPos), timeAt(halves, tsPos + count - 1), count, times);
      delivered += count;
      run.delivered = delivered;
    },
    progress() {},
    reset: () => visitor.reset(),
  };
  return { next: () => run.next(runVisitor) };
}

/** Version 2: the region's stacks interned into a trie as they come (outermost frame first). */
export function replayNodesV2(profile: V2Profile, frames: readonly (Frame | null)[], visitor: NodeVisitor): NodeReplay {
  const trie = new StackTable();
  let cursor: V2Cursor | null = null;
  let delivered = 0;
  visitor.start({
    parent: (n) => trie.parents[n]!,
    frame: (n) => {
      const f = trie.frameIds[n]!;
      checkFrameIndex(frames, f, delivered);
      return f;
    },
    threadId: (t) => cursor!.c.threadIds[t]!,
    interpreterId: (t) => cursor!.c.interpreterIds[t]!,
  });
  const samples = walk(profile);
  return {
    next() {
      for (let k = 0; k < V2_STEP; k++) {
        const next = samples.next();
        if (next.done) return true;
        cursor = next.value;
        const { c, i, from, depth } = cursor;
        delivered = cursor.delivered;
        const stack = c.frames;
        let node = 0;
        for (let f = from + depth - 1; f >= from; f--) node = trie.push(node, stack[f]!);
        const us = Number(c.timestamps[i]!);
        visitor.samples(cursor.t, node, cursor.status, us, us, 1);
      }
      return false;
    },
  };
}
