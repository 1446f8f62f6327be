/**
 * Leak suspects: allocation sites (the innermost frame of an allocation's
 * stack) ranked by the bytes they still hold at the end and by how steadily
 * those bytes grew. Each site's live bytes (scaled as pprof scales them) are
 * a series over the recording's polls; a least-squares line through it gives
 * the growth in bytes/min and R² says how well a straight line explains it
 * (1: grew at a steady pace, 0: no trend). A leak holds much and grows
 * steadily; a cache that filled and stopped, or garbage that comes and goes,
 * holds with no trend.
 *
 * The regression sums are kept per site and brought up to date only when the
 * site's bytes change (its value was constant over the polls in between), so
 * the pass costs per event, and memory per site, never per poll × site.
 */
import { anonymousName, type Frame } from '../profile/index';
import { replayHeapTrace } from './replay';
import { NO_HEAP_STACK, unsampledWeight, type HeapTraceSource } from '../profile/index';

export interface LeakSuspect {
  funcname: string;
  filename: string;
  lineno: number | null;
  /** Live at the end, scaled to the whole heap (bytes, objects), and the sampled objects behind them. */
  liveBytes: number;
  liveObjects: number;
  sampledLive: number;
  /** Least-squares slope of the site's live bytes over the polls. */
  growthBytesPerMin: number;
  /** R² of that line, 0..1 (0 when the bytes never changed). */
  fit: number;
  /** liveBytes × fit for growing sites, else 0: the ranking. */
  score: number;
  /** Allocated and freed over the recording (scaled). */
  allocatedBytes: number;
  freedBytes: number;
  /** First and last allocation seen, ms after the start. */
  firstAllocMs: number;
  lastAllocMs: number;
  /** The stack (outermost first, function names) holding the most of the site's live bytes. */
  stack: string[];
}

export interface LeakReport {
  intervalBytes: number;
  durationMs: number;
  polls: number;
  /** All sampled live bytes at the end, scaled. */
  liveBytes: number;
  suspects: LeakSuspect[];
}

interface SiteState {
  frame: number;
  live: number;
  liveObjects: number;
  sampledLive: number;
  allocated: number;
  freed: number;
  firstUs: number;
  lastUs: number;
  /** Polls closed and their Σt at the site's last change (t in s). */
  k0: number;
  t1: number;
  sy: number;
  syy: number;
  sty: number;
}

export function leakSuspects(trace: HeapTraceSource, options: { limit?: number } = {}): LeakReport {
  const interval = trace.meta.intervalBytes;
  const sites: SiteState[] = [];
  const siteOfFrame = new Map<number, number>();
  let siteOfStack = new Int32Array(0);
  let startUs = Number.NaN;
  let polls = 0;
  let t1 = 0;
  let t2 = 0;
  const siteOf = (stack: number): SiteState | undefined => {
    if (stack === NO_HEAP_STACK || stack === 0) return undefined;
    if (stack >= siteOfStack.length) {
      const grown = new Int32Array(Math.max(stack + 1, trace.stacks.size, siteOfStack.length * 2)).fill(-1);
      grown.set(siteOfStack);
      siteOfStack = grown;
    }
    let s = siteOfStack[stack]!;
    if (s < 0) {
      const frame = trace.stacks.frame(stack);
      s = siteOfFrame.get(frame) ?? -1;
      if (s < 0) {
        s = sites.length;
        siteOfFrame.set(frame, s);
        sites.push({
          frame,
          live: 0,
          liveObjects: 0,
          sampledLive: 0,
          allocated: 0,
          freed: 0,
          firstUs: Infinity,
          lastUs: -Infinity,
          k0: 0,
          t1: 0,
          sy: 0,
          syy: 0,
          sty: 0,
        });
      }
      siteOfStack[stack] = s;
    }
    return sites[s];
  };
  // The polls since the site's last change all saw its current bytes.
  const settle = (s: SiteState): void => {
    const n = polls - s.k0;
    if (n > 0 && s.live !== 0) {
      s.sy += s.live * n;
      s.syy += s.live * s.live * n;
      s.sty += s.live * (t1 - s.t1);
    }
    s.k0 = polls;
    s.t1 = t1;
  };
  const summary = replayHeapTrace(trace, {
    alloc(live, slot, timeUs) {
      const s = siteOf(live.stacks[slot]!);
      if (s === undefined) return;
      const w = unsampledWeight(live.sizes[slot]!, interval);
      settle(s);
      s.live += w.bytes;
      s.liveObjects += w.objects;
      s.sampledLive++;
      s.allocated += w.bytes;
      s.firstUs = Math.min(s.firstUs, timeUs);
      s.lastUs = Math.max(s.lastUs, timeUs);
    },
    free(live, slot) {
      const s = siteOf(live.stacks[slot]!);
      if (s === undefined) return;
      const w = unsampledWeight(live.sizes[slot]!, interval);
      settle(s);
      s.live -= w.bytes;
      s.liveObjects -= w.objects;
      s.sampledLive--;
      s.freed += w.bytes;
    },
    poll(_live, timeUs) {
      if (Number.isNaN(startUs)) startUs = timeUs;
      const t = (timeUs - startUs) / 1e6;
      polls++;
      t1 += t;
      t2 += t * t;
    },
  });
  // The stack holding most of each site's live bytes.
  const stackBytes = new Map<number, number>();
  const live = summary.live;
  for (const slot of live.slots()) {
    const stack = live.stacks[slot]!;
    stackBytes.set(stack, (stackBytes.get(stack) ?? 0) + unsampledWeight(live.sizes[slot]!, interval).bytes);
  }
  const heaviest = new Map<SiteState, { stack: number; bytes: number }>();
  for (const [stack, bytes] of stackBytes) {
    const s = siteOf(stack);
    if (s !== undefined && bytes > (heaviest.get(s)?.bytes ?? -1)) heaviest.set(s, { stack, bytes });
  }
  const origin = trace.meta.startTimeUs;
  const suspects: LeakSuspect[] = [];
  let liveBytes = 0;
  for (const s of sites) {
    settle(s);
    liveBytes += Math.max(0, s.live);
    if (!(Math.round(s.live) > 0)) continue;
    const { slope, r2 } = fitLine(polls, t1, t2, s.sy, s.syy, s.sty);
    const growth = slope * 60;
    const frame = trace.frames[s.frame]!;
    const top = heaviest.get(s);
    suspects.push({
      funcname: anonymousName(frame.funcname),
      filename: frame.filename,
      lineno: frame.lineno,
      liveBytes: Math.round(s.live),
      liveObjects: Math.round(s.liveObjects),
      sampledLive: s.sampledLive,
      growthBytesPerMin: Math.round(growth),
      fit: Math.round(r2 * 1000) / 1000,
      score: growth > 0 ? Math.round(s.live * r2) : 0,
      allocatedBytes: Math.round(s.allocated),
      freedBytes: Math.round(s.freed),
      firstAllocMs: (s.firstUs - origin) / 1000,
      lastAllocMs: (s.lastUs - origin) / 1000,
      stack: top === undefined ? [] : namesOutermostFirst(trace, top.stack),
    });
  }
  suspects.sort(
    (a, b) =>
      b.score - a.score ||
      b.liveBytes - a.liveBytes ||
      (a.funcname < b.funcname ? -1 : a.funcname > b.funcname ? 1 : 0),
  );
  const limit = options.limit === undefined ? 20 : options.limit <= 0 ? Infinity : options.limit;
  return {
    intervalBytes: interval,
    durationMs: Number.isNaN(summary.lastUs) ? 0 : (summary.lastUs - origin) / 1000,
    polls,
    liveBytes: Math.round(liveBytes),
    suspects: suspects.slice(0, limit),
  };
}

/** Least squares through n points from their sums: slope (y per t) and R² (0 when either side has no spread). */
export function fitLine(
  n: number,
  st: number,
  stt: number,
  sy: number,
  syy: number,
  sty: number,
): { slope: number; r2: number } {
  const vt = n * stt - st * st;
  const vy = n * syy - sy * sy;
  const cov = n * sty - st * sy;
  if (n < 2 || !(vt > 0)) return { slope: 0, r2: 0 };
  const slope = cov / vt;
  // A spread lost to rounding (vy tiny against syy) is no trend.
  if (!(vy > 1e-9 * n * syy)) return { slope, r2: 0 };
  return { slope, r2: Math.min(1, Math.max(0, (cov * cov) / (vt * vy))) };
}

function namesOutermostFirst(trace: HeapTraceSource, stack: number): string[] {
  return trace.stacks
    .toArray(stack)
    .reverse()
    .map((f) => anonymousName((trace.frames[f] as Frame).funcname));
}

/** The report as text: one row per suspect, evidence beside it. */
export function formatLeakTable(report: LeakReport, unitBytes: (v: number) => string): string {
  const header = ['live', 'growth/min', 'R²', 'allocated', 'freed', 'site'];
  const rows = report.suspects.map((s) => [
    unitBytes(s.liveBytes),
    `${s.growthBytesPerMin >= 0 ? '+' : ''}${unitBytes(s.growthBytesPerMin)}`,
    s.fit.toFixed(2),
    unitBytes(s.allocatedBytes),
    unitBytes(s.freedBytes),
    `${s.funcname}${s.filename === '' ? '' : `  ${s.filename}${s.lineno === null ? '' : `:${s.lineno}`}`}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padStart(widths[i]!))).join('  ');
  const foot =
    `${report.polls} polls over ${(report.durationMs / 1000).toFixed(1)} s; ` +
    `${unitBytes(report.liveBytes)} live at the end (sampled every ${unitBytes(report.intervalBytes)}, scaled)`;
  return [line(header), ...rows.map(line), foot].join('\n');
}
