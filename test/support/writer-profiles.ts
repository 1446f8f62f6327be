/**
 * Helpers for the writer tests: turn a vector's expected JSON (CPython's own
 * dump) back into the calls CPython's writer was given, and split files into
 * their parts for comparison.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { decompress } from 'zstd-napi';
import type { DumpFrame, Frame } from '../../lib/tachyon/index';
import { readJsonExact, sharedPath } from './environment';
import { decodeU32, decodeZigzag32 } from '../../lib/varint/leb128';
import {
  ProfileWriter as ProfileWriterClass,
  type FrameInfo,
  type FrameSpec,
  type SampleInterpreterInfo,
  type ProfileWriter,
  type ProfileWriterOptions,
  type SampleThreadInfo,
} from '../../lib/tachyon/write/index';

/** internFrame's spec of a CPython-shaped frame whose location is an object (`filename` may be an interned id). */
export function frameSpecOf(f: FrameInfo, filename: string | number = f.filename): FrameSpec {
  const loc = f.location as { lineno: number; endLineno: number; colOffset: number; endColOffset: number };
  return {
    filename,
    funcname: f.funcname,
    lineno: loc.lineno,
    endLineno: loc.endLineno,
    column: loc.colOffset,
    endColumn: loc.endColOffset,
    opcode: f.opcode,
  };
}

// A frame of a vector's expected.json: the shape `profpack dump --json` writes.
export type ExpectedFrame = DumpFrame;

export interface ExpectedSample {
  thread_id: number | bigint;
  interpreter_id: number;
  timestamp_us: number | bigint;
  status: number;
  call: number;
  frames: ExpectedFrame[];
}

export interface Expected {
  file: string;
  info: {
    start_time_us: number | bigint;
    sample_interval_us: number | bigint;
    sample_count: number;
    thread_count: number;
    string_count: number;
    frame_count: number;
    compression_type: number;
    duration_sec: number | null;
    sample_rate: number | null;
    error_rate: number | null;
    missed_samples: number | null;
    mode: number | null;
    capture_features: number | null;
  };
  samples: ExpectedSample[];
}

export function loadVector(name: string): { bin: Uint8Array; expected: Expected } {
  const bin = new Uint8Array(readFileSync(sharedPath('vectors', 'tachyon', `${name}.bin`)));
  const expected = readJsonExact(sharedPath('vectors', 'tachyon', `${name}.expected.json`)) as Expected;
  return { bin, expected };
}

export interface FileParts {
  header: Uint8Array;
  /** The sample region as stored (compressed or not). */
  region: Uint8Array;
  /** The sample region's records (decompressed when needed). */
  records: Uint8Array;
  /** String table, frame table, stats block, footer. */
  tail: Uint8Array;
  stringTableOffset: number;
  frameTableOffset: number;
}

/** Splits a little-endian Tachyon file by its header offsets (independent of the writer). */
export function splitFile(bytes: Uint8Array): FileParts {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stringTableOffset = Number(view.getBigUint64(40, true));
  const frameTableOffset = Number(view.getBigUint64(48, true));
  const compression = view.getUint32(56, true);
  const region = bytes.subarray(64, stringTableOffset);
  const records = compression === 1 ? new Uint8Array(decompress(region)) : region;
  return {
    header: bytes.subarray(0, 64),
    region,
    records,
    tail: bytes.subarray(stringTableOffset),
    stringTableOffset,
    frameTableOffset,
  };
}

interface RawFrame {
  filename: string;
  funcname: string;
  lineno: number;
  endDelta: number;
  column: number;
  endColumnDelta: number;
  opcode: number;
}

/**
 * The raw frame table of a file. CPython's reader drops a frame's columns when
 * its lineno is -1 (location None), so the JSON alone cannot say what those
 * frames stored; only for them do the tests look at the raw entries.
 */
export function rawFrames(bytes: Uint8Array): RawFrame[] {
  const parts = splitFile(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stringCount = view.getUint32(bytes.length - 32, true);
  const frameCount = view.getUint32(bytes.length - 28, true);
  const decoder = new TextDecoder();
  const strings: string[] = [];
  let pos = parts.stringTableOffset;
  for (let i = 0; i < stringCount; i++) {
    const len = decodeU32(bytes, pos);
    pos += len.length;
    strings.push(decoder.decode(bytes.subarray(pos, pos + len.value)));
    pos += len.value;
  }
  const frames: RawFrame[] = [];
  pos = parts.frameTableOffset;
  const next = (zig: boolean): number => {
    const d = zig ? decodeZigzag32(bytes, pos) : decodeU32(bytes, pos);
    pos += d.length;
    return d.value;
  };
  for (let i = 0; i < frameCount; i++) {
    const filename = strings[next(false)]!;
    const funcname = strings[next(false)]!;
    const lineno = next(true);
    const endDelta = next(true);
    const column = next(true);
    const endColumnDelta = next(true);
    const opcode = bytes[pos++]!;
    frames.push({ filename, funcname, lineno, endDelta, column, endColumnDelta, opcode });
  }
  return frames;
}

/** The FrameInfo CPython's writer was given for a frame of the expected JSON. */
export function frameInfoOf(frame: ExpectedFrame, raw: RawFrame[]): FrameInfo {
  if (frame.lineno !== null) {
    return {
      filename: frame.filename,
      funcname: frame.funcname,
      location: {
        lineno: frame.lineno,
        endLineno: frame.end_lineno,
        colOffset: frame.column,
        endColOffset: frame.end_column,
      },
      opcode: frame.opcode,
    };
  }
  const opcode = frame.opcode ?? 255;
  const candidates = raw.filter(
    (r) => r.filename === frame.filename && r.funcname === frame.funcname && r.lineno === -1 && r.opcode === opcode,
  );
  const distinct = new Set(candidates.map((r) => `${r.column}/${r.endColumnDelta}`));
  if (distinct.size > 1) throw new Error(`ambiguous location-less frame ${frame.funcname}`);
  const stored = candidates[0];
  if (stored === undefined || stored.column === -1)
    return { filename: frame.filename, funcname: frame.funcname, location: null, opcode: frame.opcode };
  return {
    filename: frame.filename,
    funcname: frame.funcname,
    location: {
      lineno: -1,
      endLineno: -1,
      colOffset: stored.column,
      endColOffset: stored.column + stored.endColumnDelta,
    },
    opcode: frame.opcode,
  };
}

export function writerOptions(expected: Expected, compression: 'zstd' | 'none'): ProfileWriterOptions {
  const info = expected.info;
  return {
    sampleIntervalUs: info.sample_interval_us,
    startTimeUs: info.start_time_us,
    compression,
    mode: info.mode,
    captureFeatures: info.capture_features,
  };
}

export function applyStats(writer: ProfileWriter, expected: Expected): void {
  const info = expected.info;
  if (info.duration_sec !== null && info.sample_rate !== null)
    writer.setStats(info.duration_sec, info.sample_rate, info.error_rate, info.missed_samples);
}

function threadKey(s: ExpectedSample): string {
  return `${s.thread_id}/${s.interpreter_id}`;
}

/** Whether each sample repeats its thread's previous stack (a thread starts with the empty stack). */
function repeatFlags(samples: ExpectedSample[]): boolean[] {
  const last = new Map<string, string>();
  return samples.map((s) => {
    const key = threadKey(s);
    const stack = JSON.stringify(s.frames);
    const same = (last.get(key) ?? '[]') === stack;
    last.set(key, stack);
    return same;
  });
}

export type Call = { timestamp: number | bigint; samples: ExpectedSample[] };

/**
 * Calls that reproduce the file when fed one sample at a time in file order.
 * The one case where file order is not enough: a REPEAT run split at the
 * 16 KiB buffer while other threads' records lie between its two parts. The
 * second part's first sample is what flushed the first part, so it is fed
 * right after the first part.
 */
export function fileOrderCalls(samples: ExpectedSample[]): Call[] {
  const repeat = repeatFlags(samples);
  const nextOfThread = new Array<number>(samples.length).fill(-1);
  const seen = new Map<string, number>();
  for (let i = samples.length - 1; i >= 0; i--) {
    const key = threadKey(samples[i]!);
    nextOfThread[i] = seen.get(key) ?? -1;
    seen.set(key, i);
  }
  const fed = new Array<boolean>(samples.length).fill(false);
  const calls: Call[] = [];
  const feed = (i: number): void => {
    fed[i] = true;
    calls.push({ timestamp: samples[i]!.timestamp_us, samples: [samples[i]!] });
  };
  for (let i = 0; i < samples.length; i++) {
    if (fed[i]) continue;
    feed(i);
    const j = nextOfThread[i]!;
    if (repeat[i] && j > i + 1 && repeat[j] && !fed[j]) feed(j);
  }
  return calls;
}

/**
 * The calls in the order CPython's generator made them, when the file allows
 * recovering it: every write_sample call has one timestamp for all its
 * threads, so sorting by (timestamp, file position) is the call order if
 * each thread's timestamps never decrease and the non-REPEAT records (written at
 * once, in call order) are in timestamp order. Null when they are not.
 */
export function chronologicalCalls(samples: ExpectedSample[]): Call[] | null {
  const repeat = repeatFlags(samples);
  const lastTs = new Map<string, bigint>();
  let lastRecordTs = -1n;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    const ts = BigInt(s.timestamp_us);
    const key = threadKey(s);
    const prev = lastTs.get(key);
    if (prev !== undefined && ts < prev) return null;
    lastTs.set(key, ts);
    if (!repeat[i]) {
      if (ts < lastRecordTs) return null;
      lastRecordTs = ts;
    }
  }
  const order = samples.map((s, i) => ({ s, i, ts: BigInt(s.timestamp_us) }));
  order.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.i - b.i));
  const calls: Call[] = [];
  for (const { s } of order) {
    const last = calls[calls.length - 1];
    if (last !== undefined && BigInt(last.timestamp) === BigInt(s.timestamp_us)) last.samples.push(s);
    else calls.push({ timestamp: s.timestamp_us, samples: [s] });
  }
  return calls;
}

/** One write_sample call: consecutive threads of one interpreter share an SampleInterpreterInfo. */
export function toInterpreters(call: Call, frameOf: (f: ExpectedFrame) => FrameInfo): SampleInterpreterInfo[] {
  const out: {
    interpreterId: number;
    threads: { threadId: number | bigint; status: number; frameInfo: FrameInfo[] }[];
  }[] = [];
  for (const s of call.samples) {
    let interp = out[out.length - 1];
    if (interp === undefined || interp.interpreterId !== s.interpreter_id) {
      interp = { interpreterId: s.interpreter_id, threads: [] };
      out.push(interp);
    }
    interp.threads.push({ threadId: s.thread_id, status: s.status, frameInfo: s.frames.map(frameOf) });
  }
  return out;
}

// ---- generated profiles (fast-check) ----------------------------------------

export type Op =
  | { kind: 'same' }
  | { kind: 'push'; frames: number[] }
  | { kind: 'pop'; count: number }
  | { kind: 'popPush'; count: number; frames: number[] }
  | { kind: 'replace'; frames: number[] }
  | { kind: 'empty' }
  | { kind: 'deep'; depth: number; salt: number };

export interface ThreadSpec {
  threadId: bigint;
  interpreterId: number;
}

export interface CallSpec {
  step: bigint; // signed step from the previous call's timestamp
  samples: { thread: number; status: number; op: Op }[];
}

export interface ProfileSpec {
  compression: 'zstd' | 'none';
  mode?: number;
  features?: number;
  startTimeUs: bigint;
  intervalUs: bigint;
  threads: ThreadSpec[];
  frames: FrameInfo[];
  calls: CallSpec[];
}

export const U64 = (1n << 64n) - 1n;
const names = ['main', 'run', 'wörk', 'λ', '処理', '🔥', '', 'a\u0000b', 'x'.repeat(200)];
const int32Edge = fc.constantFrom(-1, 0, 1, 2147483647, -2147483648);
const smallLine = fc.integer({ min: -1, max: 100000 });

const frameArb: fc.Arbitrary<FrameInfo> = fc.record({
  filename: fc.constantFrom('app.py', '/usr/lib/python3.15/threading.py', 'ünï.py', '<frozen>'),
  funcname: fc.constantFrom(...names),
  location: fc.oneof(
    fc.constant(null),
    fc.record({
      lineno: smallLine,
      endLineno: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 1000 })),
      colOffset: fc.integer({ min: -1, max: 200 }),
      endColOffset: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 300 })),
    }),
    fc.record({ lineno: int32Edge, endLineno: fc.constant(-1), colOffset: int32Edge, endColOffset: fc.constant(-1) }),
  ),
  opcode: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 254 }), fc.constantFrom(255, 300, -1)),
});

const frameIds = (max: number) => fc.array(fc.nat({ max: 63 }), { minLength: 1, maxLength: max });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'same' as const }) },
  { weight: 3, arbitrary: frameIds(4).map((frames) => ({ kind: 'push' as const, frames })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }).map((count) => ({ kind: 'pop' as const, count })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ count: fc.integer({ min: 1, max: 6 }), frames: frameIds(4) })
      .map((o) => ({ kind: 'popPush' as const, ...o })),
  },
  { weight: 1, arbitrary: frameIds(12).map((frames) => ({ kind: 'replace' as const, frames })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .record({ depth: fc.integer({ min: 250, max: 300 }), salt: fc.nat({ max: 7 }) })
      .map((o) => ({ kind: 'deep' as const, ...o })),
  },
);

const threadIdArb = fc.oneof(
  fc.bigInt({ min: 0n, max: 100n }),
  fc.bigInt({ min: 0n, max: U64 }),
  fc.constantFrom(0n, U64, 1n << 63n, (1n << 53n) + 1n),
);
const interpArb = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(0xffff_ffff, 65535));
const statusArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 63 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 255 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 259, 1 << 20) },
);
const stepArb = fc.oneof(
  { weight: 8, arbitrary: fc.bigInt({ min: 0n, max: 5000n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -5000n, max: -1n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -U64, max: U64 }) },
);

export const profileArb: fc.Arbitrary<ProfileSpec> = fc
  .record({
    compression: fc.constantFrom('zstd' as const, 'none' as const),
    mode: fc.integer({ min: -1, max: 4 }),
    features: fc.integer({ min: -1, max: 31 }),
    startTimeUs: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.bigInt({ min: 0n, max: U64 })),
    intervalUs: fc.bigInt({ min: 0n, max: 100000n }),
    threads: fc.uniqueArray(fc.record({ threadId: threadIdArb, interpreterId: interpArb }), {
      minLength: 1,
      maxLength: 10,
      selector: (t) => `${t.threadId}/${t.interpreterId}`,
    }),
    frames: fc.array(frameArb, { minLength: 1, maxLength: 64 }),
    rawCalls: fc.array(
      fc.record({
        step: stepArb,
        samples: fc.array(fc.record({ thread: fc.nat(), status: statusArb, op: opArb }), { maxLength: 8 }),
      }),
      { maxLength: 50 },
    ),
  })
  .map(({ rawCalls, ...rest }) => ({
    ...rest,
    calls: rawCalls.map((c) => ({
      step: c.step,
      samples: c.samples.map((s) => ({ ...s, thread: s.thread % rest.threads.length })),
    })),
  }));

/** Stacks as frame-pool indices, innermost first. */
export function applyOp(prev: number[], op: Op, poolSize: number): number[] {
  const pick = (ids: number[]) => ids.map((i) => i % poolSize);
  switch (op.kind) {
    case 'same':
      return prev;
    case 'push':
      return [...pick(op.frames), ...prev];
    case 'pop':
      return prev.slice(Math.min(op.count, prev.length));
    case 'popPush':
      return [...pick(op.frames), ...prev.slice(Math.min(op.count, prev.length))];
    case 'replace':
      return pick(op.frames);
    case 'empty':
      return [];
    case 'deep':
      return Array.from({ length: op.depth }, (_, i) => (i * 7 + op.salt) % poolSize);
  }
}

export interface MaterializedThread {
  threadId: bigint;
  interpreterId: number;
  status: number;
  /** Indices into spec.frames, innermost first (may be deeper than 256). */
  stack: number[];
}
export interface MaterializedCall {
  timestamp: bigint;
  threads: MaterializedThread[];
}

/** The write_sample calls a spec stands for (timestamps wrap in u64 like CPython's arithmetic). */
export function materialize(spec: ProfileSpec): MaterializedCall[] {
  const stacks = spec.threads.map(() => [] as number[]);
  let ts = spec.startTimeUs;
  return spec.calls.map((call) => {
    ts = BigInt.asUintN(64, ts + call.step);
    // One write_sample call: threads grouped by interpreter, in first appearance order.
    const byInterp = new Map<number, MaterializedThread[]>();
    for (const s of call.samples) {
      const thread = spec.threads[s.thread]!;
      const stack = applyOp(stacks[s.thread]!, s.op, spec.frames.length);
      stacks[s.thread] = stack;
      if (!byInterp.has(thread.interpreterId)) byInterp.set(thread.interpreterId, []);
      byInterp
        .get(thread.interpreterId)!
        .push({ threadId: thread.threadId, interpreterId: thread.interpreterId, status: s.status, stack });
    }
    return { timestamp: ts, threads: [...byInterp.values()].flat() };
  });
}

/** Feeds the calls to ProfileWriter.writeSample. */
export function writeWithProfpack(
  spec: ProfileSpec,
  calls: MaterializedCall[],
  file: string,
  encoder?: 'native' | 'js',
  extra: Partial<ProfileWriterOptions> = {},
): ProfileWriter {
  const writer = new ProfileWriterClass(file, {
    sampleIntervalUs: spec.intervalUs,
    startTimeUs: spec.startTimeUs,
    compression: spec.compression,
    mode: spec.mode,
    captureFeatures: spec.features,
    backend: encoder,
    ...extra,
  });
  for (const call of calls) {
    const interps: SampleInterpreterInfo[] = [];
    for (const t of call.threads) {
      let last = interps[interps.length - 1] as { interpreterId: number; threads: SampleThreadInfo[] } | undefined;
      if (last === undefined || last.interpreterId !== t.interpreterId) {
        last = { interpreterId: t.interpreterId, threads: [] };
        interps.push(last);
      }
      last.threads.push({ threadId: t.threadId, status: t.status, frameInfo: t.stack.map((i) => spec.frames[i]!) });
    }
    writer.writeSample(interps, call.timestamp);
  }
  return writer;
}

/** The sample file bench/cpython_write.py feeds to CPython's BinaryWriter. */
export function writeSampleFile(file: string, spec: ProfileSpec, calls: MaterializedCall[]): void {
  const frames = spec.frames.map((f) => {
    const loc = f.location as
      { lineno: number; endLineno: number; colOffset: number; endColOffset: number } | null | undefined;
    const opcode = f.opcode === undefined ? null : f.opcode;
    return loc === null || loc === undefined
      ? [f.filename, f.funcname, null, opcode]
      : [f.filename, f.funcname, loc.lineno, loc.endLineno, loc.colOffset, loc.endColOffset, opcode];
  });
  const meta = new TextEncoder().encode(
    JSON.stringify({
      start: '@START@',
      interval: '@INTERVAL@',
      compression: spec.compression === 'zstd' ? 1 : 0,
      mode: spec.mode ?? -1,
      features: spec.features ?? -1,
      frames,
    })
      // u64 values beyond 2^53 must reach Python exactly
      .replace('"@START@"', spec.startTimeUs.toString())
      .replace('"@INTERVAL@"', spec.intervalUs.toString()),
  );
  let size = 8 + meta.length + 4;
  for (const c of calls) {
    size += 12;
    for (const t of c.threads) size += 20 + 4 * t.stack.length;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set([0x50, 0x50, 0x57, 0x53], 0);
  view.setUint32(4, meta.length, true);
  out.set(meta, 8);
  let pos = 8 + meta.length;
  view.setUint32(pos, calls.length, true);
  pos += 4;
  for (const c of calls) {
    view.setBigUint64(pos, c.timestamp, true);
    view.setUint32(pos + 8, c.threads.length, true);
    pos += 12;
    for (const t of c.threads) {
      view.setBigUint64(pos, t.threadId, true);
      view.setUint32(pos + 8, t.interpreterId, true);
      view.setInt32(pos + 12, t.status, true);
      view.setUint32(pos + 16, t.stack.length, true);
      pos += 20;
      for (const id of t.stack) {
        view.setUint32(pos, id, true);
        pos += 4;
      }
    }
  }
  writeFileSync(file, out);
}

/** A frame as a reader hands it back (CPython's reconstruction rules, tachyon-format.md §4 "Reader reconstruction"). */
export function readBack(f: FrameInfo): Frame {
  const loc = f.location as { lineno: number; endLineno: number; colOffset: number; endColOffset: number } | null;
  const opcode = typeof f.opcode === 'number' && f.opcode >= 0 && f.opcode <= 254 ? f.opcode : null;
  if (loc === null || loc.lineno === -1)
    return {
      filename: f.filename,
      funcname: f.funcname,
      lineno: null,
      endLineno: null,
      column: null,
      endColumn: null,
      opcode,
    };
  const column = loc.colOffset;
  return {
    filename: f.filename,
    funcname: f.funcname,
    lineno: loc.lineno,
    endLineno: loc.endLineno === -1 ? loc.lineno : loc.endLineno,
    column,
    endColumn: column === -1 ? -1 : loc.endColOffset === -1 ? column : loc.endColOffset,
    opcode,
  };
}
