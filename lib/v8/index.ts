/**
 * lib/v8: V8's profile shapes (the DevTools protocol's Profiler.Profile and
 * HeapProfiler.SamplingHeapProfile) and what .cpuprofile, .heapprofile, the
 * recorder and the heap trace share: call frames both ways and the status of a
 * V8 leaf. Its own concern so the recorder needs none of lib/formats.
 *
 * V8 writes 0-based lineNumber/columnNumber (-1 = unknown); the model's
 * frames are 1-based (Tachyon's), so these add or subtract one.
 */
import { NodeStatus, scriptPath, type Frame } from '../profile/index';

export interface CpuProfileCallFrame {
  functionName: string;
  scriptId: string | number;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface CpuProfileNode {
  id: number;
  callFrame: CpuProfileCallFrame;
  hitCount?: number;
  children?: number[];
  /** 1-based source lines where this node's samples fell, and how many there. */
  positionTicks?: { line: number; ticks: number }[];
}

/** profpack's own top-level key (DevTools and speedscope ignore it): thread ids, statuses, the nominal interval. */
export interface CpuProfileMeta {
  version: 1;
  threads: { threadId: string; interpreterId: number; nodeId?: number }[];
  status?: number[];
  sampleIntervalUs?: number;
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
  /** Absolute sample times (µs) in place of timeDeltas: Node ≤ 10 / Chrome ≤ 57. */
  timestamps?: number[];
  $profpack?: CpuProfileMeta;
}

/** A node of HeapProfiler.SamplingHeapProfile: the tree is nested, sizes in bytes. */
export interface HeapProfileNode {
  callFrame: CpuProfileCallFrame;
  selfSize: number;
  id: number;
  children: HeapProfileNode[];
}

export interface HeapProfile {
  head: HeapProfileNode;
  samples?: { size: number; nodeId: number; ordinal: number }[];
}

/** URL of the synthetic "(thread ID)" frames older profpack versions wrote for multi-thread .cpuprofiles. */
export const THREAD_FRAME_URL = 'profpack:thread';

/** The status a recording gives a sample whose leaf is this V8 frame. */
export function statusForV8Leaf(funcname: string | undefined, url: string | undefined): number {
  if (url === '' || url === undefined) {
    if (funcname === '(idle)') return 0;
    if (funcname === '(garbage collector)') return NodeStatus.OnCpu | NodeStatus.InGc;
  }
  return NodeStatus.OnCpu;
}

/** One string per distinct V8 call frame (what a recording numbers call frames by). */
export function callFrameKey(cf: CpuProfileCallFrame): string {
  return `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}`;
}

/** The model frame of a V8 call frame (1-based positions; -1 → null; a `file:` URL as its path). */
export function frameFromV8(cf: CpuProfileCallFrame): Frame {
  return {
    filename: typeof cf.url === 'string' ? scriptPath(cf.url) : '',
    funcname: typeof cf.functionName === 'string' ? cf.functionName : '',
    lineno: typeof cf.lineNumber === 'number' && cf.lineNumber >= 0 ? cf.lineNumber + 1 : null,
    endLineno: null,
    column: typeof cf.columnNumber === 'number' && cf.columnNumber >= 0 ? cf.columnNumber + 1 : null,
    endColumn: null,
    opcode: null,
  };
}

export function v8CallFrame(f: Frame): CpuProfileCallFrame {
  return {
    functionName: f.funcname,
    scriptId: '0',
    url: f.filename,
    lineNumber: f.lineno === null ? -1 : f.lineno - 1,
    columnNumber: f.column === null ? -1 : f.column - 1,
  };
}

export const ROOT_CALL_FRAME: CpuProfileCallFrame = {
  functionName: '(root)',
  scriptId: '0',
  url: '',
  lineNumber: -1,
  columnNumber: -1,
};

/** V8's frame for time its thread spent off the CPU (a child of the root). */
export const IDLE_CALL_FRAME: CpuProfileCallFrame = { ...ROOT_CALL_FRAME, functionName: '(idle)' };

/**
 * A line for each sample (by its node index in `nodes`), from V8's positionTicks: V8 counts a node's self ticks
 * per line but does not say which tick was which, so the node's samples, in time order (`order`), take its lines
 * in the order V8 lists them, each as many as it has ticks. Per line the counts are V8's own; only the order
 * within one node's samples of one harvest is a guess. Samples beyond the ticks (or of a node without any) get 0:
 * the function's own line.
 */
export function sampleLines(
  nodes: ArrayLike<number>,
  order: readonly number[],
  lineTicks: Record<number, number[]>,
): Uint32Array {
  const lines = new Uint32Array(nodes.length);
  const next = new NodeLines(lineTicks);
  for (const i of order) lines[i] = next.line(nodes[i]!);
  return lines;
}

/**
 * sampleLines one sample at a time: `line(node)` is the line of that node's next sample in time order (0: none).
 * State per node that has positionTicks, none per sample: a reader whose samples come in time order streams them.
 */
export class NodeLines {
  private readonly cursor = new Map<number, { at: number; left: number }>();

  constructor(private readonly lineTicks: Record<number, number[]>) {}

  line(node: number): number {
    const ticks = this.lineTicks[node];
    if (ticks === undefined) return 0;
    let c = this.cursor.get(node);
    if (c === undefined) this.cursor.set(node, (c = { at: 0, left: ticks[1] ?? 0 }));
    while (c.left <= 0 && c.at + 2 < ticks.length) {
      c.at += 2;
      c.left = ticks[c.at + 1] ?? 0;
    }
    if (c.left <= 0) return 0;
    const line = ticks[c.at]!;
    c.left--;
    return Number.isInteger(line) && line > 0 ? line : 0;
  }
}

/**
 * The line of each sample from its node's positionTicks (sampleLines: V8's self ticks per line, handed to the
 * node's samples in time order), 0 for none; undefined when no node has positionTicks. `lineTicks`: node
 * index → [line, ticks, line, ticks…], as the .cpuprofile reader checked them.
 */
export function hotLines(
  lineTicks: Record<number, number[]> | undefined,
  nodeOf: Int32Array,
  times: Float64Array,
): Uint32Array | undefined {
  if (lineTicks === undefined) return undefined;
  const order = Array.from(nodeOf.keys()).sort((a, b) => times[a]! - times[b]! || a - b);
  return sampleLines(nodeOf, order, lineTicks);
}

export { postSync } from './inspector';
