/**
 * A Tachyon file (version 1 or 2) as a streaming model source: the reader's
 * replay as stack-trie nodes (ProfileReader.replayNodes), interned into the
 * source's StackTable once per trie node, into one reused batch. Nothing is
 * held per sample: a record waits only until its thread's next one (its
 * time value is the real gap to it, GapWeigher).
 *
 * Sample types: [samples/count, cpu|wall/nanoseconds] (cpu when the header's
 * mode says CPU), default samples/count; a version-1 REPEAT run is one record
 * whose count is the run. Its time value follows the mode (docs/formats.md,
 * "Weights by mode"): in a CPU or GIL-mode file the sampler wrote only ticks
 * where the thread ran (held the GIL), so a tick weighs the nominal interval,
 * as CPython's own collectors count it; in any other mode the real gap from
 * its first sample to its thread's next. A version-2 file with a model
 * section gives its own types, values, labels and times instead.
 */
import {
  ProfileReader,
  readStringTable,
  ProfilingMode,
  type ModelSection,
  type ReaderOptions,
  type NodeVisitor,
  type StackNodes,
} from '../../tachyon/index';
import {
  BATCH_ROWS,
  SourceTables,
  GapWeigher,
  SampleTypes,
  newBatch,
  normalizeFrame,
  type ProfileMeta,
  type ProfileSource,
  type SampleBatch,
} from '../../profile/index';
import type { ReadInput } from '../adapter';
import { grown, resized } from '../../typed-arrays';
import { findRecordedBy, processIdentity, type RecordedBy } from '../../recorded-by';

/** The time column of a tick stream: CPU time when the profiler sampled on-CPU time, else wall time. */
function tickMeta(reader: ProfileReader): ProfileMeta {
  const info = reader.info;
  const meta: ProfileMeta = {
    sampleTypes: [SampleTypes.samples, info.mode === ProfilingMode.Cpu ? SampleTypes.cpu : SampleTypes.wall],
    defaultSampleType: 0,
    startTimeUs: info.startTimeUs,
    sampleIntervalUs: info.sampleIntervalUs,
    origin: {
      format: 'tachyon',
      producer: info.version === 2 ? 'profpack (format version 2)' : `Python ${info.pythonVersion.join('.')}`,
    },
  };
  if (typeof info.durationSec === 'number' && info.durationSec > 0)
    meta.durationUs = BigInt(Math.round(info.durationSec * 1e6));
  if (info.durationSec !== null && info.sampleRate !== null) {
    meta.samplerStats = { durationSec: info.durationSec, sampleRate: info.sampleRate };
    if (info.errorRate !== null) meta.samplerStats.errorRate = info.errorRate;
    if (info.missedSamples !== null) meta.samplerStats.missedSamples = info.missedSamples;
  }
  return meta;
}

function modelMeta(reader: ProfileReader, model: ModelSection): ProfileMeta {
  const meta = tickMeta(reader);
  meta.sampleTypes = model.sampleTypes.map((t) => ({ ...t }));
  meta.defaultSampleType = model.defaultSampleType;
  if (model.periodType !== undefined) {
    meta.periodType = { ...model.periodType };
    meta.period = model.period;
  }
  if (model.durationUs !== undefined) meta.durationUs = model.durationUs;
  if (model.comments !== undefined) meta.comments = [...model.comments];
  return meta;
}

export class TachyonSource extends SourceTables implements ProfileSource {
  readonly meta: ProfileMeta;
  readonly sampleCount: number | undefined;
  private readonly model: ModelSection | null;
  /** Section label set id → this source's label set id. */
  private readonly labelIds: number[] = [];
  /** A Node recording: thread 0 is the main thread, every other one a worker thread. */
  private readonly nodeRecording: boolean = false;

  constructor(private readonly reader: ProfileReader) {
    super();
    this.model = reader.model;
    this.meta = this.model === null ? tickMeta(reader) : modelMeta(reader, this.model);
    const count = Number(reader.info.sampleCount);
    // Version 2 delivers one record per sample; version 1 merges REPEAT runs, so its record count is not known up
    // front.
    this.sampleCount = reader.info.version === 2 && Number.isSafeInteger(count) ? count : undefined;
    if (this.model !== null) {
      for (const set of this.model.labelSets) this.labelIds.push(this.labelTable.intern(set));
      for (const t of this.model.threadNames) this.threadTable.intern(t.threadId, t.interpreterId, t.name);
    }
    // A profpack Node recording says what recorded it (lib/recorded-by.ts): its process, and thread 0 is the main
    // thread.
    const recordedBy = findRecordedBy(reader.strings, this.model?.producer);
    if (recordedBy !== undefined) {
      this.meta.recordedBy = recordedBy;
      this.meta.processIdentity = processIdentity(recordedBy);
      this.meta.origin = { format: 'tachyon', producer: `profpack record (Node ${recordedBy.version})` };
      this.threadTable.intern(0n, 0, 'main');
      this.nodeRecording = true;
    }
  }

  close(): void {
    this.reader.close();
  }

  *batches(): Iterable<SampleBatch> {
    const valueCount = this.meta.sampleTypes.length;
    let batch = newBatch(BATCH_ROWS * 2, valueCount);
    const reader = this.reader;
    const stacks = this.stacks;
    const fileFrames = reader.frames;
    const frameIds = new Int32Array(fileFrames.length).fill(-1);
    let nodeStack: Int32Array = new Int32Array(1024);
    let threadIndex: Int32Array = new Int32Array(16).fill(-1);
    const chain: number[] = [];
    let nodes: StackNodes | null = null;

    const push = (): number => {
      const i = batch.length;
      if (i === batch.stack.length) {
        const next = newBatch(i * 2, valueCount);
        next.stack.set(batch.stack);
        next.thread.set(batch.thread);
        next.time.set(batch.time);
        next.status.set(batch.status);
        next.labels.set(batch.labels);
        for (let v = 0; v < valueCount; v++) next.values[v]!.set(batch.values[v]!);
        next.length = i;
        batch = next;
      }
      batch.length = i + 1;
      return i;
    };
    const frameOf = (f: number): number => {
      let id = frameIds[f]!;
      if (id < 0) id = frameIds[f] = this.frameTable.intern(normalizeFrame(fileFrames[f]!));
      return id;
    };
    // A node's stack: walk up to the first node already interned, then intern down.
    const stackOf = (node: number): number => {
      if (node >= nodeStack.length) nodeStack = grown(nodeStack, node, 0);
      const known = nodeStack[node]!;
      if (known !== 0 || node === 0) return known;
      let n = node;
      chain.length = 0;
      while (n !== 0 && (n >= nodeStack.length || nodeStack[n] === 0)) {
        chain.push(n);
        n = nodes!.parent(n);
      }
      let id = n === 0 ? 0 : nodeStack[n]!;
      for (let k = chain.length - 1; k >= 0; k--) {
        const c = chain[k]!;
        id = stacks.push(id, frameOf(nodes!.frame(c)));
        nodeStack[c] = id;
      }
      return id;
    };
    const threadOf = (t: number): number => {
      if (t >= threadIndex.length) threadIndex = grown(threadIndex, t, -1);
      let id = threadIndex[t]!;
      if (id < 0) {
        const threadId = nodes!.threadId(t);
        const name = this.nodeRecording && threadId !== 0n ? `worker ${threadId}` : undefined;
        id = threadIndex[t] = this.threadTable.intern(threadId, nodes!.interpreterId(t), name);
      }
      return id;
    };

    const model = this.model;
    let visitor: NodeVisitor;
    let finish = (): void => {};
    if (model === null) {
      // Held records, one per thread (GapWeigher's row is the thread's index here).
      let held = {
        stack: new Uint32Array(16),
        status: new Uint8Array(16),
        time: new Float64Array(16),
        count: new Float64Array(16),
        span: new Float64Array(16),
      };
      let flushing = false;
      const intervalUs = Number(reader.info.sampleIntervalUs);
      // The gap to the next tick includes time off CPU (or without the GIL): those modes weigh ticks.
      const mode = reader.info.mode;
      const perTickNs =
        (mode === ProfilingMode.Cpu || mode === ProfilingMode.Gil) && intervalUs > 0 ? intervalUs * 1000 : 0;
      const weigher = new GapWeigher<number>(intervalUs, (t, gapNs) => {
        const i = push();
        batch.stack[i] = held.stack[t]!;
        batch.thread[i] = t;
        batch.time[i] = held.time[t]!;
        batch.status[i] = held.status[t]!;
        batch.labels[i] = 0;
        batch.values[0]![i] = held.count[t]!;
        if (perTickNs > 0) batch.values[1]![i] = held.count[t]! * perTickNs;
        // The last record of a thread: the nominal interval after its run's own span.
        else batch.values[1]![i] = flushing ? gapNs + held.span[t]! * 1000 : gapNs;
      });
      const hold = (t: number, node: number, status: number, firstUs: number, lastUs: number, count: number): void => {
        const mt = threadOf(t);
        const stack = stackOf(node);
        weigher.push(mt, firstUs, mt);
        if (mt >= held.stack.length) {
          const size = Math.max(mt + 1, held.stack.length * 2);
          held = {
            stack: resized(held.stack, size),
            status: resized(held.status, size),
            time: resized(held.time, size),
            count: resized(held.count, size),
            span: resized(held.span, size),
          };
        }
        held.stack[mt] = stack;
        held.status[mt] = status;
        held.time[mt] = firstUs;
        held.count[mt] = count;
        held.span[mt] = lastUs - firstUs;
      };
      visitor = {
        start: (n) => (nodes = n),
        samples(t, node, status, firstUs, lastUs, count, times) {
          if (count === 1 || times === undefined || !(intervalUs > 0))
            return hold(t, node, status, firstUs, lastUs, count);
          // A REPEAT run keeps each tick's own time: every reader of the model places tick k of a
          // record k intervals after its time, so ticks stay one record while each is followed one interval later,
          // and a tick followed by any other gap ends its record. The run's last tick stands alone: its gap is to
          // the thread's next record, not yet seen. Per stored tick, never per unit of a value.
          let from = 0;
          let fromUs = firstUs;
          let prevUs = firstUs;
          for (let k = 1; k < count; k++) {
            const us = times.at(k);
            if (us - prevUs !== intervalUs || k === count - 1) {
              hold(t, node, status, fromUs, prevUs, k - from);
              from = k;
              fromUs = us;
            }
            prevUs = us;
          }
          hold(t, node, status, fromUs, lastUs, count - from);
        },
        reset: () => nodeStack.fill(0),
      };
      finish = () => {
        flushing = true;
        weigher.flush();
      };
    } else {
      let sample = 0;
      const absent = model.timeAbsent;
      const labels = model.labels;
      const labelIds = this.labelIds;
      visitor = {
        start: (n) => (nodes = n),
        samples(t, node, status, firstUs) {
          const i = push();
          const s = sample++;
          batch.stack[i] = stackOf(node);
          batch.thread[i] = threadOf(t);
          batch.time[i] = absent !== null && (absent[s >> 3]! & (1 << (s & 7))) !== 0 ? NaN : firstUs;
          batch.status[i] = status;
          batch.labels[i] = labels === null ? 0 : labelIds[labels[s]!]!;
          for (let v = 0; v < valueCount; v++) batch.values[v]![i] = model.values[v]![s]!;
        },
        reset: () => nodeStack.fill(0),
      };
    }

    const replay = reader.replayNodes(visitor);
    for (let done = false; !done;) {
      done = replay.next();
      if (done) finish();
      if (batch.length >= BATCH_ROWS || (done && batch.length > 0)) {
        yield batch;
        batch.length = 0;
      }
    }
  }
}

/**
 * The replay trie's bound for a model source: 256 k nodes (~10 MB native) where a reader keeps 64 k. The source
 * interns each trie node's stack into its own table, which holds every distinct stack anyway; each rebuild of the
 * trie gives every node a new id, and every stack is interned again from its root. On 250 k real samples (214 k
 * distinct stacks) the 64 k trie was rebuilt 20 times, most of the source's time (bench/RESULTS.md).
 */
const SOURCE_MAX_NODES = 1 << 18;
/**
 * A model source streams a zstd sample region on each pass (keeps none of it decompressed after open's check):
 * decompressing 12.5 MB again costs less than faulting in a 12.5 MB buffer to keep it (a conversion reads it once).
 */
const SOURCE_KEEP_LIMIT = 0;

/** Opens a Tachyon file (path) or buffer as a streaming model source; `reader` options for tests (tiny buffers). */
export function readTachyon(input: ReadInput, reader: ReaderOptions = {}): TachyonSource {
  const options: ReaderOptions = {
    keepDecompressedLimit: SOURCE_KEEP_LIMIT,
    ...reader,
    tuning: { maxNodes: SOURCE_MAX_NODES, ...reader.tuning },
  };
  if (input.path !== undefined) return new TachyonSource(ProfileReader.open(input.path, options));
  return new TachyonSource(ProfileReader.fromBuffer(input.bytes ?? new Uint8Array(0), options));
}

/**
 * What recorded a Tachyon file (lib/recorded-by.ts), from its string table alone: no sample region is read or
 * checked (the command that follows opens the file and checks it). A version-2 file is opened.
 */
export function tachyonRecordedBy(path: string): RecordedBy | undefined {
  const strings = readStringTable(path);
  if (strings !== null) return findRecordedBy(strings);
  const source = readTachyon({ path });
  try {
    return source.meta.recordedBy;
  } finally {
    source.close();
  }
}
