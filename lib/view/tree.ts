/**
 * The data a flame graph page carries: a stack tree (one node per distinct
 * path thread → outermost frame → … → innermost, merged by function as
 * `top --by function` keys them) and, per time bucket, the value (of the
 * chosen sample type) of the samples that ended at each node with each
 * status class. A time range re-aggregates in
 * the page by adding up its buckets' entries and summing up the tree once —
 * the page never holds one record per sample.
 *
 * Size is bounded: at most MAX_BUCKETS buckets, and the bucket width doubles
 * (adjacent buckets merge) while the entries exceed MAX_ENTRIES. The tree
 * itself has one node per distinct function path.
 */
import { ErrorCode, ProfpackError } from '../errors';
import {
  NodeStatus,
  chooseSampleType,
  sampleCountColumn,
  threadKey,
  type Frame,
  type ProfileSource,
  withoutProfilerFrames,
  type SampleType,
} from '../profile/index';

/** Status classes the timeline colours: V8's GC bit first, then ON_CPU, else idle/off-CPU. */
export const StatusClass = { OnCpu: 0, Gc: 1, Idle: 2 } as const;
export const STATUS_CLASSES = 3;

export function statusClass(status: number): number {
  if ((status & NodeStatus.InGc) !== 0) return StatusClass.Gc;
  return (status & NodeStatus.OnCpu) !== 0 ? StatusClass.OnCpu : StatusClass.Idle;
}

export const MAX_BUCKETS = 400;
export const MAX_ENTRIES = 400_000;
/**
 * Stack nodes a page holds: ~200 bytes each while built and ~15 in the page.
 * Refused past it before memory runs away (16,000 threads × 250 distinct frames
 * in a 57 KB file asked for 4 M nodes, 1.3 GB and a 55 MB page).
 */
export const MAX_TREE_NODES = 500_000;

/** A function as the page shows it; `thread` marks the per-thread root nodes. */
export interface ViewFunc {
  name: string;
  file: string;
  /** Lowest line sampled in the function (its start, for V8's frames), or null. */
  line: number | null;
  /**
   * The line where the function's own samples weigh most (of the shown type, over the whole profile), as
   * `top --by line` ranks it: a .cpuprofile's hot line from V8's positionTicks, not its declaration. The
   * page's table shows it; absent when no sample ended in the function on a numbered line.
   */
  hot?: number;
  /** Set on thread nodes: the thread key ("ID" or "ID@INTERPRETER"). */
  thread?: string;
}

export interface ViewData {
  /** µs since the epoch as a decimal string (u64), the origin of every ms offset. */
  startTimeUs: string;
  sampleIntervalUs: number;
  /** What the values measure; every count below (threads, entries) is in its unit. */
  sampleType: SampleType;
  /** Samples read: the samples/count column's sum where the profile has one, else records. */
  samples: number;
  /** Sample records read. */
  records: number;
  /** Sum of their values. */
  total: number;
  threads: { key: string; name?: string; samples: number }[];
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
      if (id >= MAX_TREE_NODES) {
        throw new ProfpackError(
          `the flame graph would have more than ${MAX_TREE_NODES.toLocaleString('en')} stack nodes`,
          {
            code: ErrorCode.VIEW_TOO_LARGE,
            expected: `at most ${MAX_TREE_NODES} distinct stacks (thread and function path)`,
          },
        );
      }
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

  threadNode(key: string, name?: string): number {
    let node = this.threadNodes.get(key);
    if (node === undefined) {
      const fid = this.funcs.length;
      this.funcs.push({
        name: name === undefined ? `thread ${key}` : `thread ${key} (${name})`,
        file: '',
        line: null,
        thread: key,
      });
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
      this.funcs.push({
        name: frame.funcname === '' ? '(anonymous)' : frame.funcname,
        file: frame.filename,
        line: frame.lineno,
      });
    } else if (frame.lineno !== null) {
      const f = this.funcs[id]!;
      if (f.line === null || frame.lineno < f.line) f.line = frame.lineno;
    }
    return id;
  }

  /**
   * Adds every sample of a source; calls `onSample(leafNode, timeUs, status, value, samples, line)`
   * for each, with the value of `column` and the innermost frame's line (null for none). `mergeThreads`
   * puts every sample under one thread node "all" (a diff of two runs, whose thread ids differ).
   * A stack id maps to its tree node once per thread (memoised through its parent).
   */
  addSource(
    source: ProfileSource,
    column: number,
    onSample: (
      leaf: number,
      timeUs: number,
      status: number,
      value: number,
      samples: number,
      line: number | null,
    ) => void,
    mergeThreads = false,
  ): number {
    // CPython's own profiler frames are hidden, as its collectors hide them (lib/profile/profiler-frames.ts).
    source = withoutProfilerFrames(source);
    const countColumn = sampleCountColumn(source.meta);
    const frameFunc: number[] = [];
    const memo = new Map<number, Int32Array>();
    const threadRoot: number[] = [];
    const chain: number[] = [];
    let count = 0;
    for (const b of source.batches()) {
      const values = b.values[column]!;
      const counts = countColumn < 0 ? undefined : b.values[countColumn]!;
      for (let i = 0; i < b.length; i++) {
        count++;
        const t = mergeThreads ? 0 : b.thread[i]!;
        let root = threadRoot[t];
        if (root === undefined) {
          const ref = source.threads[t]!;
          root = threadRoot[t] = this.threadNode(
            mergeThreads ? 'all' : threadKey(ref.threadId, ref.interpreterId),
            mergeThreads ? undefined : ref.name,
          );
        }
        let nodes = memo.get(t);
        const sid = b.stack[i]!;
        if (nodes === undefined || nodes.length <= sid) {
          const grown = new Int32Array(Math.max(sid + 1, source.stacks.size, (nodes?.length ?? 0) * 2)).fill(-1);
          if (nodes !== undefined) grown.set(nodes);
          memo.set(t, (nodes = grown));
        }
        let leaf = sid === 0 ? root : nodes[sid]!;
        if (leaf < 0) {
          let s = sid;
          while (s !== 0 && nodes[s]! < 0) {
            chain.push(s);
            s = source.stacks.parent(s);
          }
          leaf = s === 0 ? root : nodes[s]!;
          while (chain.length > 0) {
            const c = chain.pop()!;
            const fi = source.stacks.frame(c);
            let fid = frameFunc[fi];
            if (fid === undefined) {
              const frame = source.frames[fi];
              if (frame === undefined)
                throw new ProfpackError(
                  `sample ${count - 1} names frame ${fi}, but the profile has ${source.frames.length}`,
                  { code: ErrorCode.CONVERT_BAD_INPUT, expected: `a frame index below ${source.frames.length}` },
                );
              fid = frameFunc[fi] = this.funcOf(frame);
            }
            leaf = this.child(leaf, fid);
            nodes[c] = leaf;
          }
        }
        const line = sid === 0 ? null : (source.frames[source.stacks.frame(sid)]?.lineno ?? null);
        onSample(leaf, b.time[i]!, b.status[i]!, values[i]!, counts === undefined ? 1 : counts[i]!, line);
      }
    }
    return count;
  }
}

export interface ViewDataOptions {
  /** The value column shown: a type name, "type/unit" or index; default the profile's default type. */
  sampleType?: string | number;
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
  // bucket index -> (entry key -> count); bucket k starts at originUs + k * bucketUs (k < 0: before the origin).
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

  const column = chooseSampleType(source.meta, options.sampleType);
  const startUs = Number(start);
  let total = 0;
  let samples = 0;
  // The samples/count value of each record, read beside the shown column.
  const put = (atUs: number, key: number, value: number): void => {
    const k = Math.floor((atUs - originUs) / bucketUs);
    let m = buckets.get(k);
    if (m === undefined) {
      buckets.set(k, (m = new Map()));
      if (k < lo) lo = k;
      if (k > hi) hi = k;
    }
    const had = m.get(key);
    if (had === undefined) entries++;
    m.set(key, (had ?? 0) + value);
    while (hi - lo + 1 > maxBuckets || (entries > maxEntries && hi > lo)) coarsen();
  };
  const intervalUs = Number(source.meta.sampleIntervalUs);
  // Per function (tree.funcs index): its self value per line, for its hot line.
  const lineSelf: (Map<number, number> | undefined)[] = [];
  const records = tree.addSource(source, column, (leaf, ts, status, value, count, line) => {
    total += value;
    samples += count;
    if (line !== null) {
      const m = (lineSelf[tree.func[leaf]!] ??= new Map());
      m.set(line, (m.get(line) ?? 0) + value);
    }
    const key = leaf * STATUS_CLASSES + statusClass(status);
    // A sample without a time (a pprof heap profile) sits at the start.
    const atUs = Number.isNaN(ts) ? 0 : ts - startUs;
    if (!(count > 1 && Number.isInteger(count) && intervalUs > 0 && !Number.isNaN(ts))) return put(atUs, key, value);
    // A record of `count` ticks one interval apart (a Tachyon run, docs/formats.md Times) is spread over the
    // buckets its ticks fall in: one step per bucket, never per tick.
    for (let done = 0; done < count;) {
      const tickUs = atUs + done * intervalUs;
      const bucketEnd = originUs + (Math.floor((tickUs - originUs) / bucketUs) + 1) * bucketUs;
      const n = Math.min(count - done, Math.max(1, Math.ceil((bucketEnd - tickUs) / intervalUs)));
      put(tickUs, key, (value * n) / count);
      done += n;
    }
  });
  lineSelf.forEach((m, k) => {
    let hot: number | undefined;
    for (const [line, v] of m!)
      if (hot === undefined || v > m!.get(hot)! || (v === m!.get(hot)! && line < hot)) hot = line;
    tree.funcs[k]!.hot = hot;
  });
  // Thread of every node, in one forward pass (a child's id is larger than its parent's).
  const threadOf = new Array<string>(tree.size);
  for (let n = 1; n < tree.size; n++) {
    const t = tree.funcs[tree.func[n]!]!.thread;
    if (t !== undefined) perThread.set(t, 0);
    threadOf[n] = t ?? threadOf[tree.parent[n]!]!;
  }

  // Names are known once the (streaming) source has been read.
  const threadNames = new Map<string, string>();
  for (const t of source.threads)
    if (t.name !== undefined) threadNames.set(threadKey(t.threadId, t.interpreterId), t.name);
  const firstBucket = records === 0 ? 0 : lo;
  originUs += firstBucket * bucketUs;
  const bucketCount = records === 0 ? 0 : hi - lo + 1;
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
    sampleType: { ...source.meta.sampleTypes[column]! },
    samples,
    records,
    total,
    threads: [...perThread].map(([key, n]) => {
      const name = threadNames.get(key);
      return name === undefined ? { key, samples: n } : { key, name, samples: n };
    }),
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
