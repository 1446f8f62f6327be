// One definition, shared by the size and v2 benchmarks, of (1) a stack stream
// of ../shared/data/stacks as a tick model (TickModel below: one object per
// sample, fine for a benchmark's input) and (2) the peer formats it is
// compared with. The peers are the library's own writers (what profpack
// ships, through writeProfile), so both benchmarks measure the same bytes:
// - pprof.gz per sample: one pprof Sample per sample, values samples/count 1
//   and wall/nanoseconds (the gap to the thread's next sample), labels
//   thread_id, status (when not 0), timestamp_us;
// - pprof.gz aggregated: one Sample per distinct (stack, thread) with the
//   values summed; times and status dropped;
// - .cpuprofile: one thread's samples (the streams have one) as V8 writes them.
// Tachyon files are written by the real ProfileWriter and read by ProfileReader.
//
// Two clocks (issue 19): the streams' times count from 1 s (START_TIME_US), so
// a timestamp label is a 3–4-byte varint; real agents write epoch times, which
// are 8–9 bytes and compress worse. loadModel(name, { epoch: true }) shifts
// every time to EPOCH_START_US; then pprof's timestamp_us labels are epoch µs
// and time_nanos is set (as Go writes it), and EPOCH_PEERS adds per-sample
// pprof with @datadog/pprof's `end_timestamp_ns` label (epoch ns).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REAL_STREAMS, SYNTHETIC_STREAMS, START_TIME_US, loadStream } from './_streams.mjs';
import * as pp from '../dist/index.js';
// dist's sub-entries are lazy (scripts/lazy-entry.mjs): their exports are getters ESM cannot name, so take the default.
import profileEntry from '../dist/profile/index.js';
import v8Entry from '../dist/v8/index.js';

const { normalizeFrame } = profileEntry;
const { frameFromV8 } = v8Entry;

export { REAL_STREAMS, SYNTHETIC_STREAMS };
export const ALL_STREAMS = [...REAL_STREAMS, ...SYNTHETIC_STREAMS];

/** A frame of bench/_streams.mjs → a model frame, as the library's converters would make it. */
export function modelFrame(kind, f) {
  // V8 positions are 0-based; the library's .cpuprofile reader makes them 1-based (frameFromV8).
  if (kind === 'node')
    return frameFromV8({ functionName: f.funcname, url: f.filename, lineNumber: f.lineno, columnNumber: f.column });
  // Tachyon / perf / synthetic frames: -1 is "absent" (null in the model), opcode 255 is already null.
  return normalizeFrame(f);
}

/**
 * The stream (read by bench/_streams.mjs: stacks innermost first, capped at
 * 256 frames, per-thread times from START_TIME_US) as a TickModel whose
 * interval is the stream's median delta.
 */
/** 2026-11-23 00:00 UTC in µs: where an epoch-based model's clock starts. */
export const EPOCH_START_US = 1_795_392_000_000_000;

/** A tick stream in memory: the old shape the benchmarks were written against (frames, sampleList, samples()). */
export class TickModel {
  constructor(meta) {
    this.meta = meta;
    this.frames = [];
    this.sampleList = [];
    this.frameIds = new Map();
  }
  get sampleCount() {
    return this.sampleList.length;
  }
  internFrame(frame) {
    const key = JSON.stringify(frame);
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push(frame);
      this.frameIds.set(key, id);
    }
    return id;
  }
  writeStack(threadId, interpreterId, timestampUs, status, stack) {
    this.sampleList.push({ threadId, interpreterId, timestampUs, status, stack: Array.from(stack) });
  }
  samples() {
    return this.sampleList;
  }
  /** The same samples as the library's model: samples/count and wall/nanoseconds (the real gap to the next tick). */
  toSource(producer) {
    const b = new pp.ProfileBuilder({
      sampleTypes: [pp.SampleTypes.samples, pp.SampleTypes.wall],
      defaultSampleType: 0,
      startTimeUs: this.meta.startTimeUs,
      sampleIntervalUs: this.meta.sampleIntervalUs,
      origin: producer === undefined ? undefined : { format: 'pprof', producer },
    });
    const ids = this.frames.map((f) => b.internFrame(f));
    const list = this.sampleList;
    const next = new Map();
    const gaps = new Float64Array(list.length);
    for (let i = list.length - 1; i >= 0; i--) {
      const key = `${list[i].threadId}@${list[i].interpreterId}`;
      const j = next.get(key);
      gaps[i] =
        j === undefined
          ? Number(this.meta.sampleIntervalUs) * 1000
          : Number(list[j].timestampUs - list[i].timestampUs) * 1000;
      next.set(key, i);
    }
    list.forEach((s, i) =>
      b.add(
        b.stacks.intern(s.stack.map((f) => ids[f])),
        b.internThread(s.threadId, s.interpreterId),
        Number(s.timestampUs),
        s.status,
        [1, gaps[i]],
      ),
    );
    return b;
  }
}

export function loadModel(name, { epoch = false } = {}) {
  const stream = loadStream(name);
  const shift = BigInt(epoch ? EPOCH_START_US - START_TIME_US : 0);
  const model = new TickModel({
    startTimeUs: BigInt(START_TIME_US) + shift,
    sampleIntervalUs: BigInt(stream.intervalUs),
  });
  const ids = stream.frames.map(() => -1);
  for (const s of stream.samples) {
    const stack = new Uint32Array(s.stack.length);
    for (let i = 0; i < stack.length; i++) {
      const f = s.stack[i];
      if (ids[f] < 0) ids[f] = model.internFrame(modelFrame(stream.kind, stream.frames[f]));
      stack[i] = ids[f];
    }
    model.writeStack(s.threadId, s.interpreterId, BigInt(s.timestampUs) + shift, s.status, stack);
  }
  return { name, real: REAL_STREAMS.includes(name), model };
}

/** The bytes the library writes for a source in a format (through a temporary file). */
function written(source, format, options = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'profpack-peer-'));
  try {
    const file = path.join(dir, `out.${format}`);
    pp.writeProfile(source, file, format, { onWarning: () => undefined, ...options });
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Samples in bytes the library reads back (the samples/count column's sum). */
function samplesIn(bytes) {
  return pp.aggregate(pp.readProfile(bytes), { sampleType: 'samples', limit: 1 }).samples;
}

/** Peers that only make sense on an epoch-based model: @datadog/pprof's per-sample pprof, time as `end_timestamp_ns` (epoch ns). */
export const EPOCH_PEERS = {
  'pprof.gz per sample, end_timestamp_ns': {
    encode: (m) => written(m.toSource('@datadog/pprof'), 'pprof'),
    decode: samplesIn,
  },
};

/** Peer formats: encode(model) → bytes; decode(bytes) → sample count. */
export const PEERS = {
  '.cpuprofile': {
    encode: (m) => written(m.toSource(), 'cpuprofile'),
    decode: samplesIn,
  },
  'pprof.gz per sample': {
    encode: (m) => written(m.toSource(), 'pprof'),
    decode: samplesIn,
  },
  'pprof.gz aggregated': {
    encode: (m) => written(m.toSource(), 'pprof', { aggregate: true }),
    decode: samplesIn,
  },
};

/**
 * Writes the model through ProfileWriter (writeStack per sample) and returns the file's size. `options` are ProfileWriter's:
 * formatVersion, stackCoding, compression, level, backend.
 */
export function writeTachyon(model, file, options = {}) {
  const writer = new pp.ProfileWriter(file, {
    sampleIntervalUs: model.meta.sampleIntervalUs,
    startTimeUs: model.meta.startTimeUs,
    ...options,
  });
  const ids = model.frames.map((f) => writer.internFrame(f));
  for (const s of model.sampleList)
    writer.writeStack(
      s.threadId,
      s.interpreterId,
      s.timestampUs,
      s.status,
      s.stack.map((f) => ids[f]),
    );
  writer.finalize();
  return statSync(file).size;
}

/** Reads every sample of a Tachyon file through ProfileReader.samples(); returns the count. */
export function readTachyon(file, options = {}) {
  const reader = pp.ProfileReader.open(file, options);
  let n = 0;
  for (const s of reader.samples()) n += s.stack.length >= 0 ? 1 : 0;
  reader.close();
  return n;
}

/** The bytes of a file (to check that two writers produced the same file). */
export const fileBytes = (file) => readFileSync(file);
