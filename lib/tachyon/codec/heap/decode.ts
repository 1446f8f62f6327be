/**
 * The heap section's decoder (docs/format-v2.md §9): one chunk in memory at a
 * time, one record handed out at a time, every count checked against the
 * bytes left before anything is allocated. Errors are ERR_V2_BAD_HEAP (or
 * ERR_V2_TRUNCATED, ERR_V2_LIMIT, the stack coding's codes) at the file
 * offset; inside a zstd chunk, the chunk's first stored byte + the offset in
 * its decompressed records. Under the native backend the records of each
 * chunk are decoded by the addon (native/tachyon/v2/heap_decoder.cc): same
 * limits, codes and offsets; the framing, zstd and totals stay here.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { zstdDecompress } from '../../file/index';
import { MAX_STACK_DEPTH } from '../../format';
import { ByteSource } from '../bytes';
import { LiveList } from './live';
import {
  HEAP_CHUNK_MAX_BYTES,
  HEAP_MAX_THREADS,
  HEAP_RECORD_MAX_OBJECTS,
  HEAP_TOTAL_FIELDS,
  HeapChunkCoding,
  HeapRecordFlag,
  unzigzagWide,
  type HeapTotals,
} from './format';
import { heapLimitError, heapReadLimits, type HeapReadLimits } from './limits';
import { v2Native, type NativeHeapDecoderHandle, type V2Native } from '../native';
import { RecentStackDecoder } from '../recent';
import type { StackTableSources } from '../stacktable';

/** One record: a live batch, or a poll's allocation and/or free batch of one thread. */
export interface HeapRecord {
  flags: number;
  threadIndex: number;
  threadId: bigint;
  timeUs: number;
  sinceUs: number;
  shortLived: number;
  ordinals: Uint32Array;
  sizes: Uint32Array;
  /** Per object: the frames of its stack, innermost first (empty: none), as `stackOf` numbered them. */
  stackIds: Uint32Array;
  /** Live records: each object's allocation time. */
  allocTimesUs: Float64Array | null;
  /** Free batch: the freed ordinals, ascending. */
  freed: Uint32Array;
  /** Memory records: the thread's external and ArrayBuffer bytes at `timeUs` (else 0). */
  externalBytes: number;
  arrayBuffersBytes: number;
  /** The objects are external (Buffer and ArrayBuffer backing stores, HeapRecordFlag.External). */
  external: boolean;
}

/** Maps a decoded stack (frame ids, innermost first; depth ≥ 1) to the caller's stack id. */
export type HeapStackOf = (frames: Uint32Array, depth: number) => number;

const VALID_FLAGS = new Set([
  HeapRecordFlag.Live,
  HeapRecordFlag.Alloc,
  HeapRecordFlag.Free,
  HeapRecordFlag.Alloc | HeapRecordFlag.Free,
  HeapRecordFlag.Memory,
  HeapRecordFlag.External | HeapRecordFlag.Live,
  HeapRecordFlag.External | HeapRecordFlag.Alloc,
  HeapRecordFlag.External | HeapRecordFlag.Free,
  HeapRecordFlag.External | HeapRecordFlag.Alloc | HeapRecordFlag.Free,
]);

const NO_OBJECTS = new Uint32Array(0);

function bad(message: string, offset: number, expected: string): ProfpackError {
  return new ProfpackError(`heap section: ${message}`, { code: ErrorCode.V2_BAD_HEAP, offset, expected });
}

export class HeapSectionDecoder {
  readonly totals: HeapTotals;
  private readonly firstChunk: number;
  private readonly limits: HeapReadLimits;

  /**
   * `section`: the section's bytes, at file offset `offset`; `frameCount`: the file's frames; `native`: the addon's
   * twin (the backend's; null: the JS decoder).
   */
  constructor(
    private readonly section: Uint8Array,
    private readonly offset: number,
    private readonly startTimeUs: number,
    private readonly frameCount: number,
    private readonly stackOf: HeapStackOf,
    private readonly native: V2Native | null = v2Native,
  ) {
    [this.totals, this.firstChunk] = decodeHeapTotals(section, offset);
    this.limits = heapReadLimits();
    // The header's totals are checked again after the last chunk: one past a limit is refused before any record.
    const events = this.totals.allocations + this.totals.frees + this.totals.live;
    if (events > this.limits.events) throw heapLimitError('events', events, this.limits.events, 'heap section', offset);
  }

  /** Every record in file order; bad input throws after the records before it. */
  *records(): Generator<HeapRecord, void, undefined> {
    const native = this.native;
    const state = new DecoderState(this.startTimeUs);
    const handle =
      native === null
        ? null
        : native.createHeapDecoder(this.startTimeUs, this.frameCount, this.limits.live, this.limits.events);
    try {
      yield* this.chunks(state, handle);
    } finally {
      if (handle !== null) native!.releaseHeapDecoder(handle);
    }
    const counted = state.totals;
    for (const field of HEAP_TOTAL_FIELDS) {
      if (field !== 'intervalBytes' && counted[field] !== this.totals[field]) {
        throw bad(
          `the records hold ${counted[field]} ${field}, the header says ${this.totals[field]}`,
          this.offset,
          `${counted[field]}`,
        );
      }
    }
  }

  /** The chunks' records; the native decoder's totals end up in `state`. */
  private *chunks(state: DecoderState, handle: NativeHeapDecoderHandle | null): Generator<HeapRecord, void, undefined> {
    const section = new ByteSource(this.section, this.firstChunk, this.section.length, this.offset);
    while (section.remaining() > 0) {
      const at = section.pos;
      const coding = section.u8('chunk coding');
      if (coding !== HeapChunkCoding.Raw && coding !== HeapChunkCoding.Zstd)
        throw bad(`chunk coding ${coding}`, section.offset(at), '0 (raw) or 1 (zstd)');
      const storedAt = section.pos;
      const stored = section.uvarint49();
      if (stored > section.remaining()) {
        throw section.fail(
          ErrorCode.V2_TRUNCATED,
          `heap chunk of ${stored} bytes, ${section.remaining()} left in the section`,
          `at most ${section.remaining()} bytes`,
          storedAt,
        );
      }
      const rawAt = section.pos;
      const raw = coding === HeapChunkCoding.Zstd ? section.uvarint49() : stored;
      if (raw > HEAP_CHUNK_MAX_BYTES) {
        throw section.fail(
          ErrorCode.V2_LIMIT,
          `heap chunk of ${raw} bytes`,
          `at most ${HEAP_CHUNK_MAX_BYTES} bytes`,
          rawAt,
        );
      }
      const bodyAt = section.pos;
      section.pos += stored;
      let records: ByteSource;
      if (coding === HeapChunkCoding.Raw) {
        records = new ByteSource(this.section, bodyAt, bodyAt + stored, this.offset);
      } else {
        const body = zstdDecompress(
          this.section.subarray(bodyAt, bodyAt + stored),
          this.offset + bodyAt,
          'heap chunk',
          raw,
        );
        if (body.length !== raw)
          throw bad(`chunk decompresses to ${body.length} bytes, not ${raw}`, this.offset + rawAt, `${raw} bytes`);
        records = new ByteSource(body, 0, body.length, this.offset + bodyAt);
      }
      if (handle === null) while (records.remaining() > 0) yield this.record(records, state);
      else yield* this.nativeRecords(handle, records.bytes.subarray(records.pos, records.end), records.offset(), state);
    }
  }

  /** One chunk's records from the addon, as record() gives them; its stacks go through stackOf here. */
  private *nativeRecords(
    handle: NativeHeapDecoderHandle,
    bytes: Uint8Array,
    base: number,
    state: DecoderState,
  ): Generator<HeapRecord, void, undefined> {
    const r = this.native!.decodeHeapRecords(handle, bytes, base);
    for (const id of r.threadIds) state.threadIds.push(id);
    const { recordInts, recordNums, stackOffsets, frames } = r;
    const scratch = state.frames;
    let objects = 0;
    let freed = 0;
    for (let k = 0; 4 * k < recordInts.length; k++) {
      const flags = recordInts[4 * k]!;
      const threadIndex = recordInts[4 * k + 1]!;
      const objectEnd = recordInts[4 * k + 2]!;
      const freedEnd = recordInts[4 * k + 3]!;
      const stackIds = objectEnd === objects ? NO_OBJECTS : new Uint32Array(objectEnd - objects);
      for (let i = objects; i < objectEnd; i++) {
        const from = stackOffsets[i]!;
        const depth = stackOffsets[i + 1]! - from;
        for (let f = 0; f < depth; f++) scratch[f] = frames[from + f]!;
        stackIds[i - objects] = depth === 0 ? 0xffffffff : this.stackOf(scratch, depth);
      }
      const memory = flags === HeapRecordFlag.Memory;
      yield {
        flags,
        threadIndex,
        threadId: state.threadIds[threadIndex]!,
        timeUs: recordNums[5 * k]!,
        sinceUs: recordNums[5 * k + 1]!,
        shortLived: recordNums[5 * k + 2]!,
        ordinals: memory ? NO_OBJECTS : r.ordinals.subarray(objects, objectEnd),
        sizes: memory ? NO_OBJECTS : r.sizes.subarray(objects, objectEnd),
        stackIds,
        allocTimesUs: flags & HeapRecordFlag.Live ? r.allocTimesUs.subarray(objects, objectEnd) : null,
        freed: memory ? NO_OBJECTS : r.freed.subarray(freed, freedEnd),
        externalBytes: recordNums[5 * k + 3]!,
        arrayBuffersBytes: recordNums[5 * k + 4]!,
        external: (flags & HeapRecordFlag.External) !== 0,
      };
      objects = objectEnd;
      freed = freedEnd;
    }
    // The addon's totals are HEAP_TOTAL_FIELDS' counted ones, in order.
    for (let i = 1; i < HEAP_TOTAL_FIELDS.length; i++) state.totals[HEAP_TOTAL_FIELDS[i]!] = r.totals[i - 1]!;
    if (r.error !== undefined) throw r.error;
  }

  private record(src: ByteSource, s: DecoderState): HeapRecord {
    const flagsAt = src.pos;
    const flags = src.u8('record flags');
    if (!VALID_FLAGS.has(flags))
      throw bad(
        `record flags ${flags}`,
        src.offset(flagsAt),
        'live (1), alloc (2), free (4), alloc+free (6) or memory (8), the first four + external (16)',
      );
    const threadAt = src.pos;
    const threadIndex = src.uvarint32();
    if (threadIndex === s.threads.length) {
      if (threadIndex >= HEAP_MAX_THREADS)
        throw src.fail(
          ErrorCode.V2_LIMIT,
          `heap section: thread ${threadIndex + 1} of a file`,
          `at most ${HEAP_MAX_THREADS} threads`,
          threadAt,
        );
      s.threads.push(new ThreadState(src.uvarint64()));
    } else if (threadIndex > s.threads.length) {
      throw src.fail(
        ErrorCode.V2_UNDEFINED_THREAD,
        `record names thread ${threadIndex}, ${s.threads.length} defined`,
        `at most ${s.threads.length}`,
        threadAt,
      );
    }
    const thread = s.threads[threadIndex]!;
    const external = (flags & HeapRecordFlag.External) !== 0;
    const t = external ? thread.external : thread.heap;
    s.timeUs += unzigzagWide(src.uvarint49());
    if (flags === HeapRecordFlag.Memory) {
      const externalBytes = src.uvarint49();
      const arrayBuffersBytes = src.uvarint49();
      s.totals.records++;
      return {
        flags,
        threadIndex,
        threadId: thread.threadId,
        timeUs: s.timeUs,
        sinceUs: s.timeUs,
        shortLived: 0,
        ordinals: NO_OBJECTS,
        sizes: NO_OBJECTS,
        stackIds: NO_OBJECTS,
        allocTimesUs: null,
        freed: NO_OBJECTS,
        externalBytes,
        arrayBuffersBytes,
        external: false,
      };
    }
    const live = (flags & HeapRecordFlag.Live) !== 0;
    const sinceUs = live ? s.timeUs : s.timeUs - unzigzagWide(src.uvarint49());
    const countAt = src.pos;
    const count = flags & (HeapRecordFlag.Live | HeapRecordFlag.Alloc) ? src.uvarint32() : 0;
    const shortLived = flags & HeapRecordFlag.Alloc ? src.uvarint49() : 0;
    const freeAt = src.pos;
    const freeCount = flags & HeapRecordFlag.Free ? src.uvarint32() : 0;
    if (count > HEAP_RECORD_MAX_OBJECTS)
      throw src.fail(ErrorCode.V2_LIMIT, `a record of ${count} objects`, `at most ${HEAP_RECORD_MAX_OBJECTS}`, countAt);
    // The per-file bounds, before this record's columns are allocated (frees leave before allocations join).
    const liveAfter = s.liveObjects - freeCount + count;
    if (liveAfter > this.limits.live)
      throw heapLimitError('live', liveAfter, this.limits.live, 'heap section', src.offset(countAt));
    const events = s.events + count + freeCount;
    if (events > this.limits.events)
      throw heapLimitError('events', events, this.limits.events, 'heap section', src.offset(countAt));
    const held = t.live === null ? 0 : t.live.length;
    if (freeCount > held)
      throw bad(`${freeCount} frees, ${held} objects live`, src.offset(freeAt), `at most ${held} frees`);
    // Each object costs at least a byte of ordinals and of sizes, each free a byte of gaps.
    if (2 * count + freeCount > src.remaining()) {
      throw bad(
        `${count} objects and ${freeCount} frees in ${src.remaining()} bytes`,
        src.offset(count > 0 ? countAt : freeAt),
        `at most ${src.remaining()} bytes of events`,
      );
    }
    const lengths = [0, 0, 0, 0, 0];
    for (let c = 0; c < 5; c++) lengths[c] = src.uvarint32();
    const ordinals = new Uint32Array(count);
    const sizes = new Uint32Array(count);
    for (let i = 0; i < count; i++)
      ordinals[i] = t.previousOrdinal = (t.previousOrdinal + unzigzag32(src.uvarint32())) >>> 0;
    for (let i = 0; i < count; i++) sizes[i] = t.previousSize = (t.previousSize + unzigzag32(src.uvarint32())) >>> 0;
    let allocTimesUs: Float64Array | null = null;
    if (live) {
      allocTimesUs = new Float64Array(count);
      for (let i = 0; i < count; i++) allocTimesUs[i] = s.timeUs - unzigzagWide(src.uvarint49());
    }
    // Frees name objects live before this record's allocations.
    const freed = new Uint32Array(freeCount);
    let cursor = held;
    for (let j = freeCount - 1; j >= 0; j--) {
      const gapAt = src.pos;
      const gap = src.uvarint32();
      const p = t.live!.take(gap, cursor);
      if (p < 0)
        throw bad(
          `a free skips ${gap} live objects, ${cursor} remain below the previous one`,
          src.offset(gapAt),
          `a gap below ${cursor}`,
        );
      freed[j] = t.live!.taken;
      cursor = p;
    }
    const total = lengths.reduce((a, b) => a + b, 0);
    if (total > src.remaining())
      throw src.fail(
        ErrorCode.V2_TRUNCATED,
        `stack columns of ${total} bytes, ${src.remaining()} left`,
        `at most ${src.remaining()} bytes`,
      );
    const columns: ByteSource[] = [];
    for (const length of lengths) {
      columns.push(new ByteSource(src.bytes, src.pos, src.pos + length, src.base));
      src.pos += length;
    }
    const stackSrc: StackTableSources = {
      stacks: columns[0]!,
      stacksHigh: columns[1]!,
      parents: columns[2]!,
      parentsHigh: columns[3]!,
      stackFrames: columns[4]!,
    };
    const stackIds = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
      const framesAt = stackSrc.stackFrames.pos;
      const depth = s.stacks.decode(stackSrc, s.frames);
      for (let f = 0; f < depth; f++) {
        if (s.frames[f]! >= this.frameCount)
          throw bad(
            `a stack names frame ${s.frames[f]}`,
            stackSrc.stackFrames.offset(framesAt),
            `a frame below ${this.frameCount}`,
          );
      }
      stackIds[i] = depth === 0 ? 0xffffffff : this.stackOf(s.frames, depth);
      (t.live ??= new LiveList(false)).insert(ordinals[i]!);
    }
    for (const c of columns)
      if (c.remaining() !== 0)
        throw bad(`${c.remaining()} bytes left in a stack column`, c.offset(), 'every column used up by its record');
    s.totals.records++;
    s.liveObjects = liveAfter;
    s.events = events;
    if (live) s.totals.live += count;
    else s.totals.allocations += count;
    s.totals.frees += freeCount;
    s.totals.shortLived += shortLived;
    return {
      flags,
      threadIndex,
      threadId: thread.threadId,
      timeUs: s.timeUs,
      sinceUs,
      shortLived,
      ordinals,
      sizes,
      stackIds,
      allocTimesUs,
      freed,
      externalBytes: 0,
      arrayBuffersBytes: 0,
      external,
    };
  }
}

/** The section's header: its totals, and where its first chunk starts. */
export function decodeHeapTotals(section: Uint8Array, offset: number): [HeapTotals, number] {
  const src = new ByteSource(section, 0, section.length, offset);
  const totals = {} as HeapTotals;
  for (const field of HEAP_TOTAL_FIELDS) totals[field] = src.uvarint49();
  return [totals, src.pos];
}

function unzigzag32(z: number): number {
  return (z >>> 1) ^ -(z & 1);
}

/** One ordinal space of a thread: V8's sampled objects, or the external ones. */
class ObjectSpace {
  previousOrdinal = 0;
  previousSize = 0;
  /** Made at the space's first object: a thread with memory records only costs no list. */
  live: LiveList | null = null;
}

class ThreadState {
  readonly heap = new ObjectSpace();
  readonly external = new ObjectSpace();
  constructor(readonly threadId: bigint) {}
}

/** What one pass over the records builds up. */
class DecoderState {
  readonly threads: ThreadState[] = [];
  /** The native decoder's threads (it keeps their state). */
  readonly threadIds: bigint[] = [];
  readonly stacks = new RecentStackDecoder(MAX_STACK_DEPTH);
  readonly frames = new Uint32Array(MAX_STACK_DEPTH);
  /** Objects live over every thread, and events read, for the per-file limits. */
  liveObjects = 0;
  events = 0;
  readonly totals: HeapTotals = { intervalBytes: 0, records: 0, allocations: 0, frees: 0, live: 0, shortLived: 0 };
  constructor(public timeUs: number) {}
}
