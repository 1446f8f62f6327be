/**
 * `aggregate()`: the "top" query, in the unit of a sample type. One pass over
 * the sample batches sums the chosen value column per stack id; then one pass
 * over the stack table (children before parents are summed up, then a walk
 * from the root) gives every key's self and total value. Work and memory grow
 * with distinct stacks, never with samples or with their values.
 *
 * self = value of samples whose innermost frame has the key; total = value of
 * samples with the key anywhere in the stack, counted once per sample however
 * often recursion repeats it.
 */
import { ErrorCode, ProfpackError } from '../errors';
import {
  ExactSums,
  NodeStatus,
  anonymousName,
  chooseSampleType,
  formatValue,
  sampleCountColumn,
  threadKey,
  type Frame,
  type ProfileSource,
  withoutProfilerFrames,
  type SampleType,
} from '../profile/index';
import { grown } from '../typed-arrays';

export type AggregateBy = 'function' | 'file' | 'line' | 'thread';
const AGGREGATE_BY: readonly AggregateBy[] = ['function', 'file', 'line', 'thread'];
export type SortBy = 'self' | 'total';

/** Status filters, named after the status bits (tachyon-format.md §3.2, NodeStatus.InGc). */
export const STATUS_FILTERS: Record<string, (status: number) => boolean> = {
  'on-cpu': (s) => (s & NodeStatus.OnCpu) !== 0,
  'off-cpu': (s) => (s & NodeStatus.OnCpu) === 0,
  idle: (s) => (s & NodeStatus.OnCpu) === 0,
  gil: (s) => (s & NodeStatus.HasGil) !== 0,
  'no-gil': (s) => (s & NodeStatus.HasGil) === 0,
  'gil-requested': (s) => (s & NodeStatus.GilRequested) !== 0,
  exception: (s) => (s & NodeStatus.HasException) !== 0,
  unknown: (s) => (s & NodeStatus.Unknown) !== 0,
  main: (s) => (s & NodeStatus.MainThread) !== 0,
  gc: (s) => (s & NodeStatus.InGc) !== 0,
};

export interface AggregateOptions {
  by?: AggregateBy;
  sort?: SortBy;
  /** The value column summed: a type name ("alloc_space"), "type/unit" or index; default the profile's default type. */
  sampleType?: string | number;
  /** Only this thread: "ID" or "ID@INTERPRETER". */
  thread?: string;
  /** Window in ms relative to the profile's start time, [fromMs, toMs). */
  fromMs?: number;
  toMs?: number;
  /** A STATUS_FILTERS name, or a predicate on the status byte. */
  status?: string | ((status: number) => boolean);
  /** Rows to return (default 20; 0 or Infinity = all). */
  limit?: number;
  onProgress?: (recordsDone: number, recordsTotal: number | undefined) => void;
}

export interface AggregateRow {
  key: string;
  funcname: string | null;
  filename: string;
  lineno: number | null;
  /** --by thread: the thread ("ID" or "ID@INTERPRETER") and its name where the file names it. */
  thread?: { key: string; name?: string };
  /** In the sample type's unit. */
  self: number;
  total: number;
  selfPct: number;
  totalPct: number;
}

export interface AggregateResult {
  by: AggregateBy;
  sort: SortBy;
  sampleType: SampleType;
  /** Sum of the sample type's values over the records that passed the filters. */
  total: number;
  /** Samples that passed the filters: the samples/count column's sum where the profile has one, else records. */
  samples: number;
  /** Sample records that passed the filters (a record may stand for many samples and weigh any value). */
  records: number;
  /** Sample records read. */
  scanned: number;
  rows: AggregateRow[];
}

/**
 * The row of records with an empty stack: kept and counted in totals, as
 * `go tool pprof -top` counts them in its total, under one name in every view.
 */
export const NO_STACK_ROW = '(no stack)';

/**
 * A row's name, one rule for the library's keys and the CLI's table: an
 * anonymous function is `(anonymous)`, a frame without a file has no location
 * (never `:?`), a line without a number is the file alone, no file by file is
 * `(no file)`. `sep` separates the function from its location (the table's two spaces).
 */
export function rowName(
  by: AggregateBy,
  row: { funcname: string | null; filename: string; lineno: number | null },
  sep = ' ',
): string {
  if (row.funcname === NO_STACK_ROW && row.filename === '') return NO_STACK_ROW;
  if (by === 'file') return row.filename === '' ? '(no file)' : row.filename;
  const where =
    row.filename === '' ? '' : by === 'line' && row.lineno !== null ? `${row.filename}:${row.lineno}` : row.filename;
  const name = anonymousName(row.funcname ?? '');
  return where === '' ? name : `${name}${sep}${where}`;
}

function keyOf(f: Frame, by: AggregateBy): string {
  switch (by) {
    case 'file':
      return f.filename;
    case 'line':
      return `${f.filename}\u0000${f.funcname}\u0000${f.lineno}`;
    default:
      return `${f.filename}\u0000${f.funcname}`;
  }
}

function statusPredicate(status: AggregateOptions['status']): ((s: number) => boolean) | undefined {
  if (typeof status === 'function' || status === undefined) return status;
  const filter = STATUS_FILTERS[status];
  if (filter === undefined)
    throw new ProfpackError(`unknown status filter "${status}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: Object.keys(STATUS_FILTERS).join(' | '),
    });
  return filter;
}

/**
 * Per stack id (per thread index when summed by thread), the summed value of the records that pass the filters, kept
 * exactly (two doubles: a float sum drifts from the exact one, 0.1 + 0.2 + 0.3 is 0.6000000000000001).
 */
export interface StackSums {
  column: number;
  own: ExactSums;
  /** 1 where a kept record has this stack. */
  hit: Uint8Array;
  /** The kept records' exact sum, rounded once to a double. */
  total: number;
  kept: number;
  /** Sum of the samples/count column over kept records (kept when the profile has none). */
  keptSamples: number;
  scanned: number;
}

/** How many of a record's `ticks` (at `time` + k·`intervalUs`) fall before `limit`: O(1), never per tick. */
function ticksBefore(limit: number, time: number, intervalUs: number, ticks: number): number {
  if (limit === Infinity) return ticks;
  if (limit === -Infinity) return 0;
  return Math.min(ticks, Math.max(0, Math.ceil((limit - time) / intervalUs)));
}

/** One pass over the batches: the chosen column summed per stack id under the filters. */
export function sumByStack(source: ProfileSource, options: AggregateOptions = {}, byThread = false): StackSums {
  const column = chooseSampleType(source.meta, options.sampleType);
  const statusFilter = statusPredicate(options.status);
  const startUs = Number(source.meta.startTimeUs);
  const from = options.fromMs === undefined ? -Infinity : startUs + options.fromMs * 1000;
  const to = options.toMs === undefined ? Infinity : startUs + options.toMs * 1000;
  const windowed = options.fromMs !== undefined || options.toMs !== undefined;
  const intervalUs = Number(source.meta.sampleIntervalUs);
  // thread index → 1 keep / 2 skip, resolved once per thread.
  const threadOk: number[] = [];
  const own = new ExactSums();
  let hit = new Uint8Array(1024);
  let kept = 0;
  let keptSamples = 0;
  let scanned = 0;
  const countColumn = sampleCountColumn(source.meta);
  for (const b of source.batches()) {
    const values = b.values[column]!;
    const counts = countColumn < 0 ? undefined : b.values[countColumn]!;
    for (let i = 0; i < b.length; i++) {
      scanned++;
      if (options.thread !== undefined) {
        const t = b.thread[i]!;
        let ok = threadOk[t];
        if (ok === undefined) {
          const ref = source.threads[t]!;
          ok = threadOk[t] = threadKey(ref.threadId, ref.interpreterId) === options.thread ? 1 : 2;
        }
        if (ok === 2) continue;
      }
      // The share of the record inside the window: all or nothing, but a record of c ticks (a Tachyon run)
      // stands for ticks one interval apart from its time (docs/formats.md, Times): its ticks in [from, to).
      let share = 1;
      if (windowed) {
        // A record without a time (a Go pprof file) counts at the profile's start, as the flame page places it.
        const t = b.time[i]!;
        const time = Number.isNaN(t) ? startUs : t;
        const ticks = counts === undefined ? 1 : counts[i]!;
        if (ticks > 1 && Number.isInteger(ticks) && intervalUs > 0 && !Number.isNaN(t)) {
          const inside = ticksBefore(to, time, intervalUs, ticks) - ticksBefore(from, time, intervalUs, ticks);
          if (inside === 0) continue;
          share = inside / ticks;
        } else if (!(time >= from && time < to)) continue;
      }
      if (statusFilter !== undefined && !statusFilter(b.status[i]!)) continue;
      const s = byThread ? b.thread[i]! : b.stack[i]!;
      if (s >= hit.length) hit = grown(hit, Math.max(s, source.stacks.size));
      const v = share === 1 ? values[i]! : values[i]! * share;
      own.add(s, v);
      hit[s] = 1;
      kept++;
      keptSamples += counts === undefined ? 1 : counts[i]! * share;
    }
    options.onProgress?.(scanned, source.sampleCount);
  }
  // The total from the per-stack sums, not a second sum per record: the same exact sum.
  const total = new ExactSums(1);
  for (let s = 0; s < hit.length; s++) if (hit[s] === 1) total.addPair(0, own.hi[s]!, own.lo[s]!);
  return { column, own, hit, total: total.nearest(0), kept, keptSamples, scanned };
}

export function aggregate(source: ProfileSource, options: AggregateOptions = {}): AggregateResult {
  // CPython's own profiler frames are hidden, as its collectors hide them (lib/profile/profiler-frames.ts).
  source = withoutProfilerFrames(source);
  const by = options.by ?? 'function';
  const sort = options.sort ?? 'self';
  if (!AGGREGATE_BY.includes(by))
    throw new ProfpackError(`--by must be function, file, line or thread, not "${by}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: AGGREGATE_BY.join(' | '),
    });
  if (by === 'thread') return byThread(source, options, sort);
  const sums = sumByStack(source, options);
  const { self, total, keyFrame, selfHit } = keyTotals(source, sums, (f) => keyOf(f, by));
  // A key lists when a kept record reached it, even if its values cancel out to 0.
  const order = keyFrame.map((_, i) => i).filter((k) => self[k] !== 0 || total[k] !== 0 || selfHit[k] === 1);
  // Records with an empty stack (stack 0) are one more key, the last: self = total = their sum.
  const noStack = keyFrame.length;
  if (sums.hit[0] === 1) {
    order.push(noStack);
    self[noStack] = total[noStack] = sums.own.nearest(0);
  }
  const primary = sort === 'self' ? self : total;
  const secondary = sort === 'self' ? total : self;
  order.sort((a, b) => primary[b]! - primary[a]! || secondary[b]! - secondary[a]! || a - b);
  const limit = options.limit === undefined ? 20 : options.limit <= 0 ? Infinity : options.limit;
  const rows: AggregateRow[] = [];
  const pct = (v: number) => (sums.total === 0 ? 0 : (100 * v) / sums.total);
  for (const k of order) {
    if (rows.length >= limit) break;
    if (k === noStack) {
      const v = self[k]!;
      const row = { funcname: NO_STACK_ROW, filename: '', lineno: null };
      rows.push({ key: NO_STACK_ROW, ...row, self: v, total: v, selfPct: pct(v), totalPct: pct(v) });
      continue;
    }
    const f = keyFrame[k]!;
    rows.push({
      key: rowName(by, f),
      funcname: by === 'file' ? null : anonymousName(f.funcname),
      filename: f.filename,
      lineno: by === 'line' ? f.lineno : null,
      self: self[k]!,
      total: total[k]!,
      selfPct: pct(self[k]!),
      totalPct: pct(total[k]!),
    });
  }
  const sampleType = { ...source.meta.sampleTypes[sums.column]! };
  return {
    by,
    sort,
    sampleType,
    total: sums.total,
    samples: sums.keptSamples,
    records: sums.kept,
    scanned: sums.scanned,
    rows,
  };
}

/** Value per thread: a thread's self and total are the same, the value of its records. */
function byThread(source: ProfileSource, options: AggregateOptions, sort: SortBy): AggregateResult {
  const sums = sumByStack(source, options, true);
  const order: number[] = [];
  for (let t = 0; t < Math.min(sums.hit.length, source.threads.length); t++) if (sums.hit[t] === 1) order.push(t);
  order.sort((a, b) => sums.own.nearest(b) - sums.own.nearest(a) || a - b);
  const limit = options.limit === undefined ? 20 : options.limit <= 0 ? Infinity : options.limit;
  const pct = (v: number) => (sums.total === 0 ? 0 : (100 * v) / sums.total);
  const rows = order.slice(0, Math.min(order.length, limit)).map((t): AggregateRow => {
    const ref = source.threads[t]!;
    const key = threadKey(ref.threadId, ref.interpreterId);
    const v = sums.own.nearest(t);
    const thread = ref.name === undefined ? { key } : { key, name: ref.name };
    return {
      key,
      funcname: null,
      filename: '',
      lineno: null,
      thread,
      self: v,
      total: v,
      selfPct: pct(v),
      totalPct: pct(v),
    };
  });
  const sampleType = { ...source.meta.sampleTypes[sums.column]! };
  const { total, keptSamples: samples, kept: records, scanned } = sums;
  return { by: 'thread', sort, sampleType, total, samples, records, scanned, rows };
}

/**
 * Self and total per key from per-stack sums: subtree sums bottom-up (a
 * child's id is always larger than its parent's), then a walk from the root
 * that adds a node's subtree to its key unless an ancestor already has the key.
 */
export function keyTotals(
  source: ProfileSource,
  sums: StackSums,
  keyOfFrame: (f: Frame) => string,
): { self: number[]; total: number[]; keyFrame: Frame[]; selfHit: number[] } {
  const stacks = source.stacks;
  const n = Math.min(stacks.size, sums.hit.length);
  const subtree = new ExactSums(n);
  const reached = new Uint8Array(n);
  const copied = Math.min(n, sums.own.hi.length);
  subtree.hi.set(sums.own.hi.subarray(0, copied));
  subtree.lo.set(sums.own.lo.subarray(0, copied));
  reached.set(sums.hit.subarray(0, n));
  for (let s = n - 1; s >= 1; s--) {
    if (reached[s] === 0) continue;
    const p = stacks.parent(s);
    subtree.addPair(p, subtree.hi[s]!, subtree.lo[s]!);
    reached[p] = 1;
  }
  const keyIdOfFrame: number[] = [];
  const keyIds = new Map<string, number>();
  const keyFrame: Frame[] = [];
  const self = new ExactSums();
  const total = new ExactSums();
  const selfHit: number[] = [];
  const keyOfStack = new Int32Array(n);
  for (let s = 1; s < n; s++) {
    if (reached[s] === 0) continue;
    const fi = stacks.frame(s);
    let k = keyIdOfFrame[fi];
    if (k === undefined) {
      const frame = source.frames[fi];
      if (frame === undefined)
        throw new ProfpackError(`a stack names frame ${fi}, but the profile has ${source.frames.length}`, {
          code: ErrorCode.CONVERT_BAD_INPUT,
          expected: `a frame index below ${source.frames.length}`,
        });
      const key = keyOfFrame(frame);
      k = keyIds.get(key);
      if (k === undefined) {
        k = keyFrame.length;
        keyIds.set(key, k);
        keyFrame.push(frame);
        selfHit.push(0);
      }
      keyIdOfFrame[fi] = k;
    }
    keyOfStack[s] = k;
    if (sums.hit[s] === 1) {
      self.addPair(k, sums.own.hi[s]!, sums.own.lo[s]!);
      selfHit[k] = 1;
    }
  }
  // Children lists (CSR) of reached nodes, then an iterative walk with a count of active ancestors per key.
  const childCount = new Uint32Array(n + 1);
  for (let s = 1; s < n; s++) if (reached[s] === 1) childCount[stacks.parent(s) + 1]!++;
  for (let s = 1; s <= n; s++) childCount[s]! += childCount[s - 1]!;
  const children = new Uint32Array(childCount[n]!);
  const fill = childCount.slice(0, n);
  for (let s = 1; s < n; s++) if (reached[s] === 1) children[fill[stacks.parent(s)]!++] = s;
  const active = new Uint32Array(keyFrame.length);
  const walk: number[] = [];
  for (let c = childCount[0]!; c < childCount[1]!; c++) walk.push(children[c]!);
  while (walk.length > 0) {
    const top = walk.pop()!;
    if (top < 0) {
      active[keyOfStack[~top]!]!--;
      continue;
    }
    const k = keyOfStack[top]!;
    if (active[k] === 0) total.addPair(k, subtree.hi[top]!, subtree.lo[top]!);
    active[k]!++;
    walk.push(~top);
    for (let c = childCount[top]!; c < childCount[top + 1]!; c++) walk.push(children[c]!);
  }
  // Each key's exact sums, rounded once to doubles.
  const nearest = (sums: ExactSums) => keyFrame.map((_, k) => sums.nearest(k));
  return { self: nearest(self), total: nearest(total), keyFrame, selfHit };
}

/** A name on one table line: control characters (a newline in a file name) escaped as JSON escapes them. */
function printable(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/** A fixed-width text table of an aggregate result, values in their unit. */
export function formatTable(result: AggregateResult): string {
  const unit = result.sampleType.unit;
  const show = (v: number) => formatValue(v, unit);
  const header = ['self', 'self%', 'total', 'total%', result.by];
  const lines = result.rows.map((r) => {
    const name =
      r.thread !== undefined
        ? `${r.thread.key}${r.thread.name === undefined ? '' : `  ${r.thread.name}`}`
        : rowName(result.by, r, '  ');
    return [show(r.self), r.selfPct.toFixed(1) + '%', show(r.total), r.totalPct.toFixed(1) + '%', printable(name)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padStart(widths[i]!))).join('  ');
  const of = result.scanned !== result.records ? ` (${result.records} of ${result.scanned} records)` : '';
  const what = `${result.sampleType.type}/${result.sampleType.unit}`;
  return [fmt(header), ...lines.map(fmt), `${result.samples} samples${of}; ${what} total ${show(result.total)}`].join(
    '\n',
  );
}
