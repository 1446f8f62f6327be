/**
 * Constants and framing of version 2's heap section (docs/format-v2.md §9):
 * a header of totals, then chunks of poll records, each chunk raw or one zstd
 * frame. Shared by the coder (encode.ts) and the decoder (decode.ts).
 */
import { ByteSink } from '../bytes';
import { zstdCompress } from '../../file/index';

/** Record flags (a record's first byte). */
export const HeapRecordFlag = {
  /** Objects live when the file began (a rotated file's inheritance); excludes Alloc and Free. */
  Live: 1,
  /** The poll's allocation batch. */
  Alloc: 2,
  /** The poll's free batch. */
  Free: 4,
  /**
   * The thread's external memory at the poll (process.memoryUsage(): `external`, `arrayBuffers`), alone: the
   * backing stores V8's sampler does not see. Files from before it have none.
   */
  Memory: 8,
  /**
   * With Live, Alloc and/or Free: the objects are external ones (Buffer and ArrayBuffer backing stores the recorded
   * program allocated, sampled by the recorder's own Poisson process over their bytes at the same mean interval), in
   * an ordinal space and live list of their own per thread. Files from before it have none.
   */
  External: 16,
} as const;

/** A chunk is closed once its records reach this many bytes (zstd compresses each chunk alone: bigger is smaller). */
export const HEAP_CHUNK_TARGET = 256 << 10;
/** Reader bound on a chunk's raw bytes; the coder ends a record's objects early to stay far below it. */
export const HEAP_CHUNK_MAX_BYTES = 64 << 20;
/**
 * Threads a heap section defines, at most (ERR_V2_LIMIT past it): each costs its decoder state, and a 3 MB zstd
 * section of memory records naming a new thread each defined 1 M (3.2 GB in the JS decoder). A process records
 * one per isolate (its workers).
 */
export const HEAP_MAX_THREADS = 65536;
/** A record's objects end at this many (a poll with more continues in the next record, same thread and time). */
export const HEAP_RECORD_MAX_OBJECTS = 65536;
/** ... or once its columns reach this many bytes. */
export const HEAP_RECORD_SOFT_BYTES = 8 << 20;
/** Times are whole µs; deltas beyond ±2^48 µs (8.9 years) do not fit their u49 LEB128. */
export const HEAP_MAX_TIME_DELTA = 2 ** 48 - 1;

/** A Memory record's byte counts are u49 LEB128 (512 TiB). */
export const HEAP_MAX_MEMORY_BYTES = 2 ** 49 - 1;

/** Chunk codings. */
export const HeapChunkCoding = { Raw: 0, Zstd: 1 } as const;

/** What a heap section holds, in its header; the reader checks them after the last chunk. */
export interface HeapTotals {
  /** V8's mean sampling interval, bytes. */
  intervalBytes: number;
  /** Records (live, or a poll's alloc and/or free batch). */
  records: number;
  allocations: number;
  frees: number;
  /** Objects in live records. */
  live: number;
  shortLived: number;
}

export const HEAP_TOTAL_FIELDS = ['intervalBytes', 'records', 'allocations', 'frees', 'live', 'shortLived'] as const;

export function encodeHeapHeader(totals: HeapTotals): Uint8Array {
  const out = new ByteSink(64);
  for (const field of HEAP_TOTAL_FIELDS) out.uvarint(totals[field]);
  return out.bytes.slice(0, out.length);
}

/** One chunk as stored: coding u8, stored length, [zstd: raw length], bytes. zstd at `level` (null: raw). */
export function encodeHeapChunk(raw: Uint8Array, level: number | null): Uint8Array {
  const packed = level === null ? raw : zstdCompress(raw, level);
  // zstd that does not shrink the chunk is not worth a decompression.
  const zstd = level !== null && packed.length < raw.length;
  const out = new ByteSink(packed.length + 16);
  out.u8(zstd ? HeapChunkCoding.Zstd : HeapChunkCoding.Raw);
  out.uvarint(zstd ? packed.length : raw.length);
  if (zstd) out.uvarint(raw.length);
  out.append(zstd ? packed : raw);
  return out.bytes.slice(0, out.length);
}

/** zigzag of an integer within ±2^52 (times), as LEB128. */
export function zigzagWide(out: ByteSink, value: number): void {
  out.uvarint(value >= 0 ? value * 2 : -value * 2 - 1);
}

export function unzigzagWide(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}
