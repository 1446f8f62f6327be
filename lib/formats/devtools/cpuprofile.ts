/**
 * Chrome DevTools / V8 `.cpuprofile` (Profiler.Profile): a call tree of
 * `nodes` rooted at "(root)", `samples` (node ids) and `timeDeltas` (µs, the
 * gap before each sample; the first is relative to `startTime`).
 *
 * Read: sample types samples/count and wall/nanoseconds (the default); a
 * sample weighs its real time, the gap to the next sample, as DevTools and
 * speedscope weigh it (the last one: the nominal interval, else the gap
 * before it). `positionTicks` (the lines a node's self ticks fell on) make
 * that many of its samples, in time order, samples of the function's frame at
 * that line (no column), as a recording writes them, so `--by line` and source
 * maps see the hot line. The nested form of Node ≤ 10 / Chrome ≤ 57 and the
 * flat form with `timestamps` in place of `timeDeltas` read too.
 *
 * Write: one thread (the format holds one; options.thread, else the busiest,
 * said through onWarning), samples in time order. With times, timeDeltas are
 * the real gaps, a CPU-time record's gap past its own time an "(idle)"
 * sample's; without (collapsed, speedscope), each sample's gap to the
 * next is its value (time units as µs, counts as that many intervals). The
 * top-level `$profpack` key keeps thread id, interval and statuses that differ
 * from what the leaf implies.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { SampleTypes, gapsToNext, nanosPerUnit, type ProfileBuilder, type ProfileSource } from '../../profile/index';
import type { FormatAdapter, ReadInput, ReadOptions, WriteOptions, WriteTarget } from '../adapter';
import {
  ChunkedText,
  cannotWrite,
  describeType,
  inputBytes,
  parseJson,
  pushNumbers,
  readJsonShape,
  writtenColumn,
} from '../io';
import { detectJsonKeys } from '../sniff';
import {
  IDLE_CALL_FRAME,
  ROOT_CALL_FRAME,
  hotLines,
  statusForV8Leaf,
  v8CallFrame,
  type CpuProfileCallFrame,
  type CpuProfileMeta,
  type CpuProfileNode,
} from '../../v8/index';
import { oneThread, v8Tree, warnDroppedLabels } from './one-thread';
import { scanCpuProfile, scanCpuProfileFile } from './cpuprofile-scan';
import { EXPECTED, WHAT, columnsOf, type CpuColumns } from './cpuprofile-columns';
import { badDelta, badSample, checkTime, cpuModel } from './cpuprofile-model';
import { medianGap } from './median-gap';
import { readCpuProfileStreamed } from './cpuprofile-stream';

/** The most samples a .cpuprofile is written with (its JSON lists every one). */
export const MAX_CPUPROFILE_SAMPLES = 10_000_000;

/** Samples a row stands for: its samples/count value as a whole number (a fraction or a negative counts as none). */
function sampleRun(count: number): number {
  return count >= 1 ? Math.floor(count) : 0;
}

/** Every record of `profile` into the builder's columns (the path of a profile read whole). */
function readCpuProfile(profile: CpuColumns): ProfileBuilder {
  const { samples, deltas } = profile;
  const model = cpuModel(profile, samples.length, deltas.length, () => medianGap(deltas));
  const { out, index, stackOf, threadOf, statusOf, startUs, nominalUs, statuses } = model;
  // The records are written straight into the builder's columns: its thread, time and value columns are the
  // arrays the gaps are computed in (no second copy of 20 bytes a record), the stack column is filled last.
  const n = samples.length;
  const rows = out.appendRows(n);
  const { thread: threads, time: times } = rows;
  const at = new Int32Array(n);
  let time = startUs;
  for (let i = 0; i < n; i++) {
    const k = index(samples[i]);
    if (k < 0 || threadOf[k] === -1) throw badSample(i, samples[i], k);
    const delta = Number(deltas[i]);
    if (!Number.isFinite(delta)) throw badDelta(i);
    time += delta;
    checkTime(i, time);
    times[i] = time;
    threads[i] = threadOf[k]!;
    at[i] = k;
  }
  const [counts, walls] = rows.values as [Float64Array, Float64Array];
  gapsToNext(threads, times, n, nominalUs, walls);
  counts.fill(1);
  const lines = hotLines(profile.lineTicks, at, times);
  for (let i = 0; i < n; i++) {
    const k = at[i]!;
    walls[i] = Math.round(walls[i]!);
    const line = lines?.[i] ?? 0;
    const stack = line > 0 && stackOf[k] !== 0 ? model.hotStack(stackOf[k]!, line) : stackOf[k]!;
    rows.stack[i] = stack;
    rows.status[i] = Number(statuses?.[i] ?? statusOf[k]) & 0xff;
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
  warnDroppedLabels(source, rows, 'a .cpuprofile', options.onWarning);
  const n = rows.length;
  const intervalUs = Number(source.meta.sampleIntervalUs) > 0 ? Number(source.meta.sampleIntervalUs) : 1000;
  // Real gaps only when every row has a time; otherwise (collapsed, speedscope, Datadog's untimed "Non JS threads
  // activity") each row lasts its value, so every function's total is the source's.
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
  // The stated duration extends real times only: DevTools weighs the last sample up to endTime, and laid-out
  // values end where the last one does.
  const stated = source.meta.durationUs === undefined ? undefined : startUs + Number(source.meta.durationUs);
  if (timed && stated !== undefined && stated > endUs) endUs = stated;

  const tree = v8Tree(source, rows.stack, n);
  const ns = nanosPerUnit(type.unit);
  // A row may stand for a run of samples (a Tachyon REPEAT run): V8's format lists samples, so the run's
  // samples are listed, spread evenly over its time. Bounded: the format has nothing smaller than a sample.
  // A row of no samples but some time (Datadog's CPU time off the JS thread) is one sample of that time.
  const runOf = (i: number): number => sampleRun(rows.samples[i]!) || (ns !== undefined && rows.value[i]! > 0 ? 1 : 0);
  let total = 0;
  for (let i = 0; i < n; i++) total += runOf(i);
  if (total > MAX_CPUPROFILE_SAMPLES) {
    throw new ProfpackError(
      `a .cpuprofile lists every sample, and this thread has ${total}; at most ${MAX_CPUPROFILE_SAMPLES} are written`,
      {
        code: ErrorCode.CONVERT_TOO_MANY_SAMPLES,
        expected: `at most ${MAX_CPUPROFILE_SAMPLES} samples`,
      },
    );
  }
  // CPU time: a row weighs its CPU time, and DevTools weighs a sample by the gap to the next one, so the time a
  // thread spent off the CPU between two rows is an "(idle)" sample of V8's own, never the earlier row's.
  // A count column of a CPU-mode sampler's ticks (CPU time, no wall time) is one interval on the CPU a sample.
  const types = source.meta.sampleTypes;
  const cpuTicks =
    types.some((t) => t.type === SampleTypes.cpu.type) && !types.some((t) => t.type === SampleTypes.wall.type);
  const offCpu = timed && (ns === undefined ? cpuTicks : type.type === SampleTypes.cpu.type);
  const idleNode = tree.order.length + 1;
  let idle = 0;
  const capacity = total + (offCpu ? n : 0);
  const hits = new Map<number, number>();
  const sampleIds = new Float64Array(capacity);
  const deltas = new Float64Array(capacity);
  const status = new Array<number>(capacity);
  let statusDiffers = false;
  let previous = Math.round(startUs);
  let written = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const stack = rows.stack[i]!;
    const node = tree.nodeOf[stack]!;
    const run = runOf(i);
    if (run === 0) continue;
    // The run's time: its value when the column is a time, else one interval a sample.
    const spanUs = ns === undefined ? run * intervalUs : (rows.value[i]! * ns) / 1000;
    hits.set(node, (hits.get(node) ?? 0) + run);
    const leaf = stack === 0 ? undefined : source.frames[source.stacks.frame(stack)];
    const rowStatus = rows.status[i]!;
    if (rowStatus !== statusForV8Leaf(leaf?.funcname, leaf?.filename)) statusDiffers = true;
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
    const endsAt = Math.round(times[k]! + spanUs);
    if (offCpu && endsAt > previous && endsAt < (k + 1 < n ? nextUs : Math.round(endUs))) {
      sampleIds[written] = idleNode;
      deltas[written] = endsAt - previous;
      status[written] = statusForV8Leaf(IDLE_CALL_FRAME.functionName, IDLE_CALL_FRAME.url);
      previous = endsAt;
      written++;
      idle++;
    }
  }
  if (idle > 0) {
    hits.set(idleNode, idle);
    const top = tree.children.get(1) ?? [];
    tree.children.set(1, [...top, idleNode]);
  }

  const out = new ChunkedText(target);
  out.push('{"nodes":[');
  tree.order.forEach((stack, k) => {
    const id = tree.nodeOf[stack]!;
    const callFrame: CpuProfileCallFrame =
      stack === 0 ? ROOT_CALL_FRAME : v8CallFrame(source.frames[source.stacks.frame(stack)]!);
    const node: CpuProfileNode = { id, callFrame, hitCount: hits.get(id) ?? 0, children: tree.children.get(id) ?? [] };
    out.push((k === 0 ? '' : ',') + JSON.stringify(node));
  });
  if (idle > 0)
    out.push(',' + JSON.stringify({ id: idleNode, callFrame: IDLE_CALL_FRAME, hitCount: idle, children: [] }));
  out.push(`],"startTime":${Math.round(startUs)},"endTime":${Math.round(endUs)},"samples":[`);
  pushNumbers(out, written < capacity ? sampleIds.subarray(0, written) : sampleIds);
  out.push('],"timeDeltas":[');
  pushNumbers(out, written < capacity ? deltas.subarray(0, written) : deltas);
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
    pushNumbers(out, status.slice(0, written));
    out.push(']');
  }
  out.push('}}');
  out.flush();
}

export const cpuprofileAdapter: FormatAdapter<'cpuprofile'> = {
  name: 'cpuprofile',
  title: 'Chrome DevTools .cpuprofile',
  label: '.cpuprofile',
  extensions: ['.cpuprofile'],
  mayBeGzipped: true,
  writesWhole: true,
  detect: (head) => {
    const keys = detectJsonKeys(head);
    if (keys === undefined) return false;
    if (keys.has('nodes') && (keys.has('callFrame') || keys.has('samples') || keys.has('timeDeltas'))) return true;
    // The nested form: a "head" tree of call-frame fields, no selfSize (that is a .heapprofile).
    return keys.has('head') && keys.has('functionName') && !keys.has('selfSize') && !keys.has('callFrame');
  },
  readsFromPath: true,
  read(input: ReadInput, options: ReadOptions): ProfileSource {
    // The byte scan takes what V8 writes (from a file, through a window); anything else (and every error) goes the
    // way of JSON.parse, over the whole file. Records read once are streamed from the file when they can be.
    const fromPath = input.bytes === undefined && input.path !== undefined;
    const streamed = fromPath && options.recordsOnce === true ? readCpuProfileStreamed(input.path!) : undefined;
    if (streamed !== undefined && 'batches' in streamed) return streamed;
    if (streamed !== undefined) return readJsonShape(WHAT, EXPECTED, () => readCpuProfile(streamed));
    const scanned = fromPath ? scanCpuProfileFile(input.path!) : scanCpuProfile(inputBytes(input));
    if (scanned !== undefined) return readJsonShape(WHAT, EXPECTED, () => readCpuProfile(scanned));
    const doc = parseJson(inputBytes(input), WHAT, EXPECTED);
    return readJsonShape(WHAT, EXPECTED, () => readCpuProfile(columnsOf(doc)));
  },
  write: writeCpuProfile,
};
