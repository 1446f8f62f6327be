/**
 * `diffProfiles()` / `diff()`: what changed between two profiles, per
 * function (pprof's -diff_base, `top`-style) and as a differential flame
 * graph (flamegraph's difffolded: widths from the new profile, red where a
 * path grew, blue where it shrank). With `normalize`, the base's counts are
 * scaled by newSamples / baseSamples first, so two recordings of different
 * length compare as shares.
 */
import { statSync } from 'node:fs';
import { refuseInputAsOutput, writeFileAtomic } from '../output-file';
import { openProfile } from '../formats/index';
import { chooseSampleType, formatValue, sampleTypeName, type ProfileSource, type SampleType } from '../profile/index';
import { aggregate, rowName, type SortBy } from '../query/index';
import { renderPage } from './html';
import { StackTree } from './tree';

export interface DiffOptions {
  /** The value compared: a type name or "type/unit" both profiles have; default the new profile's default type. */
  sampleType?: string;
  /** Scale the base to the new profile's total (default false: raw values). */
  normalize?: boolean;
  /** Order rows by the change of self (default) or of total samples. */
  sort?: SortBy;
  /** Rows to return (default 20; 0 = all). */
  limit?: number;
}

export interface DiffRow {
  key: string;
  funcname: string;
  filename: string;
  baseSelf: number;
  newSelf: number;
  selfDelta: number;
  baseTotal: number;
  newTotal: number;
  totalDelta: number;
}

export interface DiffResult {
  normalized: boolean;
  sort: SortBy;
  /** What the values measure. */
  sampleType: SampleType;
  baseSamples: number;
  newSamples: number;
  /** Sums of the sample type's values. */
  baseTotal: number;
  newTotal: number;
  /** Factor applied to the base's counts (1 unless normalized). */
  scale: number;
  rows: DiffRow[];
}

/** Per-function deltas, sorted by the size of the change (largest first, growth before shrinkage on ties). */
export function diffProfiles(base: ProfileSource, next: ProfileSource, options: DiffOptions = {}): DiffResult {
  const sort = options.sort ?? 'self';
  const type = sampleTypeName(next.meta.sampleTypes[chooseSampleType(next.meta, options.sampleType)]!);
  const a = aggregate(base, { limit: 0, sampleType: type });
  const b = aggregate(next, { limit: 0, sampleType: type });
  const scale = options.normalize === true && a.total > 0 ? b.total / a.total : 1;
  const rows = new Map<string, DiffRow>();
  const row = (key: string, funcname: string, filename: string): DiffRow => {
    let r = rows.get(key);
    if (r === undefined)
      rows.set(
        key,
        (r = {
          key,
          funcname,
          filename,
          baseSelf: 0,
          newSelf: 0,
          selfDelta: 0,
          baseTotal: 0,
          newTotal: 0,
          totalDelta: 0,
        }),
      );
    return r;
  };
  for (const r of a.rows)
    Object.assign(row(r.key, r.funcname ?? '', r.filename), { baseSelf: r.self * scale, baseTotal: r.total * scale });
  for (const r of b.rows)
    Object.assign(row(r.key, r.funcname ?? '', r.filename), { newSelf: r.self, newTotal: r.total });
  const out = [...rows.values()];
  for (const r of out) {
    r.selfDelta = r.newSelf - r.baseSelf;
    r.totalDelta = r.newTotal - r.baseTotal;
  }
  const by = sort === 'self' ? (r: DiffRow) => r.selfDelta : (r: DiffRow) => r.totalDelta;
  out.sort(
    (x, y) => Math.abs(by(y)) - Math.abs(by(x)) || by(y) - by(x) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0),
  );
  const limit = options.limit === undefined ? 20 : options.limit <= 0 ? Infinity : options.limit;
  return {
    normalized: options.normalize === true,
    sort,
    sampleType: b.sampleType,
    baseSamples: a.samples,
    newSamples: b.samples,
    baseTotal: a.total,
    newTotal: b.total,
    scale,
    rows: out.slice(0, limit),
  };
}

/** A node of the differential flame graph, in d3-flame-graph's shape. */
export interface DiffNode {
  name: string;
  file: string;
  line: number | null;
  /** New profile's total samples (the width). */
  value: number;
  /** Base profile's total samples, scaled when normalized. */
  base: number;
  delta: number;
  children?: DiffNode[];
}

/** The union of both profiles' stack trees (threads merged), widths from `next`, deltas against `base`. */
export function diffTree(base: ProfileSource, next: ProfileSource, scale = 1, sampleType?: string): DiffNode {
  const tree = new StackTree();
  const counts: [number[], number[]] = [[], []];
  const type = sampleTypeName(next.meta.sampleTypes[chooseSampleType(next.meta, sampleType)]!);
  [base, next].forEach((source, i) => {
    const c = counts[i]!;
    tree.addSource(
      source,
      chooseSampleType(source.meta, type),
      (leaf, _t, _s, value) => (c[leaf] = (c[leaf] ?? 0) + value),
      true,
    );
  });
  const n = tree.size;
  const baseTotal = new Float64Array(n);
  const newTotal = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    baseTotal[v] = (counts[0][v] ?? 0) * scale;
    newTotal[v] = counts[1][v] ?? 0;
  }
  for (let v = n - 1; v > 0; v--) {
    const p = tree.parent[v]!;
    baseTotal[p] = baseTotal[p]! + baseTotal[v]!;
    newTotal[p] = newTotal[p]! + newTotal[v]!;
  }
  const kids: number[][] = Array.from({ length: n }, () => []);
  for (let v = 1; v < n; v++) kids[tree.parent[v]!]!.push(v);
  const round = (x: number): number => Math.round(x * 10) / 10;
  const build = (v: number): DiffNode => {
    const f = tree.funcs[tree.func[v]!]!;
    const scaled = round(baseTotal[v]!);
    const node: DiffNode = {
      name: f.name,
      file: f.file,
      line: f.line,
      value: newTotal[v]!,
      base: scaled,
      delta: round(newTotal[v]! - scaled),
    };
    const children = kids[v]!.filter((k) => newTotal[k]! > 0).map(build);
    if (children.length > 0) node.children = children;
    return node;
  };
  // Node 1 is the merged thread "all" when there is any sample.
  const root = build(n > 1 ? 1 : 0);
  root.name = 'all';
  return root;
}

/** The table of a diff, as `profpack diff` prints it. */
export function formatDiffTable(result: DiffResult): string {
  const unit = result.sampleType.unit;
  const fmt = (v: number): string => formatValue(result.normalized ? Math.round(v * 10) / 10 : v, unit);
  const signed = (v: number): string => (v > 0 ? '+' : '') + fmt(v);
  const header = ['Δself', 'base self', 'new self', 'Δtotal', 'base total', 'new total', 'function'];
  const lines = result.rows.map((r) => [
    signed(r.selfDelta),
    fmt(r.baseSelf),
    fmt(r.newSelf),
    signed(r.totalDelta),
    fmt(r.baseTotal),
    fmt(r.newTotal),
    rowName('function', { ...r, lineno: null }, '  '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padStart(widths[i]!))).join('  ');
  const scale = result.normalized ? ` (base scaled ×${result.scale.toFixed(3)})` : '';
  const totals =
    `${sampleTypeName(result.sampleType)}: base ${formatValue(result.baseTotal, unit)} ` +
    `in ${result.baseSamples} samples, ` +
    `new ${formatValue(result.newTotal, unit)} in ${result.newSamples} samples`;
  return [row(header), ...lines.map(row), `${totals}${scale}`].join('\n');
}

export interface DiffFileOptions extends DiffOptions {
  /** Also write the differential flame graph page here. */
  html?: string;
  title?: string;
}

/** Diffs two profile files (any format `openProfile` reads); writes the page when `html` is given. */
export function diff(
  basePath: string,
  newPath: string,
  options: DiffFileOptions = {},
): DiffResult & { html?: string; bytes?: number } {
  if (options.html !== undefined) refuseInputAsOutput(options.html, [basePath, newPath]);
  const base = openProfile(basePath);
  try {
    const next = openProfile(newPath);
    try {
      const title = options.title ?? `${basePath} → ${newPath} — profpack diff`;
      return diffSources(base, next, { ...options, title });
    } finally {
      next.close();
    }
  } finally {
    base.close();
  }
}

/** Diffs two profiles already open (heap profiles of two moments, say); writes the page when `html` is given. */
export function diffSources(
  base: ProfileSource,
  next: ProfileSource,
  options: DiffFileOptions = {},
): DiffResult & { html?: string; bytes?: number } {
  const result = diffProfiles(base, next, options);
  if (options.html === undefined) return result;
  const all = options.limit === 0 ? result : diffProfiles(base, next, { ...options, limit: 0 });
  const tree = diffTree(base, next, result.scale, sampleTypeName(result.sampleType));
  const html = renderPage({
    kind: 'diff',
    title: options.title ?? 'profpack diff',
    summary:
      `${sampleTypeName(result.sampleType)}: base ${formatValue(result.baseTotal, result.sampleType.unit)}, ` +
      `new ${formatValue(result.newTotal, result.sampleType.unit)}` +
      `${result.normalized ? `; base scaled ×${result.scale.toFixed(3)}` : ''}; widths are the new profile's`,
    legend:
      '<span style="background:rgb(235,35,35);color:#fff">grew</span>' +
      '<span style="background:rgb(35,35,235);color:#fff">shrank</span>' +
      '<span style="background:rgb(225,225,225)">unchanged</span>',
    columns: [
      'Δself',
      result.normalized ? 'base self (scaled)' : 'base self',
      'new self',
      'Δtotal',
      'function',
      'file',
    ],
    data: {
      kind: 'diff',
      normalized: result.normalized,
      unit: result.sampleType.unit,
      tree,
      rows: all.rows.slice(0, 200),
    },
  });
  writeFileAtomic(options.html, html);
  return { ...result, html: options.html, bytes: statSync(options.html).size };
}
