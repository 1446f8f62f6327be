/**
 * Chrome DevTools / V8 `.cpuprofile` (Profiler.Profile): a call tree of
 * `nodes` rooted at "(root)", `samples` (node ids) and `timeDeltas` (µs, the
 * gap before each sample; the first is relative to `startTime`).
 *
 * Read: sample types samples/count and wall/nanoseconds (the default); a
 * sample weighs its real time, the gap to the next sample, as DevTools and
 * speedscope weigh it (the last one: the nominal interval, else the gap
 * before it). `positionTicks` (the lines a node's ticks fell on) become a
 * numeric `line` label on that node's samples, in order, so the line hits
 * come back out. The nested form of Node ≤ 10 / Chrome ≤ 57 reads too.
 *
 * Write: one thread (the format holds one; options.thread, else the busiest,
 * said through onWarning), samples in time order. With times, timeDeltas are
 * the real gaps; without (collapsed, speedscope), each sample's gap to the
 * next is its value (time units as µs, counts as that many intervals). The
 * top-level `$profpack` key keeps thread id, interval and statuses that differ
 * from what the leaf implies.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { SampleTypes, gapsToNext, nanosPerUnit, type ProfileSource } from '../profile/index';
import { ProfileBuilder } from '../profile/index';
import type { FormatAdapter, ReadInput, ReadOptions, WriteOptions, WriteTarget } from './adapter';
import {
  ChunkedText,
  badInput,
  cannotWrite,
  describeType,
  inputBytes,
  parseJson,
  pushNumbers,
  readJsonShape,
  writtenColumn,
} from './io';
import { detectJsonKeys } from './sniff';
import {
  ROOT_CALL_FRAME,
  THREAD_FRAME_URL,
  frameFromV8,
  statusForV8Leaf,
  v8CallFrame,
  type CpuProfile,
  type CpuProfileCallFrame,
  type CpuProfileMeta,
  type CpuProfileNode,
} from '../v8/index';
import { oneThread, v8Tree } from './one-thread';

const WHAT = '.cpuprofile';
const EXPECTED = 'a Chrome DevTools .cpuprofile (Profiler.Profile)';
/** The label that carries positionTicks' line through the model. */
export const LINE_LABEL = 'line';

/** The most samples a .cpuprofile is written with (its JSON lists every one). */
export const MAX_CPUPROFILE_SAMPLES = 10_000_000;

/** Samples a row stands for: its samples/count value as a whole number (a fraction or a negative counts as none). */
function sampleRun(count: number): number {
  return count >= 1 ? Math.floor(count) : 0;
}

const bad = (message: string) => badInput(WHAT, message, EXPECTED);

/** A node of the older nested form: call-frame fields on the node (1-based positions), children as objects. */
interface NestedNode {
  id?: number;
  functionName?: string;
  scriptId?: string | number;
  url?: string;
  lineNumber?: number;
  columnNumber?: number;
  hitCount?: number;
  children?: NestedNode[];
}

/**
 * The nested form → the flat one, as DevTools converts it: startTime/endTime
 * are seconds and `timestamps` absolute µs; without timestamps the samples
 * are spread evenly over [startTime, endTime].
 */
function flattenNested(input: {
  head: NestedNode;
  startTime?: number;
  endTime?: number;
  samples?: unknown;
  timestamps?: unknown;
}): CpuProfile {
  const nodes: CpuProfileNode[] = [];
  const used = new Set<number>();
  let nextId = 1;
  const visit = (node: NestedNode): CpuProfileNode => {
    if (node === null || typeof node !== 'object') throw bad('a "head" tree node is not an object');
    let id = typeof node.id === 'number' && !used.has(node.id) ? node.id : undefined;
    while (id === undefined || used.has(id)) id = nextId++;
    used.add(id);
    const out: CpuProfileNode = {
      id,
      callFrame: {
        functionName: String(node.functionName ?? ''),
        scriptId: node.scriptId ?? '0',
        url: String(node.url ?? ''),
        lineNumber: typeof node.lineNumber === 'number' ? node.lineNumber - 1 : -1,
        columnNumber: typeof node.columnNumber === 'number' ? node.columnNumber - 1 : -1,
      },
      children: [],
    };
    nodes.push(out);
    return out;
  };
  // Iterative: old profiles can nest deeper than the JS call stack allows.
  const root = visit(input.head);
  const pending: [NestedNode, CpuProfileNode][] = [[input.head, root]];
  while (pending.length > 0) {
    const [node, out] = pending.pop()!;
    if (node.children !== undefined && !Array.isArray(node.children))
      throw bad(`node ${out.id}'s children is not an array`);
    for (const child of node.children ?? []) {
      const c = visit(child);
      out.children!.push(c.id);
      pending.push([child, c]);
    }
  }
  const samples = Array.isArray(input.samples) ? (input.samples as number[]) : [];
  const startUs = Number(input.startTime ?? 0) * 1e6;
  const endUs = Number(input.endTime ?? input.startTime ?? 0) * 1e6;
  const timestamps =
    Array.isArray(input.timestamps) && input.timestamps.length === samples.length
      ? (input.timestamps as number[])
      : undefined;
  const step = samples.length > 0 ? (endUs - startUs) / samples.length : 0;
  const timeDeltas = samples.map((_, i) =>
    timestamps === undefined
      ? i === 0
        ? 0
        : step
      : Number(timestamps[i]) - (i === 0 ? startUs : Number(timestamps[i - 1])),
  );
  return { nodes, startTime: startUs, endTime: endUs, samples, timeDeltas };
}

function medianGap(deltas: number[]): number {
  const sorted = deltas
    .slice(1)
    .filter((d) => d > 0)
    .sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? 0;
}

function readCpuProfile(doc: unknown): ProfileBuilder {
  const nested = doc as { nodes?: unknown; head?: unknown };
  if (doc === null || typeof doc !== 'object') throw bad('not a JSON object');
  const profile =
    !Array.isArray(nested.nodes) && nested.head !== null && typeof nested.head === 'object'
      ? flattenNested(doc as Parameters<typeof flattenNested>[0])
      : (doc as CpuProfile);
  if (!Array.isArray(profile.nodes)) throw bad('no "nodes" array');
  const samples = Array.isArray(profile.samples) ? profile.samples : [];
  const deltas = Array.isArray(profile.timeDeltas) ? profile.timeDeltas : [];
  if (deltas.length !== samples.length) throw bad(`${samples.length} samples but ${deltas.length} timeDeltas`);
  const meta = profile.$profpack !== null && typeof profile.$profpack === 'object' ? profile.$profpack : undefined;
  const nominalUs = typeof meta?.sampleIntervalUs === 'number' && meta.sampleIntervalUs > 0 ? meta.sampleIntervalUs : 0;
  const intervalUs = nominalUs > 0 ? nominalUs : medianGap(deltas);
  const startUs = Math.round(Number(profile.startTime ?? 0));
  if (!Number.isSafeInteger(startUs)) throw bad(`startTime ${String(profile.startTime)} is not a time in µs`);
  const out = new ProfileBuilder({
    sampleTypes: [SampleTypes.samples, SampleTypes.wall],
    defaultSampleType: 1,
    periodType: SampleTypes.wall,
    period: Math.round(intervalUs * 1000),
    startTimeUs: BigInt(startUs),
    // V8 does not state its interval: 0 (none) unless profpack wrote it; the period holds the median gap.
    sampleIntervalUs: BigInt(Math.round(nominalUs)),
    origin: { format: 'cpuprofile', producer: meta === undefined ? undefined : 'profpack' },
  });
  const span = Math.round(Number(profile.endTime) - Number(profile.startTime));
  if (Number.isSafeInteger(span) && span > 0) out.meta.durationUs = BigInt(span);

  const byId = new Map<number, CpuProfileNode>();
  for (const node of profile.nodes) {
    if (
      node === null ||
      typeof node !== 'object' ||
      typeof node.id !== 'number' ||
      node.callFrame === null ||
      typeof node.callFrame !== 'object'
    )
      throw bad('a node without id or callFrame');
    if (byId.has(node.id)) throw bad(`two nodes have id ${node.id}`);
    byId.set(node.id, node);
  }
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    if (node.children !== undefined && !Array.isArray(node.children))
      throw bad(`node ${node.id}'s children is not an array`);
    for (const child of node.children ?? []) {
      if (!byId.has(child)) throw bad(`node ${node.id} names missing child ${child}`);
      if (parent.has(child)) throw bad(`node ${child} has two parents`);
      parent.set(child, node.id);
    }
  }
  const threadOfNode = new Map<number, number>();
  let defaultThread = -1;
  for (const t of Array.isArray(meta?.threads) ? meta.threads : []) {
    const id = out.internThread(BigInt(t.threadId), Number(t.interpreterId ?? 0));
    if (typeof t.nodeId === 'number') threadOfNode.set(t.nodeId, id);
    else defaultThread = id;
  }
  if (defaultThread < 0) defaultThread = out.internThread(0n);

  // Stack and thread of every node reachable from a root, parents first (no recursion: trees can be deep).
  const stackOf = new Map<number, { stack: number; thread: number }>();
  const pending: number[] = [];
  for (const node of profile.nodes) {
    if (parent.has(node.id)) continue;
    stackOf.set(node.id, { stack: 0, thread: threadOfNode.get(node.id) ?? defaultThread });
    pending.push(node.id);
  }
  while (pending.length > 0) {
    const id = pending.pop()!;
    const here = stackOf.get(id)!;
    for (const child of byId.get(id)!.children ?? []) {
      const thread = threadOfNode.get(child);
      const node = byId.get(child)!;
      const entry =
        thread !== undefined && node.callFrame.url === THREAD_FRAME_URL
          ? { stack: 0, thread }
          : { stack: out.stacks.push(here.stack, out.internFrame(frameFromV8(node.callFrame))), thread: here.thread };
      stackOf.set(child, entry);
      pending.push(child);
    }
  }

  // positionTicks: the lines each node's samples fell on, handed out in order.
  const ticksLeft = new Map<number, { lines: { line: number; ticks: number }[]; at: number; used: number }>();
  for (const node of profile.nodes) {
    if (Array.isArray(node.positionTicks) && node.positionTicks.length > 0)
      ticksLeft.set(node.id, { lines: node.positionTicks, at: 0, used: 0 });
  }
  const lineLabel = (nodeId: number): number => {
    const t = ticksLeft.get(nodeId);
    if (t === undefined) return 0;
    while (t.at < t.lines.length && t.used >= Number(t.lines[t.at]!.ticks)) {
      t.at++;
      t.used = 0;
    }
    if (t.at >= t.lines.length) return 0;
    t.used++;
    return out.internLabels([{ key: LINE_LABEL, num: Number(t.lines[t.at]!.line) }]);
  };

  const n = samples.length;
  const times = new Float64Array(n);
  const threads = new Uint32Array(n);
  const stacks = new Uint32Array(n);
  let time = startUs;
  for (let i = 0; i < n; i++) {
    const at = stackOf.get(samples[i]!);
    if (at === undefined)
      throw bad(
        byId.has(samples[i]!)
          ? `sample ${i} names node ${samples[i]}, which no root reaches (a cycle)`
          : `sample ${i} names missing node ${samples[i]}`,
      );
    const delta = Number(deltas[i]);
    if (!Number.isFinite(delta)) throw bad(`timeDeltas[${i}] is not a number`);
    time += delta;
    times[i] = time;
    threads[i] = at.thread;
    stacks[i] = at.stack;
  }
  const gaps = new Float64Array(n);
  gapsToNext(threads, times, n, nominalUs, gaps);
  const statuses = Array.isArray(meta?.status) && meta.status.length === n ? meta.status : undefined;
  const values = [1, 0];
  for (let i = 0; i < n; i++) {
    const leaf = byId.get(samples[i]!)!.callFrame;
    const status =
      statuses?.[i] ??
      statusForV8Leaf(stacks[i] === 0 ? undefined : leaf.functionName, stacks[i] === 0 ? undefined : leaf.url);
    values[1] = Math.round(gaps[i]!);
    out.add(stacks[i]!, threads[i]!, times[i]!, Number(status) & 0xff, values, lineLabel(samples[i]!));
  }
  return out;
}

/** Gap after each of `length` rows without times: its value as µs (time units) or as that many intervals (counts). */
function gapsFromValues(unit: string, intervalUs: number, values: Float64Array, length: number): Float64Array {
  const ns = nanosPerUnit(unit);
  const gaps = new Float64Array(length);
  for (let i = 0; i < length; i++) gaps[i] = ns === undefined ? values[i]! * intervalUs : (values[i]! * ns) / 1000;
  return gaps;
}

function writeCpuProfile(source: ProfileSource, target: WriteTarget, options: WriteOptions): void {
  const column = writtenColumn(source.meta, options.sampleType);
  const type = source.meta.sampleTypes[column]!;
  if (nanosPerUnit(type.unit) === undefined && type.unit !== 'count') {
    throw cannotWrite(
      'a .cpuprofile',
      `a .cpuprofile holds time, and ${describeType(source.meta, column)} is in ${type.unit}`,
      'a sample type in a time unit or a count (--sample-type)',
    );
  }
  const rows = oneThread(source, column, options.thread, WHAT, options.onWarning);
  const n = rows.length;
  const intervalUs = Number(source.meta.sampleIntervalUs) > 0 ? Number(source.meta.sampleIntervalUs) : 1000;
  let timed = n > 0;
  for (let i = 0; i < n && timed; i++) if (!Number.isFinite(rows.time[i]!)) timed = false;
  const order = Array.from({ length: n }, (_, i) => i);
  let startUs = Number(source.meta.startTimeUs);
  const times = new Float64Array(n);
  let endUs: number;
  if (timed) {
    order.sort((a, b) => rows.time[a]! - rows.time[b]! || a - b);
    for (let k = 0; k < n; k++) times[k] = rows.time[order[k]!]!;
    if (times[0]! < startUs) startUs = times[0]!;
    const last = order[n - 1]!;
    const lastGap =
      nanosPerUnit(type.unit) === undefined ? intervalUs : (rows.value[last]! * nanosPerUnit(type.unit)!) / 1000;
    endUs = times[n - 1]! + lastGap;
  } else {
    const gaps = gapsFromValues(type.unit, intervalUs, rows.value, n);
    let t = startUs;
    for (let k = 0; k < n; k++) {
      times[k] = t;
      t += gaps[k]!;
    }
    endUs = t;
  }
  const stated = source.meta.durationUs === undefined ? undefined : startUs + Number(source.meta.durationUs);
  if (stated !== undefined && stated > endUs) endUs = stated;

  const tree = v8Tree(source, rows.stack, n);
  // A row may stand for a run of samples (a Tachyon REPEAT run): V8's format lists samples, so the run's
  // samples are listed, spread evenly over its time. Bounded: the format has nothing smaller than a sample.
  let total = 0;
  for (let i = 0; i < n; i++) total += sampleRun(rows.samples[i]!);
  if (total > MAX_CPUPROFILE_SAMPLES) {
    throw new ProfpackError(
      `a .cpuprofile lists every sample, and this thread has ${total}; at most ${MAX_CPUPROFILE_SAMPLES} are written`,
      {
        code: ErrorCode.CONVERT_TOO_MANY_SAMPLES,
        expected: `at most ${MAX_CPUPROFILE_SAMPLES} samples`,
      },
    );
  }
  const ns = nanosPerUnit(type.unit);
  const hits = new Map<number, number>();
  const lineTicks = new Map<number, Map<number, number>>();
  const sampleIds = new Float64Array(total);
  const deltas = new Float64Array(total);
  const status = new Array<number>(total);
  let statusDiffers = false;
  let previous = Math.round(startUs);
  let written = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const stack = rows.stack[i]!;
    const node = tree.nodeOf[stack]!;
    const run = sampleRun(rows.samples[i]!);
    if (run === 0) continue;
    // The run's time: its value when the column is a time, else one interval a sample.
    const spanUs = ns === undefined ? run * intervalUs : (rows.value[i]! * ns) / 1000;
    hits.set(node, (hits.get(node) ?? 0) + run);
    const leaf = stack === 0 ? undefined : source.frames[source.stacks.frame(stack)];
    const rowStatus = rows.status[i]!;
    if (rowStatus !== statusForV8Leaf(leaf?.funcname, leaf?.filename)) statusDiffers = true;
    const line =
      rows.labels[i] === 0 ? undefined : source.labelSets[rows.labels[i]!]!.find((l) => l.key === LINE_LABEL)?.num;
    if (line !== undefined) {
      let perLine = lineTicks.get(node);
      if (perLine === undefined) lineTicks.set(node, (perLine = new Map()));
      perLine.set(line, (perLine.get(line) ?? 0) + run);
    }
    // Never a negative delta: a run's spread stops at the next record's time (a CPU-mode run weighs its ticks'
    // intervals, which may outlast the real gap), and no sample comes before the previous one.
    const nextUs = k + 1 < n ? Math.round(times[k + 1]!) : Infinity;
    for (let j = 0; j < run; j++) {
      const at = Math.max(previous, Math.min(nextUs, Math.round(times[k]! + (j * spanUs) / run)));
      sampleIds[written] = node;
      deltas[written] = at - previous;
      status[written] = rowStatus;
      previous = at;
      written++;
    }
  }

  const out = new ChunkedText(target);
  out.push('{"nodes":[');
  tree.order.forEach((stack, k) => {
    const id = tree.nodeOf[stack]!;
    const callFrame: CpuProfileCallFrame =
      stack === 0 ? ROOT_CALL_FRAME : v8CallFrame(source.frames[source.stacks.frame(stack)]!);
    const node: CpuProfileNode = { id, callFrame, hitCount: hits.get(id) ?? 0, children: tree.children.get(id) ?? [] };
    const ticks = lineTicks.get(id);
    if (ticks !== undefined) node.positionTicks = [...ticks].map(([line, count]) => ({ line, ticks: count }));
    out.push((k === 0 ? '' : ',') + JSON.stringify(node));
  });
  out.push(`],"startTime":${Math.round(startUs)},"endTime":${Math.round(endUs)},"samples":[`);
  pushNumbers(out, sampleIds);
  out.push('],"timeDeltas":[');
  pushNumbers(out, deltas);
  const thread = rows.thread < 0 ? undefined : source.threads[rows.thread]!;
  const meta: CpuProfileMeta = {
    version: 1,
    threads:
      thread === undefined ? [] : [{ threadId: thread.threadId.toString(), interpreterId: thread.interpreterId }],
    sampleIntervalUs: Number(source.meta.sampleIntervalUs),
  };
  out.push(`],"$profpack":${JSON.stringify(meta).slice(0, -1)}`);
  if (statusDiffers) {
    out.push(',"status":[');
    pushNumbers(out, status);
    out.push(']');
  }
  out.push('}}');
  out.flush();
}

export const cpuprofileAdapter: FormatAdapter = {
  name: 'cpuprofile',
  title: 'Chrome DevTools .cpuprofile',
  extensions: ['.cpuprofile'],
  mayBeGzipped: true,
  detect: (head) => {
    const keys = detectJsonKeys(head);
    if (keys === undefined) return false;
    if (keys.has('nodes') && (keys.has('callFrame') || keys.has('samples') || keys.has('timeDeltas'))) return true;
    // The nested form: a "head" tree of call-frame fields, no selfSize (that is a .heapprofile).
    return keys.has('head') && keys.has('functionName') && !keys.has('selfSize') && !keys.has('callFrame');
  },
  read(input: ReadInput, _options: ReadOptions): ProfileSource {
    const doc = parseJson(inputBytes(input), WHAT, EXPECTED);
    return readJsonShape(WHAT, EXPECTED, () => readCpuProfile(doc));
  },
  write: writeCpuProfile,
};
