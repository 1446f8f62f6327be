// One definition, shared by the size and v2 benchmarks, of (1) a stack stream
// of ../shared/data/stacks as profpack's model and (2) the peer formats it is
// compared with. The peers are the library's own converters (what profpack
// ships), so both benchmarks measure the same bytes:
// - pprof.gz per sample = pp.toPprof(model): one pprof Sample per sample,
//   value [1, interval], labels thread_id, status (when not 0), timestamp_us;
// - pprof.gz aggregated = pp.toPprof(model, { aggregate: true }): one Sample
//   per distinct (stack, thread) with a count; times and status dropped;
// - .cpuprofile = JSON of pp.toCpuProfile(model).
// Tachyon files are written by the real ProfileWriter and read by ProfileReader.
//
// Two clocks (issue 19): the streams' times count from 1 s (START_TIME_US), so
// a timestamp label is a 3–4-byte varint; real agents write epoch times, which
// are 8–9 bytes and compress worse. loadModel(name, { epoch: true }) shifts
// every time to EPOCH_START_US; then toPprof's timestamp_us labels are epoch µs
// and time_nanos is set (as Go writes it), and EPOCH_PEERS adds per-sample
// pprof with @datadog/pprof's `end_timestamp_ns` label (epoch ns).
import { readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Label } from 'pprof-format';
import { REAL_STREAMS, SYNTHETIC_STREAMS, START_TIME_US, loadStream } from './_streams.mjs';
import * as pp from '../dist/index.js';
import { frameFromV8 } from '../dist/convert/cpuprofile.js';
import { toPprofProfile } from '../dist/convert/pprof.js';

export { REAL_STREAMS, SYNTHETIC_STREAMS };
export const ALL_STREAMS = [...REAL_STREAMS, ...SYNTHETIC_STREAMS];

const absent = (v) => (v === -1 ? null : v);

/** A frame of bench/_streams.mjs → a model frame, as the library's converters would make it. */
export function modelFrame(kind, f) {
  // V8 positions are 0-based; the library's .cpuprofile reader makes them 1-based (frameFromV8).
  if (kind === 'node') return frameFromV8({ functionName: f.funcname, url: f.filename, lineNumber: f.lineno, columnNumber: f.column });
  // Tachyon / perf / synthetic frames: -1 is "absent" (null in the model), opcode 255 is already null.
  return { filename: f.filename, funcname: f.funcname, lineno: absent(f.lineno), endLineno: absent(f.endLineno), column: absent(f.column), endColumn: absent(f.endColumn), opcode: f.opcode };
}

/**
 * The stream (read by bench/_streams.mjs: stacks innermost first, capped at
 * 256 frames, per-thread times from START_TIME_US) as a MemoryProfile whose
 * interval is the stream's median delta.
 */
/** 2026-11-23 00:00 UTC in µs: where an epoch-based model's clock starts. */
export const EPOCH_START_US = 1_795_392_000_000_000;

export function loadModel(name, { epoch = false } = {}) {
  const stream = loadStream(name);
  const shift = BigInt(epoch ? EPOCH_START_US - START_TIME_US : 0);
  const model = new pp.MemoryProfile({ startTimeUs: BigInt(START_TIME_US) + shift, sampleIntervalUs: BigInt(stream.intervalUs) });
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

/**
 * Per-sample pprof as @datadog/pprof's wall profiler writes it with its timeline on: each sample's
 * time as a numeric `end_timestamp_ns` label in epoch nanoseconds (unit nanoseconds) instead of
 * profpack's timestamp_us. Use with an epoch-based model.
 */
function datadogPerSample(m) {
  const profile = toPprofProfile(m);
  const strings = profile.stringTable;
  const kUs = strings.dedup('timestamp_us');
  const kNs = strings.dedup('end_timestamp_ns');
  const unitNs = strings.dedup('nanoseconds');
  for (const s of profile.sample) {
    s.label = s.label.map((l) => (l.key === kUs ? new Label({ key: kNs, num: BigInt(l.num) * 1000n, numUnit: unitNs }) : l));
  }
  return gzipSync(profile.encode(), { level: 6 });
}

/** Peers that only make sense on an epoch-based model (see the top of this file). */
export const EPOCH_PEERS = {
  'pprof.gz per sample, end_timestamp_ns': { encode: datadogPerSample, decode: (b) => pp.fromPprof(b).sampleCount },
};

/** Peer formats: encode(model) → bytes; decode(bytes) → sample count. */
export const PEERS = {
  '.cpuprofile': {
    encode: (m) => Buffer.from(JSON.stringify(pp.toCpuProfile(m))),
    decode: (b) => pp.fromCpuProfile(JSON.parse(b.toString('utf8'))).sampleCount,
  },
  'pprof.gz per sample': {
    encode: (m) => pp.toPprof(m),
    decode: (b) => pp.fromPprof(b).sampleCount,
  },
  'pprof.gz aggregated': {
    encode: (m) => pp.toPprof(m, { aggregate: true }),
    decode: (b) => pp.fromPprof(b).sampleCount,
  },
};

/**
 * Writes the model through ProfileWriter (writeStack per sample, via
 * copyProfile) and returns the file's size. `options` are ProfileWriter's:
 * formatVersion, stackCoding, compression, level, backend.
 */
export function writeTachyon(model, file, options = {}) {
  const writer = new pp.ProfileWriter(file, { sampleIntervalUs: model.meta.sampleIntervalUs, startTimeUs: model.meta.startTimeUs, ...options });
  pp.copyProfile(model, writer);
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
