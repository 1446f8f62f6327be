/**
 * Helpers for the writer tests: turn a vector's expected JSON (CPython's own
 * dump) back into the calls CPython's writer was given, and split files into
 * their parts for comparison.
 */
import { readFileSync } from 'node:fs';
import { decompress } from 'zstd-napi';
import { readJsonExact, sharedPath } from '../shared';
import { decodeU32, decodeZigzag32 } from '../../lib/varint/leb128';
import type { FrameInfo, InterpreterInfo, ProfileWriter, ProfileWriterOptions } from '../../lib/tachyon/writer';

export interface ExpectedFrame {
  filename: string;
  funcname: string;
  lineno: number | null;
  end_lineno: number | null;
  column: number | null;
  end_column: number | null;
  opcode: number | null;
}

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
  return { header: bytes.subarray(0, 64), region, records, tail: bytes.subarray(stringTableOffset), stringTableOffset, frameTableOffset };
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
      location: { lineno: frame.lineno, endLineno: frame.end_lineno, colOffset: frame.column, endColOffset: frame.end_column },
      opcode: frame.opcode,
    };
  }
  const opcode = frame.opcode ?? 255;
  const candidates = raw.filter((r) => r.filename === frame.filename && r.funcname === frame.funcname && r.lineno === -1 && r.opcode === opcode);
  const distinct = new Set(candidates.map((r) => `${r.column}/${r.endColumnDelta}`));
  if (distinct.size > 1) throw new Error(`ambiguous location-less frame ${frame.funcname}`);
  const stored = candidates[0];
  if (stored === undefined || stored.column === -1) return { filename: frame.filename, funcname: frame.funcname, location: null, opcode: frame.opcode };
  return {
    filename: frame.filename,
    funcname: frame.funcname,
    location: { lineno: -1, endLineno: -1, colOffset: stored.column, endColOffset: stored.column + stored.endColumnDelta },
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
  if (info.duration_sec !== null && info.sample_rate !== null) writer.setStats(info.duration_sec, info.sample_rate, info.error_rate, info.missed_samples);
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

/** One write_sample call: consecutive threads of one interpreter share an InterpreterInfo. */
export function toInterpreters(call: Call, frameOf: (f: ExpectedFrame) => FrameInfo): InterpreterInfo[] {
  const out: { interpreterId: number; threads: { threadId: number | bigint; status: number; frameInfo: FrameInfo[] }[] }[] = [];
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
