/**
 * The .cpuprofile reader's input: a flat profile as columns (node ids, call
 * frames, children, positionTicks, samples and deltas), made either by the
 * byte scan (cpuprofile-scan.ts, what V8 writes) or here from the document
 * JSON.parse gives (every other input: the nested form of Node ≤ 10 / Chrome
 * ≤ 57, `timestamps`, and every malformed one, whose errors are named here
 * and in the core).
 */
import { badInput } from '../io';
import type { CpuProfile, CpuProfileCallFrame, CpuProfileMeta, CpuProfileNode } from '../../v8/index';

export const WHAT = '.cpuprofile';
export const EXPECTED = 'a Chrome DevTools .cpuprofile (Profiler.Profile)';

export const bad = (message: string) => badInput(WHAT, message, EXPECTED);

/** A flat .cpuprofile's call tree and scalars as columns: everything but its two lists of samples. */
export interface CpuTree {
  /** Node ids, in `nodes` order. */
  ids: ArrayLike<unknown>;
  /** Node k's call frame: callFrames[frameOf[k]]. */
  frameOf: ArrayLike<number>;
  callFrames: CpuProfileCallFrame[];
  /** Node k's children are children[childStart[k]] … children[childStart[k + 1] - 1]. */
  childStart: ArrayLike<number>;
  children: ArrayLike<unknown>;
  /** Node index → its positionTicks as [line, ticks, line, ticks…]; undefined when no node has any. */
  lineTicks: Record<number, number[]> | undefined;
  startTime: unknown;
  endTime: unknown;
  meta: CpuProfileMeta | undefined;
}

/** A flat .cpuprofile as columns: what both of the reader's front ends hand its one core. */
export interface CpuColumns extends CpuTree {
  samples: ArrayLike<unknown>;
  deltas: ArrayLike<unknown>;
}

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
  const step = samples.length > 0 ? (endUs - startUs) / samples.length : 0;
  const timeDeltas =
    deltasOfTimestamps(input.timestamps, samples.length, startUs) ?? samples.map((_, i) => (i === 0 ? 0 : step));
  return { nodes, startTime: startUs, endTime: endUs, samples, timeDeltas };
}

/**
 * `timestamps` (absolute µs, one per sample: the nested form and Node ≤ 10's flat one) as timeDeltas, the
 * first relative to the start; undefined when there is no such list.
 */
function deltasOfTimestamps(timestamps: unknown, count: number, startUs: number): number[] | undefined {
  if (!Array.isArray(timestamps) || timestamps.length !== count) return undefined;
  return timestamps.map((t, i) => Number(t) - (i === 0 ? startUs : Number(timestamps[i - 1])));
}

/** A node's positionTicks as [line, ticks, line, ticks…] (whole numbers, ticks ≥ 0); undefined for none. */
function positionTicks(node: CpuProfileNode): number[] | undefined {
  const ticks: unknown = node.positionTicks;
  if (ticks === undefined) return undefined;
  if (!Array.isArray(ticks)) throw bad(`node ${node.id}'s positionTicks is not an array`);
  const flat: number[] = [];
  for (const [j, t] of (ticks as unknown[]).entries()) {
    const { line, ticks: count } = (t ?? {}) as { line?: unknown; ticks?: unknown };
    if (!Number.isSafeInteger(line) || !Number.isSafeInteger(count) || (count as number) < 0)
      throw bad(`node ${node.id}'s positionTicks[${j}] is not { line, ticks } in whole numbers`);
    flat.push(line as number, count as number);
  }
  return flat.length > 0 ? flat : undefined;
}

/** The parsed document as the core's columns (the path of any input the byte scan does not take). */
export function columnsOf(doc: unknown): CpuColumns {
  const nested = doc as { nodes?: unknown; head?: unknown };
  if (doc === null || typeof doc !== 'object') throw bad('not a JSON object');
  const profile =
    !Array.isArray(nested.nodes) && nested.head !== null && typeof nested.head === 'object'
      ? flattenNested(doc as Parameters<typeof flattenNested>[0])
      : (doc as CpuProfile);
  if (!Array.isArray(profile.nodes)) throw bad('no "nodes" array');
  const samples = Array.isArray(profile.samples) ? profile.samples : [];
  const deltas = Array.isArray(profile.timeDeltas)
    ? profile.timeDeltas
    : (deltasOfTimestamps(profile.timestamps, samples.length, Number(profile.startTime ?? 0)) ?? []);
  const nodes = profile.nodes;
  const count = nodes.length;
  const ids = new Array<unknown>(count);
  const frameOf = new Int32Array(count);
  const callFrames = new Array<CpuProfileCallFrame>(count);
  for (let k = 0; k < count; k++) {
    const node = nodes[k];
    if (
      node === null ||
      typeof node !== 'object' ||
      typeof node.id !== 'number' ||
      node.callFrame === null ||
      typeof node.callFrame !== 'object'
    )
      throw bad('a node without id or callFrame');
    ids[k] = node.id;
    frameOf[k] = k;
    callFrames[k] = node.callFrame;
  }
  const childStart = new Int32Array(count + 1);
  const children: unknown[] = [];
  let lineTicks: Record<number, number[]> | undefined;
  for (let k = 0; k < count; k++) {
    const list = nodes[k]!.children;
    if (list !== undefined && !Array.isArray(list)) throw bad(`node ${nodes[k]!.id}'s children is not an array`);
    for (const child of list ?? []) children.push(child);
    childStart[k + 1] = children.length;
    const ticks = positionTicks(nodes[k]!);
    if (ticks !== undefined) (lineTicks ??= {})[k] = ticks;
  }
  const meta = profile.$profpack !== null && typeof profile.$profpack === 'object' ? profile.$profpack : undefined;
  return {
    ids,
    frameOf,
    callFrames,
    childStart,
    children,
    lineTicks,
    samples,
    deltas,
    startTime: profile.startTime,
    endTime: profile.endTime,
    meta,
  };
}
