/**
 * Chrome DevTools / V8 `.cpuprofile` (the Profiler.Profile object of the
 * DevTools protocol): a call tree of `nodes` rooted at "(root)", `samples`
 * (node ids) and `timeDeltas` (µs; the first is relative to `startTime`).
 *
 * V8 writes 0-based lineNumber/columnNumber (-1 = unknown); Tachyon frames
 * are 1-based, so the converters add or subtract one.
 *
 * A .cpuprofile holds one thread. For a model with several threads each one
 * gets its own child of (root), a synthetic frame "(thread ID)" with URL
 * `profpack:thread`; the extra top-level key `$profpack` (ignored by DevTools
 * and speedscope) lists them so the reverse conversion restores thread ids,
 * and carries per-sample status bytes only when they differ from what the
 * sample's leaf frame implies.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { MemoryProfile, NodeStatus, readJsonShape, threadKey, parseThreadKey, type Frame, type ProfileSource } from './model';

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
  /** Self ticks by 1-based source line within the function (V8 sends them with every profile). */
  positionTicks?: { line: number; ticks: number }[];
}

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
  $profpack?: CpuProfileMeta;
}

export const THREAD_FRAME_URL = 'profpack:thread';

/** The status a recording gives a sample whose leaf is this V8 frame. */
export function statusForV8Leaf(funcname: string | undefined, url: string | undefined): number {
  if (url === '' || url === undefined) {
    if (funcname === '(idle)') return 0;
    if (funcname === '(garbage collector)') return NodeStatus.OnCpu | NodeStatus.InGc;
  }
  return NodeStatus.OnCpu;
}

interface TrieNode {
  frame: number; // -1 for a root
  children: Map<number, TrieNode>;
  id: number;
  hits: number;
}

function newTrie(frame: number): TrieNode {
  return { frame, children: new Map(), id: 0, hits: 0 };
}

export interface ToCpuProfileOptions {
  /** Only this thread (key "tid" or "tid@interp"); default all threads. */
  thread?: string;
}

/** Model → .cpuprofile. Samples are written in time order, as DevTools requires non-negative deltas. */
export function toCpuProfile(source: ProfileSource, options: ToCpuProfileOptions = {}): CpuProfile {
  const threadRoots = new Map<string, TrieNode>();
  const leafOf: TrieNode[] = [];
  const times: bigint[] = [];
  const statuses: number[] = [];
  for (const sample of source.samples()) {
    const key = threadKey(sample.threadId, sample.interpreterId);
    if (options.thread !== undefined && key !== options.thread) continue;
    let node: TrieNode | undefined = threadRoots.get(key);
    if (node === undefined) {
      node = newTrie(-1);
      threadRoots.set(key, node);
    }
    for (let i = sample.stack.length - 1; i >= 0; i--) {
      const frame = sample.stack[i]!;
      let child: TrieNode | undefined = node.children.get(frame);
      if (child === undefined) {
        child = newTrie(frame);
        node.children.set(frame, child);
      }
      node = child;
    }
    node.hits++;
    leafOf.push(node);
    times.push(sample.timestampUs);
    statuses.push(sample.status);
  }

  const nodes: CpuProfileNode[] = [];
  const frames = source.frames;
  const emit = (trie: TrieNode, callFrame: CpuProfileCallFrame): CpuProfileNode => {
    trie.id = nodes.length + 1;
    const node: CpuProfileNode = { id: trie.id, callFrame, hitCount: trie.hits, children: [] };
    nodes.push(node);
    for (const child of trie.children.values()) {
      node.children!.push(emit(child, v8CallFrame(frames[child.frame]!)).id);
    }
    return node;
  };
  const root: CpuProfileNode = { id: 1, callFrame: rootCallFrame(), hitCount: 0, children: [] };
  nodes.push(root);
  const meta: CpuProfileMeta = { version: 1, threads: [], sampleIntervalUs: Number(source.meta.sampleIntervalUs) };
  if (threadRoots.size === 1) {
    const [key, trie] = threadRoots.entries().next().value as [string, TrieNode];
    trie.id = 1;
    root.hitCount = trie.hits;
    for (const child of trie.children.values()) root.children!.push(emit(child, v8CallFrame(frames[child.frame]!)).id);
    const { threadId, interpreterId } = parseThreadKey(key);
    meta.threads.push({ threadId: threadId.toString(), interpreterId });
  } else {
    for (const [key, trie] of threadRoots) {
      const { threadId, interpreterId } = parseThreadKey(key);
      const node = emit(trie, { functionName: `(thread ${key})`, scriptId: '0', url: THREAD_FRAME_URL, lineNumber: -1, columnNumber: -1 });
      root.children!.push(node.id);
      meta.threads.push({ threadId: threadId.toString(), interpreterId, nodeId: node.id });
    }
  }

  const order = times.map((_, i) => i);
  order.sort((a, b) => (times[a]! < times[b]! ? -1 : times[a]! > times[b]! ? 1 : a - b));
  const samples: number[] = new Array(order.length);
  const timeDeltas: number[] = new Array(order.length);
  const start = times.length > 0 && times[order[0]!]! < source.meta.startTimeUs ? times[order[0]!]! : source.meta.startTimeUs;
  let previous = start;
  let statusDiffers = false;
  const statusOut: number[] = new Array(order.length);
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const leaf = leafOf[i]!;
    samples[k] = leaf.id;
    timeDeltas[k] = Number(times[i]! - previous);
    previous = times[i]!;
    const status = statuses[i]!;
    statusOut[k] = status;
    const leafFrame = leaf.frame >= 0 ? frames[leaf.frame] : undefined;
    if (status !== statusForV8Leaf(leafFrame?.funcname, leafFrame?.filename)) statusDiffers = true;
  }
  if (statusDiffers) meta.status = statusOut;
  // endTime: the stated duration when the source has one (V8 ends a profile after its last sample).
  const stated = source.meta.durationUs === undefined ? undefined : start + source.meta.durationUs;
  const end = stated !== undefined && stated > previous ? stated : previous;
  return { nodes, startTime: Number(start), endTime: Number(end), samples, timeDeltas, $profpack: meta };
}

function rootCallFrame(): CpuProfileCallFrame {
  return { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
}

function v8CallFrame(f: Frame): CpuProfileCallFrame {
  return {
    functionName: f.funcname,
    scriptId: '0',
    url: f.filename,
    lineNumber: f.lineno === null ? -1 : f.lineno - 1,
    columnNumber: f.column === null ? -1 : f.column - 1,
  };
}

/** The model frame of a V8 call frame (1-based positions; -1 → null). */
export function frameFromV8(cf: CpuProfileCallFrame): Frame {
  return {
    filename: cf.url ?? '',
    funcname: cf.functionName ?? '',
    lineno: typeof cf.lineNumber === 'number' && cf.lineNumber >= 0 ? cf.lineNumber + 1 : null,
    endLineno: null,
    column: typeof cf.columnNumber === 'number' && cf.columnNumber >= 0 ? cf.columnNumber + 1 : null,
    endColumn: null,
    opcode: null,
  };
}

function bad(message: string): ProfpackError {
  return new ProfpackError(`not a .cpuprofile: ${message}`, { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'a Chrome DevTools .cpuprofile' });
}

export interface FromCpuProfileOptions {
  /** Thread id for a profile without profpack's metadata (Node writes one file per thread); default 0. */
  threadId?: bigint;
}

/** A node of the older nested form (Node ≤ 10, Chrome ≤ 57): call-frame fields on the node, children as objects. */
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
 * The nested form → the flat one, as DevTools converts it: `head` is the
 * tree, positions are 1-based (0 = unknown), startTime/endTime are seconds
 * and `timestamps` are absolute µs. Without timestamps the samples are spread
 * evenly over [startTime, endTime].
 */
function flattenNested(input: { head: NestedNode; startTime?: number; endTime?: number; samples?: unknown; timestamps?: unknown }): CpuProfile {
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
      hitCount: node.hitCount,
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
    if (node.children !== undefined && !Array.isArray(node.children)) throw bad(`node ${out.id}'s children is not an array`);
    for (const child of node.children ?? []) {
      const c = visit(child);
      out.children!.push(c.id);
      pending.push([child, c]);
    }
  }
  const samples = Array.isArray(input.samples) ? (input.samples as number[]) : [];
  const startUs = Number(input.startTime ?? 0) * 1e6;
  const endUs = Number(input.endTime ?? input.startTime ?? 0) * 1e6;
  const timestamps = Array.isArray(input.timestamps) && input.timestamps.length === samples.length ? (input.timestamps as number[]) : undefined;
  const step = samples.length > 0 ? (endUs - startUs) / samples.length : 0;
  const timeDeltas = samples.map((_, i) => (timestamps === undefined ? (i === 0 ? 0 : step) : Number(timestamps[i]) - (i === 0 ? startUs : Number(timestamps[i - 1]))));
  return { nodes, startTime: startUs, endTime: endUs, samples, timeDeltas };
}

/** .cpuprofile (V8/Node/DevTools, or one profpack wrote; the nested form of Node ≤ 10 too) → model. */
export function fromCpuProfile(input: unknown, options: FromCpuProfileOptions = {}): MemoryProfile {
  return readJsonShape('.cpuprofile', 'a Chrome DevTools .cpuprofile', () => readCpuProfile(input, options));
}

function readCpuProfile(input: unknown, options: FromCpuProfileOptions): MemoryProfile {
  const nested = input as { nodes?: unknown; head?: unknown };
  const profile = nested !== null && typeof nested === 'object' && !Array.isArray(nested.nodes) && nested.head !== null && typeof nested.head === 'object' ? flattenNested(nested as Parameters<typeof flattenNested>[0]) : (input as CpuProfile);
  if (profile === null || typeof profile !== 'object' || !Array.isArray(profile.nodes)) throw bad('no "nodes" array');
  const samples = Array.isArray(profile.samples) ? profile.samples : [];
  const deltas = Array.isArray(profile.timeDeltas) ? profile.timeDeltas : [];
  if (deltas.length !== samples.length) throw bad(`${samples.length} samples but ${deltas.length} timeDeltas`);
  const meta = profile.$profpack;
  const interval = meta?.sampleIntervalUs ?? estimateInterval(deltas);
  const out = new MemoryProfile({ startTimeUs: BigInt(Math.round(Number(profile.startTime ?? 0))), sampleIntervalUs: BigInt(Math.max(1, Math.round(interval))) });
  const span = Math.round(Number(profile.endTime) - Number(profile.startTime));
  if (Number.isSafeInteger(span) && span > 0) out.meta.durationUs = BigInt(span);

  const byId = new Map<number, CpuProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    if (node === null || typeof node !== 'object' || typeof node.id !== 'number' || node.callFrame === undefined) throw bad('a node without id or callFrame');
    byId.set(node.id, node);
  }
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) {
      if (!byId.has(child)) throw bad(`node ${node.id} names missing child ${child}`);
      parent.set(child, node.id);
    }
  }
  const threadNodes = new Map<number, { threadId: bigint; interpreterId: number }>();
  let defaultThread = { threadId: options.threadId ?? 0n, interpreterId: 0 };
  for (const t of meta?.threads ?? []) {
    const entry = { threadId: BigInt(t.threadId), interpreterId: t.interpreterId };
    if (t.nodeId !== undefined) threadNodes.set(t.nodeId, entry);
    else defaultThread = entry;
  }

  // Per node: its stack (innermost first) and its thread, resolved once.
  const resolved = new Map<number, { stack: number[]; thread: { threadId: bigint; interpreterId: number }; leaf: CpuProfileCallFrame | undefined }>();
  const resolve = (id: number) => {
    const hit = resolved.get(id);
    if (hit !== undefined) return hit;
    const stack: number[] = [];
    let thread = defaultThread;
    let cur: number | undefined = id;
    let guard = 0;
    while (cur !== undefined) {
      const node = byId.get(cur)!;
      if (threadNodes.has(cur)) {
        thread = threadNodes.get(cur)!;
        break;
      }
      if (parent.get(cur) === undefined) break; // the root, "(root)"
      stack.push(out.internFrame(frameFromV8(node.callFrame)));
      cur = parent.get(cur);
      if (++guard > profile.nodes.length) throw bad('the node tree has a cycle');
    }
    const entry = { stack, thread, leaf: stack.length > 0 ? byId.get(id)!.callFrame : undefined };
    resolved.set(id, entry);
    return entry;
  };

  let time = BigInt(Math.round(Number(profile.startTime ?? 0)));
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i]!;
    if (!byId.has(id)) throw bad(`sample ${i} names missing node ${id}`);
    time += BigInt(Math.round(Number(deltas[i])));
    const { stack, thread, leaf } = resolve(id);
    const status = meta?.status?.[i] ?? statusForV8Leaf(leaf?.functionName, leaf?.url);
    out.writeStack(thread.threadId, thread.interpreterId, time, status, stack);
  }
  return out;
}

function estimateInterval(deltas: number[]): number {
  if (deltas.length < 2) return 1000;
  const sorted = deltas.slice(1).filter((d) => d > 0).sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? 1000;
}
