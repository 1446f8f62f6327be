/**
 * How replay() hands a version-1 run's samples to a collector: CPython's
 * stackFrames objects (cached per thread and stack, so a recurring stack costs
 * no allocation) and the timestamps, as a fresh bigint[] per call (CPython's
 * shape) or as a BigUint64Array view of the decoder's buffer ('typed').
 */
import type { Frame } from './tables';
import { NodeCache, type ReplayRun, type RunVisitor } from './replay';
import {
  MAX_TIMESTAMPS_PER_COLLECT,
  type Collector,
  type InterpreterInfo,
  type ThreadInfo,
  type TypedCollector,
} from './types';

/** Entries of the cache of recent stackFrames (small, as NodeCache in replay.ts: entries survive scavenges). */
const WRAP_CACHE_SIZE = 1 << 6;

const NO_FRAMES: readonly Frame[] = [];

/** The stackFrames of (thread, stack node, status), reused while they recur. */
class StackFramesCache {
  private nodes = new NodeCache();
  // The last stackFrames handed out per thread, reused while stack and status stay the same.
  private lastNode = new Int32Array(16).fill(-1);
  private lastStatus = new Int32Array(16);
  private readonly lastStackFrames: (readonly InterpreterInfo[] | undefined)[] = [];
  // Their frames: a new stack of the thread is built from them (ReplayRun.framesFrom).
  private readonly lastFrames: (readonly Frame[] | undefined)[] = [];
  // stackFrames of recent (node, thread, status) triples.
  private readonly wrapNode = new Int32Array(WRAP_CACHE_SIZE).fill(-1);
  private readonly wrapThread = new Int32Array(WRAP_CACHE_SIZE);
  private readonly wrapStatus = new Int32Array(WRAP_CACHE_SIZE);
  private readonly wrapValue = new Array<readonly InterpreterInfo[] | undefined>(WRAP_CACHE_SIZE).fill(undefined);

  constructor(private readonly run: ReplayRun) {}

  /** Node ids restarted: every entry is void. */
  reset(): void {
    this.nodes = new NodeCache();
    this.wrapNode.fill(-1);
    this.lastNode.fill(-1);
  }

  /** `shared`: the bottom frames of the thread's previous stack this one keeps (ReplayRun.framesFrom). */
  private framesOf(t: number, node: number, shared: number): readonly Frame[] {
    const prevNode = this.lastNode[t]!;
    // The same stack in another status: the same frames.
    if (prevNode === node) return this.lastFrames[t]!;
    const cache = this.nodes;
    const seen = cache.seen(node);
    let f = cache.get(node) as readonly Frame[] | undefined;
    if (f === undefined) {
      // No previous stack since the node ids (re)started: walk to the root.
      f =
        prevNode < 0 ? this.run.framesFrom(node, 0, NO_FRAMES) : this.run.framesFrom(node, shared, this.lastFrames[t]!);
      cache.offer(node, f, seen);
    }
    return f;
  }

  get(t: number, node: number, status: number, shared: number): readonly InterpreterInfo[] {
    if (t >= this.lastNode.length) {
      const grownNode = new Int32Array(this.lastNode.length * 2 + t).fill(-1);
      grownNode.set(this.lastNode);
      this.lastNode = grownNode;
      const grownStatus = new Int32Array(grownNode.length);
      grownStatus.set(this.lastStatus);
      this.lastStatus = grownStatus;
    }
    if (this.lastNode[t] === node && this.lastStatus[t] === status) return this.lastStackFrames[t]!;
    const slot = (node ^ (t << 7) ^ (status << 3)) & (WRAP_CACHE_SIZE - 1);
    let sf: readonly InterpreterInfo[];
    if (this.wrapNode[slot] === node && this.wrapThread[slot] === t && this.wrapStatus[slot] === status)
      sf = this.wrapValue[slot]!;
    else {
      // Not frozen (Object.freeze costs more than the whole sample): read-only by contract.
      const thread: ThreadInfo = {
        threadId: this.run.threadIds[t]!,
        status,
        frameInfo: this.framesOf(t, node, shared),
      };
      sf = [{ interpreterId: this.run.interpreterIds[t]!, threads: [thread] }];
      this.wrapNode[slot] = node;
      this.wrapThread[slot] = t;
      this.wrapStatus[slot] = status;
      this.wrapValue[slot] = sf;
    }
    this.lastNode[t] = node;
    this.lastStatus[t] = status;
    this.lastStackFrames[t] = sf;
    this.lastFrames[t] = sf[0]!.threads[0]!.frameInfo;
    return sf;
  }
}

type Progress = RunVisitor['progress'];

/**
 * ts[pos .. pos + n) as a new bigint[]: a loop into an array made at its size is the cheapest V8 offers
 * (~4-5 ns a bigint; Array.from, spread and N-API's napi_create_bigint_uint64 cost 20-80 ns, bench/RESULTS.md).
 */
function bigints(ts: BigUint64Array, pos: number, n: number): bigint[] {
  const out = new Array<bigint>(n);
  for (let k = 0; k < n; k++) out[k] = ts[pos + k]!;
  return out;
}

/** How one shape hands ts[pos .. pos + n) of one stack to the collector. */
type Deliver = (stackFrames: readonly InterpreterInfo[], ts: BigUint64Array, pos: number, n: number) => void;

/**
 * One collect() call per batch of samples of one stack. A REPEAT batch cut by a full buffer or the window end is
 * gathered (one reused buffer, copied a part at a time) until its last part, or until MAX_TIMESTAMPS_PER_COLLECT
 * timestamps (a longer run goes out in several calls).
 */
function delivery(run: ReplayRun, progress: Progress, deliver: Deliver): RunVisitor {
  const stacks = new StackFramesCache(run);
  let gathered: BigUint64Array | null = null; // allocated on the first cut batch only
  let pending = 0;
  const flush = (t: number, node: number, status: number, shared: number): void => {
    const n = pending;
    pending = 0;
    deliver(stacks.get(t, node, status, shared), gathered!, 0, n);
    run.delivered += n;
  };
  return {
    samples(t, node, status, ts, tsPos, count, part, shared) {
      if (!part && pending === 0 && count <= MAX_TIMESTAMPS_PER_COLLECT) {
        deliver(stacks.get(t, node, status, shared), ts, tsPos, count);
        run.delivered += count;
        return;
      }
      gathered ??= new BigUint64Array(MAX_TIMESTAMPS_PER_COLLECT);
      for (let k = 0; k < count;) {
        const n = Math.min(count - k, MAX_TIMESTAMPS_PER_COLLECT - pending);
        gathered.set(ts.subarray(tsPos + k, tsPos + k + n), pending);
        pending += n;
        k += n;
        if (pending === MAX_TIMESTAMPS_PER_COLLECT) flush(t, node, status, shared);
      }
      if (!part && pending > 0) flush(t, node, status, shared);
    },
    progress,
    reset: () => stacks.reset(),
  };
}

/** CPython's shape: a new bigint[] per collect() call, the caller's to keep. */
export function arrayDelivery(run: ReplayRun, collector: Collector, progress: Progress): RunVisitor {
  return delivery(run, progress, (stackFrames, ts, pos, n) => collector.collect(stackFrames, bigints(ts, pos, n)));
}

/** 'typed': a view of the decoder's timestamp buffer (or of the gathering buffer) per call, valid only during it. */
export function typedDelivery(run: ReplayRun, collector: TypedCollector, progress: Progress): RunVisitor {
  return delivery(run, progress, (stackFrames, ts, pos, n) =>
    collector.collect(stackFrames, ts.subarray(pos, pos + n)),
  );
}
