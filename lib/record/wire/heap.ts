/**
 * Heap polls on the recording pipe (cpu.ts carries the CPU harvests).
 * A heap frame is binary: its u32 length has HEAP_FRAME_FLAG set (JSON frames
 * are far below it), then a u32 header length, a JSON header (times, counts,
 * the call frames first used), then LEB128 columns: the new stacks (parent+1,
 * frame), the allocations (ordinal deltas, sizes, stack+1), the frees
 * (ordinal deltas), then, when the header has `collected`, the frees of
 * objects born and collected since the last poll (ordinal deltas: they are
 * among this frame's allocations, and the file applies a record's frees before
 * its allocations, so they go to the sink as a second free batch of the same
 * poll). When the header has `external`, the external sampler's events
 * (program/heap/external.ts: Buffer and ArrayBuffer stores) follow in the same five columns
 * (allocations, sizes, stacks, frees, collected) of their own ordinal space,
 * handed on as batches marked `external`. Ordinals ascend, so their deltas
 * are mostly one byte.
 */
import type { CpuProfileCallFrame } from '../../v8/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { decodeU32Many, encodeU32Many } from '../../varint/index';
import { HeapStacks, NO_STACK, type HeapAllocationBatch, type HeapEventSink, type HeapFreeBatch } from './heap-events';
import { grown } from '../../typed-arrays';
import type { HeapPollColumns } from '../../profile/index';

/** What a heap frame carries of a heap poll (program/heap's HeapPoll): the new allocations, and the frees. */
export interface HeapFramePoll extends HeapPollColumns {
  intervalBytes: number;
  /** Ordinals freed since the previous poll. */
  freed: Uint32Array;
  /** Ordinals among this poll's allocations collected before it, ascending. Absent: none. */
  collected?: Uint32Array;
}

/** The sender's stack numbering (program/heap's HeapStackNumbers): the frames and stacks not sent yet. */
export interface HeapFrameStacks {
  takeNew(): { frames: CpuProfileCallFrame[]; stackParents: Int32Array; stackFrames: Uint32Array };
}

/** One poll's external events, ordinals ascending (as encodeHeapFrame takes them). */
export interface ExternalPoll {
  ordinals: Uint32Array;
  sizes: Uint32Array;
  stackIds: Uint32Array;
  /** Sampled at an earlier poll, gone now. */
  freed: Uint32Array;
  /** Among this poll's `ordinals`, already gone: freed at the same poll, after its allocations. */
  collected: Uint32Array;
}

/** Bit 31 of a frame's length: a binary heap frame. */
export const HEAP_FRAME_FLAG = 0x8000_0000;

interface HeapFrameHeader {
  intervalBytes: number;
  threadId: number;
  timeUs: number;
  sinceUs: number;
  shortLived: number;
  allocations: number;
  frees: number;
  /** Absent: none. */
  collected?: number;
  stacks: number;
  frames: CpuProfileCallFrame[];
  /** The external sampler's counts: allocations, frees, collected (absent: none, or a sender before it). */
  extern?: [number, number, number];
  /** process.memoryUsage() at the poll (absent from senders before it). */
  external?: number;
  arrayBuffers?: number;
}

function deltas(ascending: Uint32Array): Uint32Array {
  const out = new Uint32Array(ascending.length);
  let prev = 0;
  for (let i = 0; i < ascending.length; i++) {
    out[i] = ascending[i]! - prev;
    prev = ascending[i]!;
  }
  return out;
}

/** External memory at a poll, as process.memoryUsage() reads it. */
export interface PollMemory {
  externalBytes: number;
  arrayBuffersBytes: number;
}

function plusOne(stackIds: Uint32Array): Uint32Array {
  const out = new Uint32Array(stackIds.length);
  // NO_STACK + 1 wraps to 0.
  for (let i = 0; i < stackIds.length; i++) out[i] = (stackIds[i]! + 1) >>> 0;
  return out;
}

/**
 * The whole frame (length word included) for one poll; takes the stacks `numbers` has not sent yet. `memory`: the
 * thread's external memory then; `external`: the external sampler's events since the last poll.
 */
export function encodeHeapFrame(
  poll: HeapFramePoll,
  threadId: number,
  numbers: HeapFrameStacks,
  memory?: PollMemory,
  external?: ExternalPoll,
): Buffer {
  const fresh = numbers.takeNew();
  const collected = poll.collected ?? new Uint32Array(0);
  const header: HeapFrameHeader = {
    intervalBytes: poll.intervalBytes,
    threadId,
    timeUs: poll.timeUs,
    sinceUs: poll.sinceUs,
    shortLived: poll.shortLived,
    allocations: poll.ordinals.length,
    frees: poll.freed.length,
    ...(collected.length > 0 ? { collected: collected.length } : {}),
    stacks: fresh.stackParents.length,
    frames: fresh.frames,
  };
  const ext =
    external !== undefined && external.ordinals.length + external.freed.length + external.collected.length > 0
      ? external
      : undefined;
  if (ext !== undefined) header.extern = [ext.ordinals.length, ext.freed.length, ext.collected.length];
  if (memory !== undefined) {
    header.external = memory.externalBytes;
    header.arrayBuffers = memory.arrayBuffersBytes;
  }
  const parentsPlusOne = new Uint32Array(fresh.stackParents.length);
  for (let i = 0; i < fresh.stackParents.length; i++) parentsPlusOne[i] = fresh.stackParents[i]! + 1;
  const columns = [
    parentsPlusOne,
    fresh.stackFrames,
    deltas(poll.ordinals),
    poll.sizes,
    plusOne(poll.stackIds),
    deltas(poll.freed),
    deltas(collected),
    ...(ext === undefined
      ? []
      : [deltas(ext.ordinals), ext.sizes, plusOne(ext.stackIds), deltas(ext.freed), deltas(ext.collected)]),
  ].map((c) => encodeU32Many(c));
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const bodyLength = 4 + headerBytes.length + columns.reduce((sum, c) => sum + c.length, 0);
  const frame = Buffer.allocUnsafe(4 + bodyLength);
  frame.writeUInt32LE((bodyLength | HEAP_FRAME_FLAG) >>> 0, 0);
  frame.writeUInt32LE(headerBytes.length, 4);
  headerBytes.copy(frame, 8);
  let at = 8 + headerBytes.length;
  for (const c of columns) {
    frame.set(c, at);
    at += c.length;
  }
  return frame;
}

function bad(message: string, offset: number, expected: string): ProfpackError {
  return new ProfpackError(`recording pipe: heap frame: ${message}`, {
    code: ErrorCode.RECORD_FAILED,
    offset,
    expected,
  });
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

function undelta(values: Uint32Array): Uint32Array {
  let sum = 0;
  for (let i = 0; i < values.length; i++) values[i] = sum = sum + values[i]!;
  return values;
}

/**
 * The receiving end on one pipe: rebuilds the stacks the sender numbered and
 * hands each heap frame to the sink as two batches, times moved by
 * `clockOffsetUs` (the sender's monotonic clock → the recording's clock).
 * Each thread's sampler numbers its own frames and stacks (a worker's frames
 * come over the same pipe as the main thread's: program/worker-agent.ts), so each
 * thread's numbers map into the one table the sink shares across batches.
 */
/** One sending thread's frame and stack numbers → the receiver's. */
class SenderNumbers {
  frames = new Uint32Array(64);
  frameCount = 0;
  stacks = new Uint32Array(64);
  stackCount = 0;

  addFrame(id: number): void {
    if (this.frameCount === this.frames.length) this.frames = grown(this.frames, this.frameCount);
    this.frames[this.frameCount++] = id;
  }

  addStack(id: number): void {
    if (this.stackCount === this.stacks.length) this.stacks = grown(this.stacks, this.stackCount);
    this.stacks[this.stackCount++] = id;
  }
}

export class HeapFrameReceiver {
  readonly stacks = new HeapStacks();
  private readonly senders = new Map<number, SenderNumbers>();
  allocations = 0;
  frees = 0;
  shortLived = 0;
  /** Bytes of the heap frames received, length words included. */
  bytes = 0;
  /** The most a frame's time was moved up to keep the batches in time order (µs; a worker's poll, late). */
  maxShiftUs = 0;
  private lastTimeUs = -Infinity;
  private begun = false;

  constructor(
    private readonly sink: HeapEventSink | undefined,
    private readonly clockOffsetUs = 0,
  ) {}

  /** One frame's body (after the length word); `offset` is its place in the stream, for errors. */
  receive(body: Uint8Array, offset: number): void {
    this.bytes += 4 + body.length;
    if (body.length < 4) throw bad('shorter than its header length', offset, 'at least 4 bytes');
    const headerLength = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(0, true);
    if (headerLength > body.length - 4)
      throw bad(
        `a header of ${headerLength} bytes in a body of ${body.length}`,
        offset + 4,
        `at most ${body.length - 4} bytes`,
      );
    let header: HeapFrameHeader;
    try {
      header = JSON.parse(
        Buffer.from(body.buffer, body.byteOffset + 4, headerLength).toString('utf8'),
      ) as HeapFrameHeader;
    } catch (err) {
      throw new ProfpackError('recording pipe: heap frame header is not JSON', {
        code: ErrorCode.RECORD_FAILED,
        offset: offset + 8,
        expected: 'a JSON header',
        cause: err,
      });
    }
    const { intervalBytes, threadId, timeUs, sinceUs, shortLived, allocations, frees, stacks, frames } =
      header ?? ({} as HeapFrameHeader);
    const { external, arrayBuffers } = header ?? ({} as HeapFrameHeader);
    const memory = external !== undefined || arrayBuffers !== undefined;
    if (memory && !(isCount(external) && isCount(arrayBuffers)))
      throw bad('memory fields', offset + 8, '{ external, arrayBuffers } as byte counts, or neither');
    const collected = header?.collected ?? 0;
    const extern = header?.extern ?? [0, 0, 0];
    if (!Array.isArray(extern) || extern.length !== 3 || !extern.every(isCount))
      throw bad('extern', offset + 8, '[allocations, frees, collected] as counts, or absent');
    const [extAllocations, extFrees, extCollected] = extern;
    if (
      ![intervalBytes, allocations, frees, collected, stacks, shortLived, threadId].every(isCount) ||
      !Number.isFinite(timeUs) ||
      !Number.isFinite(sinceUs) ||
      !Array.isArray(frames)
    ) {
      throw bad(
        'header fields',
        offset + 8,
        '{ intervalBytes, threadId, timeUs, sinceUs, shortLived, allocations, frees, collected?, stacks, frames[] }',
      );
    }
    let at = 4 + headerLength;
    const column = (count: number): Uint32Array => {
      const { values, end } = decodeU32Many(body, at, count);
      at = end;
      return values;
    };
    const parentsPlusOne = column(stacks);
    const stackFrames = column(stacks);
    const ordinals = undelta(column(allocations));
    const sizes = column(allocations);
    const stackIds = column(allocations);
    const freed = undelta(column(frees));
    const gone = undelta(column(collected));
    const extOrdinals = undelta(column(extAllocations));
    const extSizes = column(extAllocations);
    const extStackIds = column(extAllocations);
    const extFreed = undelta(column(extFrees));
    const extGone = undelta(column(extCollected));
    if (at !== body.length)
      throw bad(`${body.length - at} bytes after the columns`, offset + at, 'the frame to end with its columns');
    if (!this.begun) {
      this.begun = true;
      this.sink?.begin?.({ intervalBytes });
    }
    let sender = this.senders.get(threadId);
    if (sender === undefined) this.senders.set(threadId, (sender = new SenderNumbers()));
    for (const cf of frames) sender.addFrame(this.stacks.callFrames.push(cf) - 1);
    for (let i = 0; i < stacks; i++) {
      const parent = parentsPlusOne[i]! - 1;
      if (parent >= sender.stackCount || stackFrames[i]! >= sender.frameCount)
        throw bad(
          `stack ${sender.stackCount} of thread ${threadId} names parent ${parent} / frame ${stackFrames[i]}`,
          offset,
          'an earlier stack and a frame already sent by that thread',
        );
      sender.addStack(this.stacks.add(parent < 0 ? -1 : sender.stacks[parent]!, sender.frames[stackFrames[i]!]!));
    }
    for (const ids of [stackIds, extStackIds]) {
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]! - 1;
        if (id >= sender.stackCount)
          throw bad(
            `an allocation names stack ${id}`,
            offset,
            `a stack below ${sender.stackCount} of thread ${threadId}`,
          );
        ids[i] = id < 0 ? NO_STACK : sender.stacks[id]!;
      }
    }
    this.allocations += allocations + extAllocations;
    this.frees += frees + collected + extFrees + extCollected;
    this.shortLived += shortLived;
    // Files hold heap batches in time order; a worker's poll comes over the main thread's channel and may arrive
    // after a later poll of another thread: its time moves up to that one's (by the message's delay, ms).
    const time = Math.max(timeUs + this.clockOffsetUs, this.lastTimeUs);
    const since = Math.min(sinceUs + this.clockOffsetUs, time);
    this.maxShiftUs = Math.max(this.maxShiftUs, time - timeUs - this.clockOffsetUs);
    this.lastTimeUs = time;
    if (allocations > 0 || shortLived > 0) {
      const batch: HeapAllocationBatch = {
        threadId,
        timeUs: time,
        sinceUs: since,
        ordinals,
        sizes,
        stackIds,
        shortLived,
        stacks: this.stacks,
      };
      this.sink?.allocations(batch);
    }
    // With collected objects the first free batch closes the allocations' record even when empty.
    if (frees > 0 || collected > 0) {
      const batch: HeapFreeBatch = { threadId, timeUs: time, sinceUs: since, ordinals: freed };
      this.sink?.frees(batch);
    }
    if (collected > 0) this.sink?.frees({ threadId, timeUs: time, sinceUs: since, ordinals: gone });
    const span = { threadId, timeUs: time, sinceUs: since, external: true };
    if (extAllocations > 0) {
      const { stacks: s } = this;
      this.sink?.allocations({
        ...span,
        ordinals: extOrdinals,
        sizes: extSizes,
        stackIds: extStackIds,
        shortLived: 0,
        stacks: s,
      });
    }
    if (extFrees > 0 || extCollected > 0) this.sink?.frees({ ...span, ordinals: extFreed });
    if (extCollected > 0) this.sink?.frees({ ...span, ordinals: extGone });
    if (memory)
      this.sink?.memory?.({ threadId, timeUs: time, externalBytes: external!, arrayBuffersBytes: arrayBuffers! });
  }
}
