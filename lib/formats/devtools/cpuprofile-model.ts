/**
 * The .cpuprofile reader's model of the call tree, shared by its two ways
 * with the records: held (cpuprofile.ts: every record in a ProfileBuilder)
 * and streamed from the file (cpuprofile-stream.ts). Everything here grows
 * with nodes, never with samples.
 */
import { SampleTypes, ProfileBuilder } from '../../profile/index';
import { THREAD_FRAME_URL, frameFromV8, statusForV8Leaf } from '../../v8/index';
import { bad, type CpuTree } from './cpuprofile-columns';

/** A thread or interpreter id of `$profpack`: a whole number ≥ 0 (a thread id may be decimal text, u64). */
function wholeNumber(value: unknown, where: string, text: boolean): bigint {
  const ok =
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) ||
    (text && typeof value === 'string' && /^\d{1,20}$/.test(value) && BigInt(value) < 2n ** 64n);
  if (!ok) throw bad(`${where} is ${JSON.stringify(value) ?? String(value)}, not a whole number`);
  return BigInt(value);
}

/**
 * Node id -> its place in `nodes`, -1 when absent: one Int32Array when ids are
 * small integers (V8 numbers them 1..n), a Map otherwise. Two nodes with one id are refused.
 */
export function nodeIndex(ids: ArrayLike<unknown>): (id: unknown) => number {
  let max = -1;
  let dense = true;
  const count = ids.length;
  for (let k = 0; k < count; k++) {
    const id = ids[k] as number;
    if (!Number.isInteger(id) || id < 0) dense = false;
    else if (id > max) max = id;
  }
  if (dense && max < 4 * count + 1024) {
    const at = new Int32Array(max + 1).fill(-1);
    for (let k = 0; k < count; k++) {
      const id = ids[k] as number;
      if (at[id] !== -1) throw bad(`two nodes have id ${id}`);
      at[id] = k;
    }
    return (id) => (Number.isInteger(id) && (id as number) >= 0 && (id as number) <= max ? at[id as number]! : -1);
  }
  const at = new Map<unknown, number>();
  for (let k = 0; k < count; k++) {
    if (at.has(ids[k])) throw bad(`two nodes have id ${String(ids[k])}`);
    at.set(ids[k], k);
  }
  return (id) => at.get(id) ?? -1;
}

/** The builder with its tables, and per node (by place in `nodes`) its stack, thread and leaf status. */
export interface CpuModel {
  out: ProfileBuilder;
  index: (id: unknown) => number;
  stackOf: Uint32Array;
  /** -1: no root reaches the node. */
  threadOf: Int32Array;
  statusOf: Uint8Array;
  startUs: number;
  nominalUs: number;
  /** `$profpack.status`, when it has one per sample. */
  statuses: unknown[] | undefined;
  /** The stack of `stack`'s leaf at its hot `line` (> 0), interned once per (stack, line). */
  hotStack(stack: number, line: number): number;
}

/**
 * The profile's model before its records: meta, frames, threads and a stack per node. `samples` and `deltas` are
 * the lengths of the two lists; `median` gives the median gap (medianGap), asked only when no interval is stated.
 */
export function cpuModel(profile: CpuTree, samples: number, deltas: number, median: () => number): CpuModel {
  const { meta } = profile;
  if (deltas !== samples) throw bad(`${samples} samples but ${deltas} timeDeltas`);
  const nominalUs = typeof meta?.sampleIntervalUs === 'number' && meta.sampleIntervalUs > 0 ? meta.sampleIntervalUs : 0;
  const intervalUs = nominalUs > 0 ? nominalUs : median();
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

  // Nodes resolved once into arrays indexed by their place in `nodes` (no Map per node or per sample).
  const { ids, children, childStart, frameOf, callFrames } = profile;
  const count = ids.length;
  const index = nodeIndex(ids);
  const parent = new Int32Array(count).fill(-1);
  for (let k = 0; k < count; k++) {
    for (let j = childStart[k]!; j < childStart[k + 1]!; j++) {
      const c = index(children[j]);
      if (c < 0) throw bad(`node ${String(ids[k])} names missing child ${String(children[j])}`);
      if (parent[c] !== -1) throw bad(`node ${String(children[j])} has two parents`);
      parent[c] = k;
    }
  }
  // A thread's marker node (profpack's `$profpack.threads`) starts that thread's stacks; -1: none.
  const threadOfNode = new Int32Array(count).fill(-1);
  let defaultThread = -1;
  const metaThreads: unknown[] = Array.isArray(meta?.threads) ? meta.threads : [];
  for (const [k, entry] of metaThreads.entries()) {
    if (entry === null || typeof entry !== 'object') throw bad(`$profpack.threads[${k}] is not an object`);
    const t = entry as Partial<Record<'threadId' | 'interpreterId' | 'nodeId', unknown>>;
    const id = out.internThread(
      wholeNumber(t.threadId, `$profpack.threads[${k}].threadId`, true),
      Number(wholeNumber(t.interpreterId ?? 0, `$profpack.threads[${k}].interpreterId`, false)),
    );
    if (typeof t.nodeId !== 'number') defaultThread = id;
    else if (index(t.nodeId) >= 0) threadOfNode[index(t.nodeId)] = id;
  }
  if (defaultThread < 0) defaultThread = out.internThread(0n);

  // Stack, thread and leaf status of every node reachable from a root, parents first (no recursion: trees can be deep).
  const stackOf = new Uint32Array(count);
  const threadOf = new Int32Array(count).fill(-1);
  const statusOf = new Uint8Array(count);
  const pending: number[] = [];
  for (let k = 0; k < count; k++) {
    if (parent[k] !== -1) continue;
    threadOf[k] = threadOfNode[k] !== -1 ? threadOfNode[k]! : defaultThread;
    statusOf[k] = statusForV8Leaf(undefined, undefined);
    pending.push(k);
  }
  // A call frame's model frame, interned once per distinct call frame (the byte scan shares them among nodes).
  const frameIdOf = new Int32Array(callFrames.length).fill(-1);
  while (pending.length > 0) {
    const k = pending.pop()!;
    for (let j = childStart[k]!; j < childStart[k + 1]!; j++) {
      const c = index(children[j]);
      const cf = callFrames[frameOf[c]!]!;
      if (threadOfNode[c] !== -1 && cf.url === THREAD_FRAME_URL) {
        threadOf[c] = threadOfNode[c]!;
        statusOf[c] = statusForV8Leaf(undefined, undefined);
      } else {
        let frame = frameIdOf[frameOf[c]!]!;
        if (frame < 0) frame = frameIdOf[frameOf[c]!] = out.internFrame(frameFromV8(cf));
        stackOf[c] = out.stacks.push(stackOf[k]!, frame);
        threadOf[c] = threadOf[k]!;
        statusOf[c] = statusForV8Leaf(cf.functionName, cf.url);
      }
      pending.push(c);
    }
  }

  const lineStacks = new Map<string, number>();
  const hotStack = (stack: number, line: number): number => {
    // The leaf's frame at its hot line, without a column: what a recording writes for the same tick.
    const key = `${stack}:${line}`;
    let hot = lineStacks.get(key);
    if (hot === undefined) {
      const frame = { ...out.frames[out.stacks.frame(stack)]!, lineno: line, column: null };
      hot = out.stacks.push(out.stacks.parent(stack), out.internFrame(frame));
      lineStacks.set(key, hot);
    }
    return hot;
  };
  const statuses = Array.isArray(meta?.status) && meta.status.length === samples ? meta.status : undefined;
  return { out, index, stackOf, threadOf, statusOf, startUs, nominalUs, statuses, hotStack };
}

/** Sample `i` names node `id`, found at `k` in `nodes` (-1: not found) but reached by no root, or not found. */
export function badSample(i: number, id: unknown, k: number): Error {
  return bad(
    k >= 0
      ? `sample ${i} names node ${String(id)}, which no root reaches (a cycle)`
      : `sample ${i} names missing node ${String(id)}`,
  );
}

export function badDelta(i: number): Error {
  return bad(`timeDeltas[${i}] is not a number`);
}

/** The time finite deltas lead to can still overflow to ±Infinity, which no output can write. */
export function checkTime(i: number, timeUs: number): void {
  if (!Number.isFinite(timeUs)) throw bad(`the time after timeDeltas[${i}] is ${timeUs} µs, not a finite number`);
}
