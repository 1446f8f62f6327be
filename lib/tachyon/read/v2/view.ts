/**
 * ProfileReader's version-2 path: a decoded version-2 file (file.ts) seen
 * through the reader's API (info, layout, strings, frames, samples(),
 * replay()), so callers read versions 1 and 2 alike.
 *
 * Differences from version 1 that a caller can see: replay() calls
 * collect() once per sample (version 1 groups a REPEAT run into one call),
 * the record counters of ReplayStats are 0, and errors carry version 2's
 * codes (ERR_V2_*, docs/format-v2.md) with the offset, plus version 1's
 * ERR_TACHYON_FRAME_INDEX / ERR_TACHYON_STRING_INDEX for a stack that names
 * a frame the table cannot resolve.
 */
import { ErrorCode, ProfpackError, isProfpackError, type ErrorCodeValue } from '../../../errors';
import { Compression, FOOTER_SIZE, FORMAT_VERSION_2, HEADER_SIZE, MAGIC } from '../../format';
import { readHeader, type FileBytes } from '../../file/index';
import { frameFromStored, type Frame } from '../tables';
import type { Collector, InterpreterInfo, ReplayOptions, ReplayStats, Sample, TypedCollector } from '../types';
import { sampleCountError, threadCountError, type V2Profile, type V2SampleChunk } from './file';
import { BlockKind } from '../../codec/index';
import { zstdPrefix } from '../../file/index';

const BLOCK_PREFIX = 13;

/**
 * Whether ProfileReader reads a file as profpack's version 2: the header says
 * version 2 (little-endian, the only byte order version 2 has) and the sample
 * region is empty or starts with a sample block (12 zero bytes, kind 4 or 5).
 * Any other file that says version 2 is not profpack's, and is refused at
 * open exactly as CPython 3.15.2 refuses it ("format version 2") — e.g. the
 * shared vector e02_future_version. A region that cannot be located or
 * decompressed counts as version 2, so its own error is reported.
 */
export function isProfpackVersion2(source: FileBytes): boolean {
  if (source.size < HEADER_SIZE + FOOTER_SIZE) return false;
  const header = readHeader(source.read(0, HEADER_SIZE));
  if (header.magic !== MAGIC || header.version !== FORMAT_VERSION_2) return false;
  const regionEnd = header.stringTableOffset;
  if (regionEnd < BigInt(HEADER_SIZE) || regionEnd > BigInt(source.size)) return true;
  const stored = source.read(HEADER_SIZE, Number(regionEnd));
  const start =
    header.compressionType === Compression.Zstd ? zstdPrefix(stored, BLOCK_PREFIX) : stored.subarray(0, BLOCK_PREFIX);
  // An empty region (a zstd frame of nothing) holds no samples of either version.
  if (start === null || start.length === 0) return true;
  if (start.length < BLOCK_PREFIX) return false;
  for (let i = 0; i < BLOCK_PREFIX - 1; i++) if (start[i] !== 0) return false;
  const kind = start[BLOCK_PREFIX - 1];
  return kind === BlockKind.Predict || kind === BlockKind.StackTable || kind === BlockKind.StackTableRecent;
}

/** The frame table resolved as version 1's is (end = start + stored delta in int32; −1 stays −1). */
export function v2Frames(profile: V2Profile): (Frame | null)[] {
  return profile.frames.map((f) =>
    frameFromStored(
      profile.strings,
      f.filenameIndex,
      f.funcnameIndex,
      f.lineno,
      f.lineno === -1 ? -1 : (f.lineno + f.endLinenoDelta) | 0,
      f.column,
      f.column === -1 ? -1 : (f.column + f.endColumnDelta) | 0,
      f.opcode,
    ),
  );
}

/** A decoding error as a replay-stage error that says how many samples came before it. */
function replayFailure(err: unknown, delivered: number): unknown {
  if (!isProfpackError(err)) return err;
  const suffix = err.offset === undefined ? '' : ` (at byte ${err.offset})`;
  const message = suffix && err.message.endsWith(suffix) ? err.message.slice(0, -suffix.length) : err.message;
  return new ProfpackError(message, {
    code: err.code,
    offset: err.offset,
    expected: err.expected,
    cause: err,
    details: { ...err.details, stage: 'replay', samplesDelivered: delivered },
  });
}

function frameError(code: ErrorCodeValue, message: string, offset: number, delivered: number): ProfpackError {
  return new ProfpackError(message, { code, offset, details: { stage: 'replay', samplesDelivered: delivered } });
}

/**
 * Per-thread last stack: a sample with the same stack (and status, for
 * replay) as its thread's previous one reuses the objects handed out then.
 */
class ThreadStacks<T> {
  private readonly frames: Uint32Array[] = [];
  private readonly depths: number[] = [];
  private readonly statuses: number[] = [];
  private readonly values: T[] = [];

  /**
   * The cached value when thread t's previous sample had this stack and status, else undefined (and the stack is
   * remembered).
   */
  get(t: number, status: number, frames: ArrayLike<number>, from: number, depth: number): T | undefined {
    let prev = this.frames[t];
    if (prev !== undefined && this.depths[t] === depth && this.statuses[t] === status) {
      let k = 0;
      while (k < depth && prev[k] === frames[from + k]) k++;
      if (k === depth) return this.values[t];
    }
    if (prev === undefined) prev = this.frames[t] = new Uint32Array(256);
    for (let k = 0; k < depth; k++) prev[k] = frames[from + k]!;
    this.depths[t] = depth;
    this.statuses[t] = status;
    return undefined;
  }

  set(t: number, value: T): void {
    this.values[t] = value;
  }
}

/** A frame index checked against the frame table as version 1's reader checks it. */
export function checkFrameIndex(table: readonly (Frame | null)[], f: number, delivered: number): void {
  if (table[f] != null) return;
  if (f >= table.length)
    throw frameError(ErrorCode.TACHYON_FRAME_INDEX, `Invalid frame index: ${f}`, HEADER_SIZE, delivered);
  throw frameError(ErrorCode.TACHYON_STRING_INDEX, 'Invalid string index in frame', HEADER_SIZE, delivered);
}

/** Frame indices of one stack, checked against the frame table as version 1's reader checks them. */
function checkedStack<F>(
  table: readonly (Frame | null)[],
  frames: ArrayLike<number>,
  from: number,
  depth: number,
  delivered: number,
  map: (f: number, frame: Frame) => F,
): F[] {
  const out = new Array<F>(depth);
  for (let k = 0; k < depth; k++) {
    const f = frames[from + k]!;
    const frame = table[f];
    if (frame == null) {
      if (f >= table.length)
        throw frameError(ErrorCode.TACHYON_FRAME_INDEX, `Invalid frame index: ${f}`, HEADER_SIZE, delivered);
      throw frameError(ErrorCode.TACHYON_STRING_INDEX, 'Invalid string index in frame', HEADER_SIZE, delivered);
    }
    out[k] = map(f, frame);
  }
  return out;
}

const indexOf = (f: number): number => f;
const frameOf = (_f: number, frame: Frame): Frame => frame;

/** Where the walk over a version-2 profile is: sample i of chunk c, of thread t; `delivered` samples came before. */
export interface V2Cursor {
  c: V2SampleChunk;
  i: number;
  t: number;
  status: number;
  from: number;
  depth: number;
  delivered: number;
}

/**
 * The one loop over a version-2 profile's samples that samples() and
 * replay() share: chunk by chunk, with the header's thread and sample counts
 * checked; every error is a replay-stage error. The cursor object is reused.
 */
export function* walk(profile: V2Profile): Generator<V2Cursor, number, undefined> {
  const info = profile.info;
  const it = profile.chunks();
  let delivered = 0;
  let cursor: V2Cursor | null = null;
  // A walk left early (an error, a collector that throws, a caller that stops) ends the chunks' decoder now.
  try {
    for (;;) {
      let next: IteratorResult<V2SampleChunk, void>;
      try {
        next = it.next();
      } catch (err) {
        throw replayFailure(err, delivered);
      }
      if (next.done) break;
      const c = next.value;
      cursor ??= { c, i: 0, t: 0, status: 0, from: 0, depth: 0, delivered: 0 };
      cursor.c = c;
      for (let i = 0; i < c.count; i++) {
        const t = c.sampleThread[i]!;
        if (t >= info.threadCount) throw replayFailure(threadCountError(info, delivered), delivered);
        cursor.i = i;
        cursor.t = t;
        cursor.status = c.statuses[i]!;
        cursor.from = c.stackOffsets[i]!;
        cursor.depth = c.stackOffsets[i + 1]! - cursor.from;
        cursor.delivered = delivered;
        yield cursor;
        delivered++;
      }
    }
  } finally {
    it.return();
  }
  if (BigInt(delivered) !== info.sampleCount) throw replayFailure(sampleCountError(info, delivered), delivered);
  return delivered;
}

/** Every sample in file order, as ProfileReader.samples() yields them. */
export function* v2Samples(
  profile: V2Profile,
  table: readonly (Frame | null)[],
  onDone: (stats: ReplayStats) => void,
): Generator<Sample, void, undefined> {
  const stacks = new ThreadStacks<readonly number[]>();
  const samples = walk(profile);
  try {
    for (let r = samples.next(); ; r = samples.next()) {
      if (r.done) {
        onDone(v2Stats(r.value));
        return;
      }
      const { c, i, t, status, from, depth, delivered } = r.value;
      // Shared between samples of a thread with the same stack; the status does not matter here.
      let stack = stacks.get(t, 0, c.frames, from, depth);
      if (stack === undefined) {
        stack = checkedStack(table, c.frames, from, depth, delivered, indexOf);
        stacks.set(t, stack);
      }
      yield {
        threadId: c.threadIds[t]!,
        interpreterId: c.interpreterIds[t]!,
        timestampUs: c.timestamps[i]!,
        status,
        stack,
      };
    }
  } finally {
    samples.return(0);
  }
}

/** CPython's collector shape: one collect() per sample. Returns the number of samples. */
export function v2Replay(
  profile: V2Profile,
  table: readonly (Frame | null)[],
  collector: Collector | TypedCollector,
  options: ReplayOptions,
  onDone: (stats: ReplayStats) => void,
): number {
  const total = Number(profile.info.sampleCount);
  const onProgress = options.onProgress;
  const stacks = new ThreadStacks<readonly InterpreterInfo[]>();
  const samples = walk(profile);
  // 'typed': one reused one-element view, valid only during the call (as version 1's).
  const typed = options.timestamps === 'typed' ? new BigUint64Array(1) : null;
  let delivered = 0;
  onProgress?.(0, total);
  try {
    try {
      for (let r = samples.next(); !r.done; r = samples.next()) {
        const { c, i, t, status, from, depth } = r.value;
        delivered = r.value.delivered;
        let stackFrames = stacks.get(t, status, c.frames, from, depth);
        if (stackFrames === undefined) {
          const frameInfo = checkedStack(table, c.frames, from, depth, delivered, frameOf);
          stackFrames = [
            { interpreterId: c.interpreterIds[t]!, threads: [{ threadId: c.threadIds[t]!, status, frameInfo }] },
          ];
          stacks.set(t, stackFrames);
        }
        if (typed === null) (collector as Collector).collect(stackFrames, [c.timestamps[i]!]);
        else {
          typed[0] = c.timestamps[i]!;
          (collector as TypedCollector).collect(stackFrames, typed);
        }
        delivered++;
        if (onProgress && delivered % 1000 === 0) onProgress(delivered, total);
      }
    } finally {
      samples.return(0);
    }
  } catch (err) {
    if (isProfpackError(err) && err.details?.stage === 'replay') throw err;
    throw replayFailure(err, delivered);
  }
  onDone(v2Stats(delivered));
  onProgress?.(delivered, total);
  return delivered;
}

function v2Stats(samples: number): ReplayStats {
  return {
    repeatRecords: 0,
    repeatSamples: 0,
    fullRecords: 0,
    suffixRecords: 0,
    popPushRecords: 0,
    totalRecords: 0,
    totalSamples: samples,
    stackReconstructions: 0,
  };
}
