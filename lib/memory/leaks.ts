/**
 * Leak suspects: allocation sites (the innermost frame of an allocation's
 * stack that is in a file of the program's own: a builtin or Node's internals
 * allocate on its behalf) ranked by the bytes they hold and by how steadily
 * those bytes grew. Each site's live bytes (scaled as pprof scales them) are
 * a series over the recording's polls from its first allocation; a
 * least-squares line through it gives the growth in bytes/min and R² says how
 * well a straight line explains it (1: grew at a steady pace, 0: no trend). A
 * leak holds much and grows steadily; a cache that filled and stopped, or
 * garbage that comes and goes, holds with no trend.
 *
 * The site is judged twice: at the end, and over its run (its polls up to the
 * last one holding its peak), because a program's own teardown (a module
 * scope that dies, a server that closes, then the last poll's GC) frees a
 * leak that grew for the whole run. A run counts when the site kept at least
 * half of what it allocated up to its peak although a GC ran meanwhile (some
 * object was freed at a poll after its first allocation), and allocated little
 * after it: garbage is freed by those GCs, or piles up until one and goes on
 * being allocated after it; a leak is not freed while its site allocates.
 * Without any GC in its run, growth cannot be told from garbage not yet
 * collected (the native sampler forces none), and the run is not counted.
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
  /**
   * The site's objects are external (Buffer and ArrayBuffer backing stores the recorder sampled): a site of its own
   * beside the same function's V8 heap objects; `leaf` names the allocating API, `(external) Buffer.alloc`.
   */
  external: boolean;
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
  /**
   * The stack (outermost first, function names) holding the most of the site's live bytes (or, for a site freed before
   * the end, allocating the most). Its innermost frame may be below the site: a builtin or Node's internals.
   */
  stack: string[];
  /** That stack's innermost function when it is not the site's (`String.prototype.repeat` for `repeat`), else null. */
  leaf: string | null;
  /** The thread (Node's threadId as recorded: 0 the main thread) that allocated most of the site's bytes. */
  threadId: string;
  /** The site's run: its polls from its first allocation up to the last one holding its peak. */
  run: LeakRun;
  /**
   * Held at the end, but it allocated nothing for the last quarter of its life, two polls and five of its own mean
   * gaps between sampled allocations at least: a cache that filled, not a leak still growing (its fit keeps the rise).
   */
  stoppedGrowing: boolean;
}

export interface LeakRun {
  /** The site's live bytes at its peak (scaled) and when (ms after the start). */
  peakBytes: number;
  peakMs: number;
  /** The fitted line over the run. */
  growthBytesPerMin: number;
  fit: number;
  /** Share of what the site allocated up to its peak that it still held there. */
  keptShare: number;
  /** Allocated by the site after its peak (scaled). */
  allocatedAfterPeakBytes: number;
  /** A GC ran during the run (an object was freed at a poll after the site's first allocation). */
  gcSeen: boolean;
  /**
   * The run counted: it grew steadily (R² ≥ 0.5), kept at least half of what it allocated, a GC ran during it, and
   * the site allocated little after its peak (a tenth of what it had before).
   */
  counted: boolean;
  /** The poll at which the site fell below half its peak for good, ms after the start (null: it did not). */
  freedAtMs: number | null;
  /**
   * …and the site allocated nothing after that: a teardown (its objects freed together once its work ended), at
   * the last poll's GC or, on the inspector sampler whose every poll is a GC, at the first poll after it.
   */
  freedAtExit: boolean;
}

export interface LeakReport {
  intervalBytes: number;
  durationMs: number;
  polls: number;
  /** All sampled live bytes at the end, scaled. */
  liveBytes: number;
  /**
   * Sites whose run counted and that held less than half their peak at the end: the end state differs from the
   * run (a leak freed by the program's own teardown). Counted over all sites, not only those shown.
   */
  freedBeforeEnd: number;
  /** No object was freed before the last poll: no GC was seen, so no run could count (growth may be garbage). */
  noGcSeen: boolean;
  /** Threads with heap events (each suspect names its thread; the table does when there are several). */
  threads: number;
  suspects: LeakSuspect[];
}

interface SiteState {
  frame: number;
  external: boolean;
  live: number;
  liveObjects: number;
  sampledLive: number;
  allocated: number;
  freed: number;
  firstUs: number;
  lastUs: number;
  /** Polls closed before its first allocation, and their Σt, Σt²: its series starts after them. */
  n0: number;
  st0: number;
  stt0: number;
  /** Polls closed and their Σt at the site's last change (t in s). */
  k0: number;
  t1: number;
  sy: number;
  syy: number;
  sty: number;
  /** Its peak (the last poll holding it), with the sums, polls, Σt, Σt² and allocated/freed bytes up to there. */
  peak: number;
  peakPoll: number;
  peakT: number;
  peakSums: [number, number, number, number, number, number];
  peakAllocated: number;
  peakFreed: number;
  /** The last poll with a free (a GC before it) up to the peak. */
  peakLastFree: number;
  /** When it fell below half its peak (NaN: it holds at least half), and the poll that was. */
  dropUs: number;
  dropPoll: number;
  /** The last poll it allocated at, and what it had allocated before that poll. */
  allocPoll: number;
  allocatedBeforeAllocPoll: number;
  /** Sampled allocations (for the mean gap between them). */
  sampledAllocs: number;
  /** Bytes allocated per thread index (a trace of one thread keeps none). */
  threadBytes: Float64Array | undefined;
}

const SITE_NONE = -1;
/** A run fits a line at least this well to count as steady growth. */
const MIN_RUN_FIT = 0.5;

/** A frame of the program's own code: a file that is neither a builtin's (none) nor Node's (node:…). */
function isUserFrame(frame: Frame): boolean {
  return frame.filename !== '' && !frame.filename.startsWith('node:') && !frame.filename.startsWith('internal/');
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
  let lastT = 0;
  /** The last closed poll at which an object was freed (a GC ran before it), and whether the open one has one. */
  let lastFreePoll = -1;
  let freePolls = 0;
  let openPollFreed = false;
  /**
   * The same for external objects: their WeakRefs are cleared by a full GC only (a scavenge keeps them), so the
   * frees of V8's young objects say nothing of whether an external store could have been freed.
   */
  let lastExternalFreePoll = -1;
  let openPollFreedExternal = false;
  /** Allocated bytes per stack, for the stack shown when a site holds nothing at the end. */
  let allocatedOfStack = new Float64Array(0);
  // The site of a stack: its innermost frame in the program's own files, else its innermost frame.
  const siteFrame = (stack: number): number => {
    for (let s = stack; s !== 0; s = trace.stacks.parent(s)) {
      const f = trace.stacks.frame(s);
      if (isUserFrame(trace.frames[f]!)) return f;
    }
    return trace.stacks.frame(stack);
  };
  // A stack keeps the site it was first given (a stack's objects are all external or none: the leaf tells).
  const siteOf = (stack: number, external = false): SiteState | undefined => {
    if (stack === NO_HEAP_STACK || stack === 0) return undefined;
    if (stack >= siteOfStack.length) {
      const grown = new Int32Array(Math.max(stack + 1, trace.stacks.size, siteOfStack.length * 2)).fill(SITE_NONE);
      grown.set(siteOfStack);
      siteOfStack = grown;
    }
    let s = siteOfStack[stack]!;
    if (s < 0) {
      const frame = siteFrame(stack);
      // A function's external stores are a site apart from its V8 objects (their stacks differ by their leaf).
      const key = frame * 2 + (external ? 1 : 0);
      s = siteOfFrame.get(key) ?? SITE_NONE;
      if (s < 0) {
        s = sites.length;
        siteOfFrame.set(key, s);
        sites.push({
          frame,
          external,
          live: 0,
          liveObjects: 0,
          sampledLive: 0,
          allocated: 0,
          freed: 0,
          firstUs: Infinity,
          lastUs: -Infinity,
          n0: polls,
          st0: t1,
          stt0: t2,
          k0: polls,
          t1,
          sy: 0,
          syy: 0,
          sty: 0,
          peak: 0,
          peakPoll: -1,
          peakT: 0,
          peakSums: [0, 0, 0, 0, 0, 0],
          peakAllocated: 0,
          peakFreed: 0,
          peakLastFree: -1,
          dropUs: Number.NaN,
          dropPoll: -1,
          allocPoll: -1,
          allocatedBeforeAllocPoll: 0,
          sampledAllocs: 0,
          threadBytes: trace.threads.length > 1 ? new Float64Array(trace.threads.length) : undefined,
        });
      }
      siteOfStack[stack] = s;
    }
    return sites[s];
  };
  // The polls since the site's last change all saw its current bytes; the last of them holds its peak if any does.
  const settle = (s: SiteState): void => {
    const n = polls - s.k0;
    if (n > 0 && s.live !== 0) {
      s.sy += s.live * n;
      s.syy += s.live * s.live * n;
      s.sty += s.live * (t1 - s.t1);
    }
    if (n > 0 && s.live > 0 && s.live >= s.peak) {
      s.peak = s.live;
      s.peakPoll = polls - 1;
      s.peakT = lastT;
      s.peakSums = [polls - s.n0, t1 - s.st0, t2 - s.stt0, s.sy, s.syy, s.sty];
      s.peakAllocated = s.allocated;
      s.peakFreed = s.freed;
      s.peakLastFree = s.external ? lastExternalFreePoll : lastFreePoll;
    }
    s.k0 = polls;
    s.t1 = t1;
  };
  const summary = replayHeapTrace(trace, {
    alloc(live, slot, timeUs) {
      const stack = live.stacks[slot]!;
      const s = siteOf(stack, live.externals[slot] === 1);
      if (s === undefined) return;
      const w = unsampledWeight(live.sizes[slot]!, interval);
      settle(s);
      s.live += w.bytes;
      s.liveObjects += w.objects;
      s.sampledLive++;
      if (s.allocPoll !== polls) {
        s.allocPoll = polls;
        s.allocatedBeforeAllocPoll = s.allocated;
      }
      s.allocated += w.bytes;
      s.sampledAllocs++;
      s.firstUs = Math.min(s.firstUs, timeUs);
      s.lastUs = Math.max(s.lastUs, timeUs);
      if (s.live >= s.peak / 2) s.dropUs = Number.NaN;
      if (stack >= allocatedOfStack.length) {
        const grown = new Float64Array(Math.max(stack + 1, trace.stacks.size, allocatedOfStack.length * 2));
        grown.set(allocatedOfStack);
        allocatedOfStack = grown;
      }
      allocatedOfStack[stack] = allocatedOfStack[stack]! + w.bytes;
      if (s.threadBytes !== undefined) s.threadBytes[live.threads[slot]!]! += w.bytes;
    },
    free(live, slot, timeUs) {
      openPollFreed = true;
      if (live.externals[slot] === 1) openPollFreedExternal = true;
      const s = siteOf(live.stacks[slot]!, live.externals[slot] === 1);
      if (s === undefined) return;
      const w = unsampledWeight(live.sizes[slot]!, interval);
      settle(s);
      s.live -= w.bytes;
      s.liveObjects -= w.objects;
      s.sampledLive--;
      s.freed += w.bytes;
      if (s.live < s.peak / 2 && Number.isNaN(s.dropUs)) {
        s.dropUs = timeUs;
        s.dropPoll = polls;
      }
    },
    poll(_live, timeUs) {
      if (Number.isNaN(startUs)) startUs = timeUs;
      const t = (timeUs - startUs) / 1e6;
      if (openPollFreed) {
        lastFreePoll = polls;
        freePolls++;
      }
      openPollFreed = false;
      if (openPollFreedExternal) lastExternalFreePoll = polls;
      openPollFreedExternal = false;
      polls++;
      t1 += t;
      t2 += t * t;
      lastT = t;
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
  // For sites freed before the end: the stack that allocated the most.
  const mostAllocated = new Map<SiteState, { stack: number; bytes: number }>();
  for (let stack = 1; stack < allocatedOfStack.length; stack++) {
    const bytes = allocatedOfStack[stack]!;
    const s = bytes > 0 ? siteOf(stack) : undefined;
    if (s !== undefined && bytes > (mostAllocated.get(s)?.bytes ?? -1)) mostAllocated.set(s, { stack, bytes });
  }
  const origin = trace.meta.startTimeUs;
  const lastUs = summary.lastUs;
  const span = lastT;
  const suspects: LeakSuspect[] = [];
  let liveBytes = 0;
  let freedBeforeEnd = 0;
  for (const s of sites) {
    settle(s);
    liveBytes += Math.max(0, s.live);
    const end = fitLine(polls - s.n0, t1 - s.st0, t2 - s.stt0, s.sy, s.syy, s.sty);
    const endScore = end.slope > 0 ? s.live * end.r2 : 0;
    const [rn, rst, rstt, rsy, rsyy, rsty] = s.peakSums;
    const runFit = fitLine(rn, rst, rstt, rsy, rsyy, rsty);
    const keptShare = s.peakAllocated > 0 ? (s.peakAllocated - s.peakFreed) / s.peakAllocated : 0;
    const gcSeen = s.peakLastFree > s.n0;
    // Garbage that piled up until a GC stops at its peak and goes on being allocated; a leak ends with its site.
    // What a site fell at the last poll allocated in that poll's interval is not after its fall: the exit's
    // collection freed it, and a leak that ran to the exit allocated there up to a harvest's worth (1 s by default).
    const fellAtLastPoll = !Number.isNaN(s.dropUs) && s.dropPoll === polls - 1 && s.allocPoll === polls - 1;
    const allocatedAfterPeak =
      s.allocated - s.peakAllocated - (fellAtLastPoll ? s.allocated - s.allocatedBeforeAllocPoll : 0);
    const counted =
      runFit.slope > 0 &&
      runFit.r2 >= MIN_RUN_FIT &&
      keptShare >= 0.5 &&
      gcSeen &&
      allocatedAfterPeak <= 0.1 * s.peakAllocated;
    // The run's score weighs its bytes by how much of the recording it spans: a burst early in the run is no leak.
    const firstT = (s.firstUs - startUs) / 1e6;
    const runScore = counted && span > 0 ? s.peak * runFit.r2 * Math.min(1, (s.peakT - firstT) / span) : 0;
    const freed = counted && !Number.isNaN(s.dropUs) && s.live < s.peak / 2;
    if (freed) freedBeforeEnd++;
    if (!(Math.round(s.live) > 0) && !(runScore > 0)) continue;
    const quietUs = lastUs - s.lastUs;
    const meanGapUs = s.sampledAllocs > 1 ? (s.lastUs - s.firstUs) / (s.sampledAllocs - 1) : Infinity;
    const stoppedGrowing =
      !freed &&
      s.live >= s.peak / 2 &&
      polls - 1 - s.allocPoll >= 2 &&
      quietUs >= 0.25 * (lastUs - s.firstUs) &&
      quietUs >= 5 * meanGapUs;
    const frame = trace.frames[s.frame]!;
    const top = (freed ? undefined : heaviest.get(s)) ?? mostAllocated.get(s);
    const leafFrame = top === undefined ? s.frame : trace.stacks.frame(top.stack);
    suspects.push({
      funcname: anonymousName(frame.funcname),
      external: s.external,
      filename: frame.filename,
      lineno: frame.lineno,
      liveBytes: Math.max(0, Math.round(s.live)),
      liveObjects: Math.max(0, Math.round(s.liveObjects)),
      sampledLive: s.sampledLive,
      growthBytesPerMin: Math.round(end.slope * 60),
      fit: round3(end.r2),
      score: Math.round(Math.max(endScore, runScore)),
      allocatedBytes: Math.round(s.allocated),
      freedBytes: Math.round(s.freed),
      firstAllocMs: (s.firstUs - origin) / 1000,
      lastAllocMs: (s.lastUs - origin) / 1000,
      stack: top === undefined ? [] : namesOutermostFirst(trace, top.stack),
      leaf: leafFrame === s.frame ? null : anonymousName((trace.frames[leafFrame] as Frame).funcname),
      threadId: String(trace.threads[mostOf(s.threadBytes)]?.threadId ?? 0n),
      run: {
        peakBytes: Math.round(s.peak),
        peakMs: s.peakPoll < 0 ? 0 : s.peakT * 1000 + (startUs - origin) / 1000,
        growthBytesPerMin: Math.round(runFit.slope * 60),
        fit: round3(runFit.r2),
        keptShare: round3(keptShare),
        allocatedAfterPeakBytes: Math.round(allocatedAfterPeak),
        gcSeen,
        counted,
        freedAtMs: freed ? (s.dropUs - origin) / 1000 : null,
        freedAtExit: freed && s.lastUs <= s.dropUs,
      },
      stoppedGrowing,
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
    durationMs: Number.isNaN(lastUs) ? 0 : (lastUs - origin) / 1000,
    polls,
    liveBytes: Math.round(liveBytes),
    freedBeforeEnd,
    noGcSeen: polls > 1 && freePolls - (lastFreePoll === polls - 1 ? 1 : 0) === 0,
    threads: trace.threads.length,
    suspects: suspects.slice(0, limit),
  };
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** The index of the largest value (0 for none). */
function mostOf(values: Float64Array | undefined): number {
  let best = 0;
  if (values !== undefined) for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
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
