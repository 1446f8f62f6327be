/**
 * The data a flame graph page carries: a stack tree (one node per distinct
 * path thread → outermost frame → … → innermost, merged by function as
 * `top --by function` keys them) and, per time bucket, how many samples
 * ended at each node with each status class. A time range re-aggregates in
 * the page by adding up its buckets' entries and summing up the tree once —
 * the page never holds one record per sample.
 *
 * Size is bounded: at most MAX_BUCKETS buckets, and the bucket width doubles
 * (adjacent buckets merge) while the entries exceed MAX_ENTRIES. The tree
 * itself has one node per distinct function path.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { NodeStatus, threadKey, type Frame, type ProfileSource } from '../convert/model';

/** Status classes the timeline colours: V8's GC bit first, then ON_CPU, else idle/off-CPU. */
export const StatusClass = { OnCpu: 0, Gc: 1, Idle: 2 } as const;
export const STATUS_CLASSES = 3;

export function statusClass(status: number): number {
  if ((status & NodeStatus.InGc) !== 0) return StatusClass.Gc;
  return (status & NodeStatus.OnCpu) !== 0 ? StatusClass.OnCpu : StatusClass.Idle;
}

export const MAX_BUCKETS = 400;
export const MAX_ENTRIES = 400_000;

/** A function as the page shows it; `thread` marks the per-thread root nodes. */
export interface ViewFunc {
  name: string;
  file: string;
  /** Lowest line sampled in the function (its start, for V8's frames), or null. */
  line: number | null;
  /** Set on thread nodes: the thread key ("ID" or "ID@INTERPRETER"). */
  thread?: string;
}

export interface ViewData {
  /** µs since the epoch as a decimal string (u64), the origin of every ms offset. */
  startTimeUs: string;
  sampleIntervalUs: number;
  samples: number;
  threads: { key: string; samples: number; name?: string }[];
  funcs: ViewFunc[];
  /** parent[n] (-1 for the root, node 0); children always have larger ids than their parent. */
  parent: number[];
  func: number[];
  /** 1 when an ancestor (below the thread) has the same function: `total` counts a sample once per function. */
  recursive: number[];
  /** Buckets: bucket i covers [originUs + i * bucketUs, originUs + (i + 1) * bucketUs) µs after startTimeUs. */
  bucketUs: number;
  originUs: number;
  bucketCount: number;
  /** Entries of bucket i are entryOffsets[i] .. entryOffsets[i+1]; entryKey = node * STATUS_CLASSES + class. */
  entryOffsets: number[];
  entryKey: number[];
  entryCount: number[];
}

function funcKey(f: Frame): string {
  return `${f.filename}\u0000${f.funcname}`;
}

/** The tree part, shared by the flame page and the differential flame graph. */
export class StackTree {
  readonly funcs: ViewFunc[] = [{ name: 'all', file: '', line: null }];
  readonly parent: number[] = [-1];
  readonly func: number[] = [0];
  readonly recursive: number[] = [0];
  private readonly children: (Map<number, number> | undefined)[] = [undefined];
  private readonly funcIds = new Map<string, number>();
  private readonly threadNodes = new Map<string, number>();

  get size(): number {
    return this.parent.length;
  }

  child(node: number, fid: number): number {
    let kids = this.children[node];
    if (kids === undefined) this.children[node] = kids = new Map();
    let id = kids.get(fid);
    if (id === undefined) {
      id = this.parent.length;
      kids.set(fid, id);
      this.parent.push(node);
      this.func.push(fid);
      this.children.push(undefined);
      let rec = 0;
      for (let a = node; a > 0 && this.funcs[this.func[a]!]!.thread === undefined; a = this.parent[a]!) {
        if (this.func[a] === fid) {
          rec = 1;
          break;
        }
      }
      this.recursive.push(rec);
    }
    return id;
  }

  /** Thread names the sources gave (Node's main thread, pprof and speedscope names), by key. */
  readonly threadNames = new Map<string, string>();

  threadNode(key: string, threadName?: string): number {
    let node = this.threadNodes.get(key);
    if (node === undefined) {
      const fid = this.funcs.length;
      if (threadName !== undefined) this.threadNames.set(key, threadName);
      this.funcs.push({ name: threadName === undefined ? `thread ${key}` : `thread ${key} (${threadName})`, file: '', line: null, thread: key });
      node = this.child(0, fid);
      this.threadNodes.set(key, node);
    }
    return node;
  }

  funcOf(frame: Frame): number {
    const key = funcKey(frame);
    let id = this.funcIds.get(key);
    if (id === undefined) {
      id = this.funcs.length;
      this.funcIds.set(key, id);
      this.funcs.push({ name: frame.funcname === '' ? '(anonymous)' : frame.funcname, file: frame.filename, line: frame.lineno });
    } else if (frame.lineno !== null) {
      const f = this.funcs[id]!;
      if (f.line === null || frame.lineno < f.line) f.line = frame.lineno;
    }
    return id;
  }

  /**
   * Adds every sample of a source; calls `onSample(leafNode, sample)` for each.
   * `mergeThreads` puts every sample under one thread node "all" (a diff of two runs, whose thread ids differ).
   * Stacks are innermost first in the model; the tree runs outermost first.
   */
  addSource(source: ProfileSource, onSample: (leaf: number, timestampUs: bigint, status: number) => void, mergeThreads = false): number {
    const frameFunc: number[] = [];
    // Consecutive samples of a thread often repeat the stack (Tachyon's REPEAT records): reuse the leaf.
    const last = new Map<string, { stack: number[]; leaf: number }>();
    let count = 0;
    for (const s of source.samples()) {
      count++;
      const key = mergeThreads ? 'all' : threadKey(s.threadId, s.interpreterId);
      const stack = s.stack;
      const prev = last.get(key);
      let leaf: number;
      if (prev !== undefined && sameStack(prev.stack, stack)) {
        leaf = prev.leaf;
      } else {
        leaf = this.threadNode(key, mergeThreads ? undefined : source.meta.threadNames?.get(key));
        for (let i = stack.length - 1; i >= 0; i--) {
          const fi = stack[i]!;
          let fid = frameFunc[fi];
          if (fid === undefined) {
            const frame = source.frames[fi];
            if (frame === undefined) throw new ProfpackError(`sample ${count - 1} names frame ${fi}, but the profile has ${source.frames.length}`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: `a frame index below ${source.frames.length}` });
            fid = frameFunc[fi] = this.funcOf(frame);
          }
          leaf = this.child(leaf, fid);
        }
        last.set(key, { stack: Array.from(stack), leaf });
      }
      onSample(leaf, s.timestampUs, s.status);
    }
    return count;
  }
}

function sameStack(a: number[], b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface ViewDataOptions {
  /** Narrowest bucket in µs (default: the sample interval rounded up to whole ms). */
  minBucketUs?: number;
  maxBuckets?: number;
  maxEntries?: number;
}

/** One pass over `source`: the stack tree and the time buckets. */
export function buildViewData(source: ProfileSource, options: ViewDataOptions = {}): ViewData {
  const maxBuckets = options.maxBuckets ?? MAX_BUCKETS;
  const maxEntries = options.maxEntries ?? MAX_ENTRIES;
  const interval = Number(source.meta.sampleIntervalUs);
  // Whole milliseconds by default, so window edges read as round numbers.
  let bucketUs = Math.max(1, Math.round(options.minBucketUs ?? Math.ceil(Math.max(1000, interval) / 1000) * 1000));
  const tree = new StackTree();
  const start = source.meta.startTimeUs;
  // bucket index → (entry key → count); bucket k starts at originUs + k * bucketUs (k < 0: a sample before the origin).
  let originUs = 0;
  let buckets = new Map<number, Map<number, number>>();
  let lo = Infinity;
  let hi = -Infinity;
  let entries = 0;
  const perThread = new Map<string, number>();

  // Doubles the width, rebased at the lowest bucket so the span always halves (buckets -1 and 0 merge too).
  const coarsen = (): void => {
    originUs += lo * bucketUs;
    bucketUs *= 2;
    const merged = new Map<number, Map<number, number>>();
    entries = 0;
    for (const [k, m] of buckets) {
      const nk = Math.floor((k - lo) / 2);
      let into = merged.get(nk);
      if (into === undefined) merged.set(nk, (into = new Map()));
      for (const [e, c] of m) {
        const had = into.get(e);
        if (had === undefined) entries++;
        into.set(e, (had ?? 0) + c);
      }
    }
    buckets = merged;
    hi = Math.floor((hi - lo) / 2);
    lo = 0;
  };

  const samples = tree.addSource(source, (leaf, ts, status) => {
    const k = Math.floor((Number(ts - start) - originUs) / bucketUs);
    let m = buckets.get(k);
    if (m === undefined) {
      buckets.set(k, (m = new Map()));
      if (k < lo) lo = k;
      if (k > hi) hi = k;
    }
    const key = leaf * STATUS_CLASSES + statusClass(status);
    const had = m.get(key);
    if (had === undefined) entries++;
    m.set(key, (had ?? 0) + 1);
    while (hi - lo + 1 > maxBuckets || (entries > maxEntries && hi > lo)) coarsen();
  });
  // Thread of every node, in one forward pass (a child's id is larger than its parent's).
  const threadOf = new Array<string>(tree.size);
  for (let n = 1; n < tree.size; n++) {
    const t = tree.funcs[tree.func[n]!]!.thread;
    if (t !== undefined) perThread.set(t, 0);
    threadOf[n] = t ?? threadOf[tree.parent[n]!]!;
  }

  const firstBucket = samples === 0 ? 0 : lo;
  originUs += firstBucket * bucketUs;
  const bucketCount = samples === 0 ? 0 : hi - lo + 1;
  const entryOffsets = [0];
  const entryKey: number[] = [];
  const entryCount: number[] = [];
  for (let k = firstBucket; k < firstBucket + bucketCount; k++) {
    const m = buckets.get(k);
    if (m !== undefined) {
      const keys = [...m.keys()].sort((a, b) => a - b);
      for (const e of keys) {
        entryKey.push(e);
        entryCount.push(m.get(e)!);
        const t = threadOf[Math.floor(e / STATUS_CLASSES)]!;
        perThread.set(t, perThread.get(t)! + m.get(e)!);
      }
    }
    entryOffsets.push(entryKey.length);
  }
  return {
    startTimeUs: start.toString(),
    sampleIntervalUs: interval,
    samples,
    threads: [...perThread].map(([key, n]) => (tree.threadNames.has(key) ? { key, samples: n, name: tree.threadNames.get(key)! } : { key, samples: n })),
    funcs: tree.funcs,
    parent: tree.parent,
    func: tree.func,
    recursive: tree.recursive,
    bucketUs,
    originUs,
    bucketCount,
    entryOffsets,
    entryKey,
    entryCount,
  };
}
