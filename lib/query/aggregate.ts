/**
 * `aggregate()`: the "top" query. One pass over a sample stream, keeping only
 * one counter pair per distinct key, so a profile of any length is queried
 * without materialising its samples.
 *
 * self = samples whose innermost frame has the key; total = samples with the
 * key anywhere in the stack, counted once per sample however often recursion
 * repeats it.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { NodeStatus, anonymousName, threadKey, type Frame, type ProfileSource } from '../convert/model';

export type AggregateBy = 'function' | 'file' | 'line';
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
  /** Only this thread: "ID" or "ID@INTERPRETER". */
  thread?: string;
  /** Window in ms relative to the profile's start time, [fromMs, toMs). */
  fromMs?: number;
  toMs?: number;
  /** A STATUS_FILTERS name, or a predicate on the status byte. */
  status?: string | ((status: number) => boolean);
  /** Rows to return (default 20; 0 or Infinity = all). */
  limit?: number;
  onProgress?: (samplesDone: number, samplesTotal: number | undefined) => void;
}

export interface AggregateRow {
  key: string;
  funcname: string | null;
  filename: string;
  lineno: number | null;
  self: number;
  total: number;
  selfPct: number;
  totalPct: number;
}

export interface AggregateResult {
  by: AggregateBy;
  sort: SortBy;
  /** Samples that passed the filters. */
  samples: number;
  /** Samples read. */
  scanned: number;
  rows: AggregateRow[];
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

export function aggregate(source: ProfileSource, options: AggregateOptions = {}): AggregateResult {
  const by = options.by ?? 'function';
  const sort = options.sort ?? 'self';
  if (!['function', 'file', 'line'].includes(by)) throw new ProfpackError(`--by must be function, file or line, not "${by}"`, { code: ErrorCode.INVALID_ARGUMENT });
  let statusFilter: ((s: number) => boolean) | undefined;
  if (typeof options.status === 'function') statusFilter = options.status;
  else if (options.status !== undefined) {
    statusFilter = STATUS_FILTERS[options.status];
    if (statusFilter === undefined) {
      throw new ProfpackError(`unknown status filter "${options.status}"`, { code: ErrorCode.INVALID_ARGUMENT, expected: Object.keys(STATUS_FILTERS).join(' | ') });
    }
  }
  const start = source.meta.startTimeUs;
  const from = options.fromMs === undefined ? undefined : start + BigInt(Math.round(options.fromMs * 1000));
  const to = options.toMs === undefined ? undefined : start + BigInt(Math.round(options.toMs * 1000));

  // frame index → key id, resolved once per frame.
  const keyIdOfFrame: number[] = [];
  const keyIds = new Map<string, number>();
  const keyFrame: Frame[] = [];
  const self: number[] = [];
  const total: number[] = [];
  // Last sample that counted a key in `total` (dedup of recursion without a Set per sample).
  const seenAt: number[] = [];
  let kept = 0;
  let scanned = 0;
  const frames = source.frames;
  for (const s of source.samples()) {
    scanned++;
    if (options.onProgress !== undefined && (scanned & 0xffff) === 0) options.onProgress(scanned, source.sampleCount);
    if (options.thread !== undefined && threadKey(s.threadId, s.interpreterId) !== options.thread) continue;
    if (from !== undefined && s.timestampUs < from) continue;
    if (to !== undefined && s.timestampUs >= to) continue;
    if (statusFilter !== undefined && !statusFilter(s.status)) continue;
    kept++;
    const stack = s.stack;
    for (let i = 0; i < stack.length; i++) {
      const fi = stack[i]!;
      let k = keyIdOfFrame[fi];
      if (k === undefined) {
        const frame = frames[fi]!;
        const key = keyOf(frame, by);
        k = keyIds.get(key);
        if (k === undefined) {
          k = keyFrame.length;
          keyIds.set(key, k);
          keyFrame.push(frame);
          self.push(0);
          total.push(0);
          seenAt.push(-1);
        }
        keyIdOfFrame[fi] = k;
      }
      if (i === 0) self[k]!++;
      if (seenAt[k] !== kept) {
        seenAt[k] = kept;
        total[k]!++;
      }
    }
  }
  options.onProgress?.(scanned, source.sampleCount);

  const order = keyFrame.map((_, i) => i);
  const primary = sort === 'self' ? self : total;
  const secondary = sort === 'self' ? total : self;
  order.sort((a, b) => primary[b]! - primary[a]! || secondary[b]! - secondary[a]! || a - b);
  const limit = options.limit === undefined ? 20 : options.limit <= 0 ? Infinity : options.limit;
  const rows: AggregateRow[] = [];
  for (const k of order) {
    if (rows.length >= limit) break;
    const f = keyFrame[k]!;
    rows.push({
      key: by === 'file' ? f.filename : by === 'line' ? `${f.funcname} ${f.filename}:${f.lineno ?? '?'}` : `${f.funcname} ${f.filename}`,
      funcname: by === 'file' ? null : f.funcname,
      filename: f.filename,
      lineno: by === 'line' ? f.lineno : null,
      self: self[k]!,
      total: total[k]!,
      selfPct: kept === 0 ? 0 : (100 * self[k]!) / kept,
      totalPct: kept === 0 ? 0 : (100 * total[k]!) / kept,
    });
  }
  return { by, sort, samples: kept, scanned, rows };
}

/** A fixed-width text table of an aggregate result. */
export function formatTable(result: AggregateResult): string {
  const header = ['self', 'self%', 'total', 'total%', result.by];
  const lines = result.rows.map((r) => {
    const name =
      result.by === 'file'
        ? r.filename || '(no file)'
        : `${anonymousName(r.funcname ?? '')}${r.filename === '' ? '' : `  ${r.filename}${result.by === 'line' ? `:${r.lineno ?? '?'}` : ''}`}`;
    return [String(r.self), r.selfPct.toFixed(1) + '%', String(r.total), r.totalPct.toFixed(1) + '%', name];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padStart(widths[i]!))).join('  ');
  return [fmt(header), ...lines.map(fmt), `${result.samples} samples${result.scanned !== result.samples ? ` of ${result.scanned}` : ''}`].join('\n');
}
