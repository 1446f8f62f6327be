/**
 * V8's sampling heap profile, `.heapprofile` (`node --heap-prof`, DevTools'
 * "Allocation sampling", the HeapProfiler.SamplingHeapProfile of the
 * protocol): a nested `head` tree of call frames, each node with `selfSize`
 * (bytes of the sampled objects allocated there and live when the profile was
 * taken, already scaled up by V8 for the sampling), and `samples`, one per
 * sampled object: `{ size, nodeId, ordinal }` (size unscaled; ordinal orders
 * them in time).
 *
 * Read: one record per node with bytes, sample types inuse_space/bytes (the
 * node's selfSize: the default, so totals equal what DevTools and speedscope
 * show) and samples/count (the sampled objects V8 lists for the node, not an
 * estimate of all objects; samples naming a node the tree lacks, which
 * node --heap-prof writes, are skipped with a warning). No thread and no
 * time: the file has neither.
 *
 * Write: the bytes column (options.sampleType, else the default type when it
 * is in bytes, else the first type in bytes) of one thread, summed per stack
 * into selfSize; one `samples` entry per record with bytes, ordinals in the
 * records' time order.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ProfileBuilder, SampleTypes, type ProfileSource, type SampleType } from '../../profile/index';
import type { FormatAdapter, ReadInput, ReadOptions, WriteOptions, WriteTarget } from '../adapter';
import { ChunkedText, badInput, inputBytes, negativeValue, parseJson, readJsonShape, writtenColumn } from '../io';
import { detectJsonKeys } from '../sniff';
import { ROOT_CALL_FRAME, frameFromV8, v8CallFrame, type HeapProfileNode } from '../../v8/index';
import { oneThread, v8Tree, warnDroppedLabels } from './one-thread';

const WHAT = '.heapprofile';
const EXPECTED = 'a V8 sampling heap profile (HeapProfiler.SamplingHeapProfile: head, samples)';
const bad = (message: string) => badInput(WHAT, message, EXPECTED);

export const InuseSpace: SampleType = { type: 'inuse_space', unit: 'bytes' };

function readHeapProfile(doc: unknown, onWarning?: (message: string) => void): ProfileBuilder {
  const file = doc as { head?: HeapProfileNode; samples?: unknown };
  if (doc === null || typeof doc !== 'object' || file.head === null || typeof file.head !== 'object')
    throw bad('no "head" node');
  const out = new ProfileBuilder({
    sampleTypes: [InuseSpace, SampleTypes.samples],
    defaultSampleType: 0,
    startTimeUs: 0n,
    sampleIntervalUs: 0n,
    origin: { format: 'heapprofile' },
  });
  const thread = out.internThread(0n);
  const sampled = new Map<number, number>();
  if (file.samples !== undefined) {
    if (!Array.isArray(file.samples)) throw bad('"samples" is not an array');
    for (const s of file.samples as { nodeId?: unknown }[]) {
      if (s === null || typeof s !== 'object' || typeof s.nodeId !== 'number') throw bad('a sample without a nodeId');
      sampled.set(s.nodeId, (sampled.get(s.nodeId) ?? 0) + 1);
    }
  }
  const seen = new Set<number>();
  const values = [0, 0];
  // Depth first without recursion: V8's trees nest as deep as the JS stacks.
  const pending: [HeapProfileNode, number][] = [[file.head, 0]];
  let isRoot = true;
  while (pending.length > 0) {
    const [node, parentStack] = pending.pop()!;
    if (node === null || typeof node !== 'object' || node.callFrame === null || typeof node.callFrame !== 'object')
      throw bad('a node without a callFrame');
    const id = Number(node.id);
    if (seen.has(id)) throw bad(`two nodes have id ${id}`);
    seen.add(id);
    const stack = isRoot ? 0 : out.stacks.push(parentStack, out.internFrame(frameFromV8(node.callFrame)));
    isRoot = false;
    const size = node.selfSize ?? 0;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      throw bad(`node ${id}'s selfSize ${JSON.stringify(size)} is not a byte count`);
    const count = sampled.get(id) ?? 0;
    if (size > 0 || count > 0) {
      values[0] = size;
      values[1] = count;
      out.add(stack, thread, NaN, 0, values);
    }
    if (node.children !== undefined && !Array.isArray(node.children))
      throw bad(`node ${id}'s children is not an array`);
    for (let i = (node.children ?? []).length - 1; i >= 0; i--) pending.push([node.children[i]!, stack]);
  }
  // node --heap-prof (Node 20) lists a few samples of nodes its tree leaves out; their bytes are in no selfSize.
  let orphans = 0;
  for (const [nodeId, count] of sampled) if (!seen.has(nodeId)) orphans += count;
  if (orphans > 0)
    onWarning?.(
      `${orphans} of the .heapprofile's samples name nodes its tree does not have: not counted ` +
        "(their bytes are in no node's selfSize either)",
    );
  return out;
}

/** The bytes column a .heapprofile is written from. */
function bytesColumn(source: ProfileSource, wanted: string | undefined): number {
  const types = source.meta.sampleTypes;
  const column =
    wanted !== undefined
      ? writtenColumn(source.meta, wanted)
      : types[source.meta.defaultSampleType]!.unit === 'bytes'
        ? source.meta.defaultSampleType
        : types.findIndex((t) => t.unit === 'bytes');
  if (column < 0 || types[column]!.unit !== 'bytes') {
    const names = types.map((t) => `${t.type}/${t.unit}`).join(', ');
    throw new ProfpackError(
      `a .heapprofile holds bytes, and this profile has no sample type in bytes` +
        `${wanted === undefined ? '' : ` named "${wanted}"`} (it has ${names})`,
      {
        code: ErrorCode.CONVERT_SAMPLE_TYPE,
        expected: 'a sample type in bytes',
      },
    );
  }
  return column;
}

function writeHeapProfile(source: ProfileSource, target: WriteTarget, options: WriteOptions): void {
  const column = bytesColumn(source, options.sampleType);
  const rows = oneThread(source, column, options.thread, WHAT, options.onWarning);
  warnDroppedLabels(source, rows, 'a .heapprofile', options.onWarning);
  const tree = v8Tree(source, rows.stack, rows.length);
  const selfSize = new Map<number, number>();
  for (let i = 0; i < rows.length; i++) {
    const v = rows.value[i]!;
    if (v < 0) throw negativeValue('a .heapprofile', v, 'bytes', 'DevTools');
    const node = tree.nodeOf[rows.stack[i]!]!;
    selfSize.set(node, (selfSize.get(node) ?? 0) + v);
  }
  const out = new ChunkedText(target);
  const stackOfNode = new Map<number, number>();
  for (const s of tree.order) stackOfNode.set(tree.nodeOf[s]!, s);
  // The nested tree, written depth first with an explicit stack (trees can be deeper than JS recursion allows).
  out.push('{"head":');
  const pending: (number | 'close' | 'comma')[] = [1];
  while (pending.length > 0) {
    const item = pending.pop()!;
    if (item === 'close' || item === 'comma') {
      out.push(item === 'close' ? ']}' : ',');
      continue;
    }
    const stack = stackOfNode.get(item)!;
    const callFrame = stack === 0 ? ROOT_CALL_FRAME : v8CallFrame(source.frames[source.stacks.frame(stack)]!);
    out.push(
      `{"callFrame":${JSON.stringify(callFrame)},"selfSize":${selfSize.get(item) ?? 0},"id":${item},"children":[`,
    );
    const kids = tree.children.get(item) ?? [];
    pending.push('close');
    // Children pop in order; a comma goes before every child but the first.
    for (let k = kids.length - 1; k >= 0; k--) {
      pending.push(kids[k]!);
      if (k > 0) pending.push('comma');
    }
  }
  out.push(',"samples":[');
  const order = Array.from({ length: rows.length }, (_, i) => i).filter((i) => rows.value[i]! > 0);
  // Records without times (NaN) keep their order.
  order.sort((a, b) => rows.time[a]! - rows.time[b]! || a - b);
  order.forEach((i, k) =>
    out.push(
      `${k === 0 ? '' : ','}{"size":${rows.value[i]},"nodeId":${tree.nodeOf[rows.stack[i]!]},"ordinal":${k + 1}}`,
    ),
  );
  out.push(']}');
  out.flush();
}

export const heapprofileAdapter: FormatAdapter<'heapprofile'> = {
  name: 'heapprofile',
  title: 'V8 sampling heap profile (.heapprofile)',
  label: '.heapprofile',
  extensions: ['.heapprofile'],
  mayBeGzipped: true,
  writesWhole: true,
  detect: (head) => {
    const keys = detectJsonKeys(head);
    return keys !== undefined && keys.has('head') && keys.has('selfSize');
  },
  read(input: ReadInput, options: ReadOptions): ProfileSource {
    const doc = parseJson(inputBytes(input), WHAT, EXPECTED);
    return readJsonShape(WHAT, EXPECTED, () => readHeapProfile(doc, options.onWarning));
  },
  write: writeHeapProfile,
};
