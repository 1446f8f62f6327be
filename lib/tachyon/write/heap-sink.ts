/**
 * HeapFileSink: ProfileWriter's heap event sink (`writer.heapSink()`,
 * version 2 only). It has the recorder's HeapEventSink shape (lib/record/wire
 * heap-events.ts, matched by shape so lib/tachyon does not depend on the
 * recorder, whose batch types extend the ones here): batches come in with stacks over the caller's call frames
 * (a recording's: V8's), each mapped once by `frameOf` into the file's frame table beside the CPU samples' (so
 * heap and CPU stacks share frames), and the events into the heap section's coder
 * (codec/heap/encode.ts). A poll's allocation batch is held until its free batch
 * (same thread and time) arrives, so that the two are one record.
 *
 * The section is written at finalize: finished chunks are held stored (zstd
 * when the file is compressed; a few bytes per event) until then, and each
 * flush() puts the new ones in the writer's journal (file/journal.ts).
 */
import { NO_HEAP_STACK, type HeapPollColumns, type HeapPollSpan } from '../../profile/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { ZSTD_LEVEL } from '../format';
import { ByteSink } from '../../byte-sink';
import { HeapSectionEncoder, encodeHeapChunk, encodeHeapHeader, type HeapTotals } from '../codec/index';
import type { FrameSpec } from './types';
import { grown } from '../../typed-arrays';

/** The recorder's stack tree (lib/record/wire HeapStacks), as much as the sink reads. */
export interface HeapSinkStacks {
  readonly size: number;
  /** The caller's call frames (a recording's: V8's), each written through `frameOf`. */
  readonly callFrames: readonly unknown[];
  parentOf(id: number): number;
  frameOf(id: number): number;
}

export interface HeapSinkFrees extends HeapPollSpan {
  threadId: number;
  /** External objects (Buffer and ArrayBuffer backing stores), in their own ordinal space; absent: V8's. */
  external?: boolean;
}

export interface HeapSinkAllocations extends HeapSinkFrees, HeapPollColumns {
  stacks: HeapSinkStacks;
}

/** A thread's external memory at a poll (process.memoryUsage()'s `external` and `arrayBuffers`, bytes). */
export interface HeapSinkMemory {
  threadId: number;
  timeUs: number;
  externalBytes: number;
  arrayBuffersBytes: number;
}

/** Objects live when the file begins (a rotated recording's next file inherits them). */
export interface HeapSinkLive {
  threadId: number;
  ordinals: Uint32Array;
  sizes: Uint32Array;
  stackIds: Uint32Array;
  allocTimesUs: Float64Array;
  stacks: HeapSinkStacks;
  external?: boolean;
}

export interface HeapSinkOptions<CallFrame = unknown> {
  /**
   * The frame written for one of the stacks' call frames. Default: the package entry's (lib/index.ts hands over
   * lib/v8's frameFromV8, a V8 call frame as a model frame); a recording maps V8's through source maps too.
   */
  frameOf?: (callFrame: CallFrame) => FrameSpec;
}

type FrameOf = (callFrame: unknown) => FrameSpec;

/** heapSink()'s `frameOf` when given none: set by the package entry, so that lib/tachyon imports none of lib/v8. */
let defaultFrameOf: FrameOf | null = null;

/** The package entry's default `frameOf` for every heapSink() given none (lib/index.ts: V8 call frames). */
export function setDefaultHeapFrameOf<CallFrame>(frameOf: (callFrame: CallFrame) => FrameSpec): void {
  defaultFrameOf = frameOf as FrameOf;
}

export class HeapFileSink {
  private encoder: HeapSectionEncoder | null = null;
  private readonly chunks: Uint8Array[] = [];
  private storedBytes = 0;
  private pending: HeapSinkAllocations | null = null;
  private stacks: HeapSinkStacks | null = null;
  /** Call frame index → file frame id + 1 (0: not interned yet). */
  private fileFrames = new Uint32Array(256);
  private readonly frameOf: FrameOf;

  constructor(
    private readonly internFrame: (frame: FrameSpec) => number,
    private readonly startTimeUs: number,
    /** zstd level of the chunks, null: raw. */
    private readonly level: number | null,
    frameOf: FrameOf,
  ) {
    this.frameOf = frameOf;
  }

  /** The recording's sampling interval; the section exists from here on. */
  begin(info: { intervalBytes: number }): void {
    if (this.encoder !== null) return;
    const interval = Number.isSafeInteger(info?.intervalBytes) && info.intervalBytes >= 0 ? info.intervalBytes : 0;
    this.encoder = new HeapSectionEncoder(
      interval,
      this.startTimeUs,
      (key, out) => this.framesOf(key, out),
      (raw) => this.store(raw),
    );
  }

  allocations(batch: HeapSinkAllocations): void {
    this.settle();
    this.stacks = batch.stacks;
    this.pending = batch;
  }

  frees(batch: HeapSinkFrees): void {
    const p = this.pending;
    const enc = this.started();
    const external = batch.external === true;
    if (
      p !== null &&
      p.threadId === batch.threadId &&
      p.timeUs === batch.timeUs &&
      (p.external === true) === external
    ) {
      this.pending = null;
      enc.poll(
        BigInt(p.threadId),
        p.timeUs,
        p.sinceUs,
        { ordinals: p.ordinals, sizes: p.sizes, stackKeys: p.stackIds, shortLived: p.shortLived },
        batch.ordinals,
        external,
      );
    } else {
      this.settle();
      enc.poll(BigInt(batch.threadId), batch.timeUs, batch.sinceUs, null, batch.ordinals, external);
    }
  }

  memory(sample: HeapSinkMemory): void {
    this.settle();
    this.started().memory(BigInt(sample.threadId), sample.timeUs, sample.externalBytes, sample.arrayBuffersBytes);
  }

  /** Objects live when the file begins: before any poll of their thread. */
  live(batch: HeapSinkLive): void {
    this.settle();
    this.stacks = batch.stacks;
    const objects = { ordinals: batch.ordinals, sizes: batch.sizes, stackKeys: batch.stackIds };
    this.started().live(BigInt(batch.threadId), this.startTimeUs, objects, batch.allocTimesUs, batch.external === true);
  }

  /** Ends the chunk being filled (ProfileWriter.flush). */
  flush(): void {
    this.settle();
    this.encoder?.flush();
  }

  /** The chunks stored so far, in order (after flush(): every event accepted). */
  get storedChunks(): readonly Uint8Array[] {
    return this.chunks;
  }

  /** The section's header as finalize would write it now, or null: no heap recording began. */
  headerBytes(): Uint8Array | null {
    return this.encoder === null ? null : encodeHeapHeader(this.encoder.totals);
  }

  /** What the section holds so far (null: no heap recording began). */
  get totals(): HeapTotals | null {
    return this.encoder?.totals ?? null;
  }

  /** Frees that named no live object of their thread, and stacks cut to 256 frames. */
  get dropped(): { frees: number; stacksCut: number } {
    return { frees: this.encoder?.droppedFrees ?? 0, stacksCut: this.encoder?.stacksCut ?? 0 };
  }

  /** Each thread's objects still live (a rotated recording's next file starts with them). */
  liveObjects(): HeapSinkLive[] {
    this.settle();
    const out: HeapSinkLive[] = [];
    if (this.encoder === null || this.stacks === null) return out;
    for (const { threadId, live, external } of this.encoder.liveObjects()) {
      const c = live.columns();
      out.push({
        threadId: Number(threadId),
        ordinals: c.ordinals,
        sizes: c.sizes,
        stackIds: c.stacks,
        allocTimesUs: c.timesUs,
        stacks: this.stacks,
        ...(external ? { external } : {}),
      });
    }
    return out;
  }

  /**
   * Finalize: codes what is pending (its frames join the frame table, which is
   * why this comes before the tables are written). Null when no heap recording began.
   */
  finish(): Uint8Array | null {
    if (this.encoder === null) return null;
    this.flush();
    const header = this.headerBytes()!;
    const out = new ByteSink(header.length + this.storedBytes);
    out.append(header);
    for (const c of this.chunks) out.append(c);
    return out.bytes.subarray(0, out.length);
  }

  private started(): HeapSectionEncoder {
    if (this.encoder === null) this.begin({ intervalBytes: 0 });
    return this.encoder!;
  }

  private settle(): void {
    const p = this.pending;
    if (p === null) return;
    this.pending = null;
    this.started().poll(
      BigInt(p.threadId),
      p.timeUs,
      p.sinceUs,
      { ordinals: p.ordinals, sizes: p.sizes, stackKeys: p.stackIds, shortLived: p.shortLived },
      null,
      p.external === true,
    );
  }

  private store(raw: Uint8Array): void {
    const stored = encodeHeapChunk(raw, this.level);
    this.chunks.push(stored);
    this.storedBytes += stored.length;
  }

  /** The stack's file frames, innermost first; returns its whole depth (writes only what fits). */
  private framesOf(key: number, out: Uint32Array): number {
    const stacks = this.stacks;
    if (key === NO_HEAP_STACK || stacks === null || key >= stacks.size) return 0;
    let depth = 0;
    for (let s = key; s >= 0 && depth <= stacks.size; s = stacks.parentOf(s)) {
      if (depth < out.length) out[depth] = this.fileFrame(stacks, stacks.frameOf(s));
      depth++;
    }
    return depth;
  }

  private fileFrame(stacks: HeapSinkStacks, callFrame: number): number {
    if (callFrame >= this.fileFrames.length) {
      this.fileFrames = grown(this.fileFrames, callFrame);
    }
    let id = this.fileFrames[callFrame]!;
    if (id === 0) this.fileFrames[callFrame] = id = this.internFrame(this.frameOf(stacks.callFrames[callFrame])) + 1;
    return id - 1;
  }
}

/** ProfileWriter.heapSink(): heap events need version 2 (version 1 is CPython's, which has no place for them). */
export function createHeapSink(
  formatVersion: 1 | 2,
  internFrame: (frame: FrameSpec) => number,
  startTimeUs: bigint,
  compression: 'zstd' | 'none',
  options?: HeapSinkOptions<never>,
): HeapFileSink {
  if (formatVersion !== 2) {
    throw new ProfpackError('heap events need format version 2', {
      code: ErrorCode.TACHYON_V1_HEAP,
      expected: 'formatVersion: 2',
    });
  }
  const frameOf = (options?.frameOf as FrameOf | undefined) ?? defaultFrameOf;
  if (frameOf === null) {
    throw new ProfpackError('heapSink() has no way to write its call frames: give options.frameOf', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'options.frameOf, a function from a call frame to a frame',
    });
  }
  return new HeapFileSink(internFrame, Number(startTimeUs), compression === 'zstd' ? ZSTD_LEVEL : null, frameOf);
}
