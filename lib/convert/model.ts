/**
 * The neutral profile model every converter goes through: a frames table and
 * a stream of samples, each with thread, interpreter, time, status and a
 * stack of frame indices (innermost first, as Tachyon stores it).
 *
 * A `ProfileSource` is read once, in order, through `samples()`; its `frames`
 * array may still grow while samples are read (a recording interns frames as
 * they appear), but a sample only names frames that exist when it is yielded.
 * A `ProfileSink` has the shape of ProfileWriter's fast path, so the same
 * producer can write to memory or to a Tachyon file.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { ThreadStatus } from '../tachyon/index';

/** One frame, in the field names of Tachyon's frame table; `null` = absent (CPython's -1 / 255). */
export interface Frame {
  filename: string;
  funcname: string;
  lineno: number | null;
  endLineno: number | null;
  column: number | null;
  endColumn: number | null;
  opcode: number | null;
}

export interface Sample {
  threadId: bigint;
  interpreterId: number;
  /** Absolute time in µs (Tachyon keeps u64 µs). */
  timestampUs: bigint;
  /** Tachyon status byte (ThreadStatus bits; NodeStatus.InGc for V8's GC). */
  status: number;
  /** Frame indices, innermost first. */
  stack: ArrayLike<number>;
}

export interface ProfileMeta {
  /** Start of the profile in µs: the Unix epoch when isEpochUs() says so, else the source's own clock (CPython's and V8's are monotonic). */
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
  /** Duration the source states (pprof duration_nanos, Tachyon's stats block), when it states one. */
  durationUs?: bigint;
  /** Thread names the source knows, by threadKey() (pprof thread-name labels, speedscope profile names). */
  threadNames?: Map<string, string>;
  /**
   * The recorded process, when the file says (a profpack Node recording:
   * host/pid/start): the files rotated from one process share it, so their
   * threads are the same threads.
   */
  processIdentity?: string;
}

/**
 * Whether a start time in µs reads as the Unix epoch: anything after
 * 2001-09-09 (10^15 µs). Monotonic clocks count from boot, and no machine has
 * been up for 31 years, so the two never overlap.
 */
export function isEpochUs(us: bigint): boolean {
  return us >= 1_000_000_000_000_000n;
}

/** The name shown for a function without one, as V8 and Chrome show it. */
export const ANONYMOUS = '(anonymous)';

export function anonymousName(funcname: string): string {
  return funcname === '' ? ANONYMOUS : funcname;
}

export interface ProfileSource {
  readonly meta: ProfileMeta;
  readonly frames: readonly Frame[];
  samples(): Iterable<Sample>;
  /** Number of samples when known up front (progress reporting). */
  readonly sampleCount?: number;
}

export interface ProfileSink {
  internFrame(frame: Frame): number;
  writeStack(threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, frameIds: ArrayLike<number>): void;
}

/**
 * Status bits profpack writes for Node recordings. Tachyon's status byte
 * leaves bits 6-7 unused and CPython's reader passes them through unchanged
 * (tachyon-format.md §3.2), so V8's "(garbage collector)" samples are marked
 * with bit 6 next to ON_CPU.
 */
export const NodeStatus = {
  ...ThreadStatus,
  InGc: 64,
} as const;

export function frameKey(f: Frame): string {
  return `${f.filename}\u0000${f.funcname}\u0000${f.lineno}\u0000${f.endLineno}\u0000${f.column}\u0000${f.endColumn}\u0000${f.opcode}`;
}

export function makeFrame(funcname: string, filename: string, lineno: number | null = null, column: number | null = null): Frame {
  return { filename, funcname, lineno, endLineno: null, column, endColumn: null, opcode: null };
}

const absent = (v: number | null): number | null => (v === -1 ? null : v);

/**
 * The model's `null` is Tachyon's -1 ("no position"). CPython's reader hands
 * a stored column of -1 back as -1 when the line is known (only lineno -1
 * turns the whole location into None), so frames read from Tachyon go
 * through this to mean the same thing as frames from other formats.
 */
export function normalizeFrame(f: Frame): Frame {
  return { filename: f.filename, funcname: f.funcname, lineno: absent(f.lineno), endLineno: absent(f.endLineno), column: absent(f.column), endColumn: absent(f.endColumn), opcode: f.opcode };
}

/** A thread's identity in Tachyon: (thread_id, interpreter_id). */
export function threadKey(threadId: bigint, interpreterId: number): string {
  return interpreterId === 0 ? threadId.toString() : `${threadId}@${interpreterId}`;
}

export function parseThreadKey(key: string): { threadId: bigint; interpreterId: number } {
  const at = key.indexOf('@');
  if (at < 0) return { threadId: BigInt(key), interpreterId: 0 };
  return { threadId: BigInt(key.slice(0, at)), interpreterId: Number(key.slice(at + 1)) };
}

/** An in-memory profile: a source and a sink at once. Frames are deduplicated on all 7 fields. */
export class MemoryProfile implements ProfileSource, ProfileSink {
  readonly frames: Frame[] = [];
  readonly sampleList: Sample[] = [];
  private readonly frameIds = new Map<string, number>();

  constructor(readonly meta: ProfileMeta = { startTimeUs: 0n, sampleIntervalUs: 1000n }) {}

  get sampleCount(): number {
    return this.sampleList.length;
  }

  internFrame(frame: Frame): number {
    const key = frameKey(frame);
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push({ ...frame });
      this.frameIds.set(key, id);
    }
    return id;
  }

  writeStack(threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, frameIds: ArrayLike<number>): void {
    this.sampleList.push({ threadId, interpreterId, timestampUs, status, stack: Array.from(frameIds) });
  }

  samples(): Iterable<Sample> {
    return this.sampleList;
  }

  /** Copies every sample of a source (frames re-interned, so indices are this profile's). */
  static from(source: ProfileSource): MemoryProfile {
    const out = new MemoryProfile({ ...source.meta });
    copyProfile(source, out);
    return out;
  }
}

/** Streams a source into a sink, interning each frame once. */
export function copyProfile(source: ProfileSource, sink: ProfileSink, onSample?: (done: number) => void): number {
  const remap: number[] = [];
  let ids = new Uint32Array(64);
  let count = 0;
  for (const sample of source.samples()) {
    const depth = sample.stack.length;
    if (ids.length < depth) ids = new Uint32Array(depth * 2);
    for (let i = 0; i < depth; i++) {
      const from = sample.stack[i]!;
      let to = remap[from];
      if (to === undefined) {
        const frame = source.frames[from];
        if (frame === undefined) throw new RangeError(`sample names frame ${from}, but the source has ${source.frames.length}`);
        to = sink.internFrame(frame);
        remap[from] = to;
      }
      ids[i] = to;
    }
    sink.writeStack(sample.threadId, sample.interpreterId, sample.timestampUs, sample.status, ids.subarray(0, depth));
    count++;
    if (onSample !== undefined && (count & 1023) === 0) onSample(count);
  }
  return count;
}

/**
 * Runs a JSON reader: a value of the wrong type somewhere in the document
 * (a TypeError or RangeError from the reader's own code) becomes one coded
 * error instead of a crash. The readers check the structure they rely on; this
 * catches the leaves they take on trust.
 */
export function readJsonShape<T>(what: string, expected: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof TypeError || err instanceof RangeError) {
      throw new ProfpackError(`not a ${what}: a value has the wrong type (${err.message})`, { code: ErrorCode.CONVERT_BAD_INPUT, expected, cause: err });
    }
    throw err;
  }
}

/** Human label of a frame, as flame-graph tools show it. */
export function frameLabel(f: Frame): string {
  const name = anonymousName(f.funcname);
  if (f.filename === '') return name;
  return f.lineno === null ? `${name} (${f.filename})` : `${name} (${f.filename}:${f.lineno})`;
}
