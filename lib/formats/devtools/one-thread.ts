/**
 * The one thread a V8 file (.cpuprofile, .heapprofile) holds: the rows of the
 * thread chosen from a source, and the V8 node tree they become.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { sampleCountColumn, threadKey, type ProfileSource } from '../../profile/index';
import { DroppedLabels, GrowingFloats, GrowingUints } from '../io';

/** The records of one thread, in the source's order, with the value column being written. */
export interface ThreadRows {
  /** Index into source.threads; -1 when the source has no samples. */
  thread: number;
  key: string;
  stack: Uint32Array;
  time: Float64Array;
  value: Float64Array;
  /** Samples each row stands for (the samples/count column; 1 without one): a Tachyon REPEAT run is one row. */
  samples: Float64Array;
  status: Uint8Array;
  labels: Uint32Array;
  length: number;
}

class RowsBuilder {
  readonly stack = new GrowingUints();
  readonly time = new GrowingFloats();
  readonly value = new GrowingFloats();
  readonly samples = new GrowingFloats();
  readonly status = new GrowingUints();
  readonly labels = new GrowingUints();
  total = 0;
}

/**
 * Reads a source once and keeps the rows of the thread a one-thread format
 * writes: `wanted` ("ID" or "ID@INTERPRETER"), else the one whose values of
 * `column` sum highest (ties: more rows, then the first seen). `onChosen`
 * hears which thread was taken when there was a choice, for the caller to say.
 */
export function oneThread(
  source: ProfileSource,
  column: number,
  wanted: string | undefined,
  what: string,
  onChosen?: (message: string) => void,
): ThreadRows {
  const byThread = new Map<number, RowsBuilder>();
  const countColumn = sampleCountColumn(source.meta);
  for (const b of source.batches()) {
    const values = b.values[column]!;
    const counts = countColumn < 0 ? undefined : b.values[countColumn]!;
    for (let i = 0; i < b.length; i++) {
      const t = b.thread[i]!;
      let rows = byThread.get(t);
      if (rows === undefined) {
        rows = new RowsBuilder();
        byThread.set(t, rows);
      }
      rows.stack.push(b.stack[i]!);
      rows.time.push(b.time[i]!);
      rows.value.push(values[i]!);
      rows.samples.push(counts === undefined ? 1 : counts[i]!);
      rows.status.push(b.status[i]!);
      rows.labels.push(b.labels[i]!);
      rows.total += values[i]!;
    }
  }
  const keyOf = (t: number) => threadKey(source.threads[t]!.threadId, source.threads[t]!.interpreterId);
  let chosen: number | undefined;
  if (wanted !== undefined) {
    for (const t of byThread.keys()) if (keyOf(t) === wanted) chosen = t;
    if (chosen === undefined) {
      const have = [...byThread.keys()].map(keyOf).join(', ') || 'none';
      throw new ProfpackError(`the profile has no samples on thread ${wanted} (threads with samples: ${have})`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: have,
      });
    }
  } else {
    for (const [t, rows] of byThread) {
      const best = chosen === undefined ? undefined : byThread.get(chosen)!;
      if (
        best === undefined ||
        rows.total > best.total ||
        (rows.total === best.total && rows.stack.length > best.stack.length)
      )
        chosen = t;
    }
    if (chosen !== undefined && byThread.size > 1) {
      onChosen?.(
        `${what} holds one thread: wrote thread ${keyOf(chosen)}, the busiest of ${byThread.size} ` +
          '(choose another with the thread option, --thread)',
      );
    }
  }
  if (chosen === undefined) {
    const none = new Uint32Array(0);
    return {
      thread: -1,
      key: '',
      stack: none,
      time: new Float64Array(0),
      value: new Float64Array(0),
      samples: new Float64Array(0),
      status: new Uint8Array(0),
      labels: none,
      length: 0,
    };
  }
  const rows = byThread.get(chosen)!;
  return {
    thread: chosen,
    key: keyOf(chosen),
    stack: rows.stack.view(),
    time: rows.time.view(),
    value: rows.value.view(),
    samples: rows.samples.view(),
    status: Uint8Array.from(rows.status.view()),
    labels: rows.labels.view(),
    length: rows.stack.length,
  };
}

/**
 * The stacks a one-thread V8 tree needs (those sampled and all their
 * prefixes) as node ids: the StackTable is already a prefix tree, so stack s
 * becomes a node whose parent is the node of stacks.parent(s). Ids follow
 * stack ids, so a parent's id is always below its children's. The empty
 * stack is the root, id 1.
 */
export function v8Tree(
  source: ProfileSource,
  used: ArrayLike<number>,
  length: number,
): { nodeOf: Int32Array; order: number[]; children: Map<number, number[]> } {
  const size = source.stacks.size;
  const nodeOf = new Int32Array(size).fill(-1);
  nodeOf[0] = 1;
  for (let i = 0; i < length; i++) {
    for (let s = used[i]!; s !== 0 && nodeOf[s] === -1; s = source.stacks.parent(s)) nodeOf[s] = 0;
  }
  const order = [0];
  const children = new Map<number, number[]>();
  let next = 2;
  for (let s = 1; s < size; s++) {
    if (nodeOf[s] === -1) continue;
    nodeOf[s] = next++;
    order.push(s);
    const parent = nodeOf[source.stacks.parent(s)]!;
    let list = children.get(parent);
    if (list === undefined) children.set(parent, (list = []));
    list.push(nodeOf[s]!);
  }
  return { nodeOf, order, children };
}

/** Says which label keys the written thread's rows carry that a V8 file cannot hold. */
export function warnDroppedLabels(
  source: ProfileSource,
  rows: ThreadRows,
  format: string,
  onWarning: ((message: string) => void) | undefined,
): void {
  const dropped = new DroppedLabels();
  for (let i = 0; i < rows.length; i++) dropped.note(rows.labels[i]!);
  dropped.warn(source.labelSets, format, onWarning);
}
