/**
 * How recover() reads an unfinished sample region: a piece at a time, as often
 * as needed, never whole unless small (a 29 KB unfinished zstd file
 * inflated to 1.88 GB). One pass measures it, passes of the JS record decoder
 * find the longest prefix of whole records (salvageRecords' JS twin is this
 * scan over a buffer), and a last pass copies that prefix into the output.
 * Memory: a window of a few MiB, whatever the region's size.
 */
import { bytesSource, concatBytes, ZstdInflater, type FileBytes } from '../file/index';
import { MAX_STACK_DEPTH } from '../format';
import { DecodeStatus, EVENT_STRIDE, EventKind, RecordDecoderJs, Result, type DecodeOutput } from '../read/index';

/** Regions up to this size are recovered in memory, with the backend's own salvage scan. */
export const IN_MEMORY_REGION = 16 << 20;
const PIECE = 1 << 20;
const WINDOW = 4 << 20;

/** The zstd stream of the RegionPieces last opened: recovery reads one at a time, so a new one ends it. */
let current: ZstdInflater | null = null;

/**
 * The bytes of an unfinished region, a piece at a time: raw, or an unended
 * zstd frame decoded up to its first error (a block cut by the kill); at
 * most `limit` bytes; then `tail` (a journal's held-back runs). `onDisk` is
 * the stored region in memory, or read from the file by ranges (version 2).
 */
export class RegionPieces {
  private readonly inflater: ZstdInflater | null;
  private readonly onDisk: FileBytes;
  private pos = 0;
  private tailAt = -1;

  constructor(
    onDisk: Uint8Array | FileBytes,
    zstd: boolean,
    private readonly limit: number,
    private readonly tail: Uint8Array = new Uint8Array(0),
  ) {
    this.onDisk = onDisk instanceof Uint8Array ? bytesSource(onDisk) : onDisk;
    // Its context goes back to the pool: zstd-napi frees one only at a later garbage collection.
    current?.release();
    // Tolerant: an unended frame decodes up to its first error (a block cut by the kill), at most `limit` bytes.
    const input = onDisk instanceof Uint8Array ? onDisk : { source: onDisk, start: 0, end: onDisk.size };
    this.inflater = current = zstd ? new ZstdInflater(input, limit, null) : null;
  }

  /** Fills `out` as far as the region goes; 0 at its end. */
  read(out: Uint8Array): number {
    let written = 0;
    if (this.tailAt < 0) {
      if (this.inflater !== null) {
        written = this.inflater.read(out);
      } else {
        written = Math.max(0, Math.min(out.length, this.limit - this.pos, this.onDisk.size - this.pos));
        const source = this.onDisk;
        if (written > 0 && source.readInto !== undefined) source.readInto(out.subarray(0, written), this.pos);
        else if (written > 0) out.set(source.read(this.pos, this.pos + written));
        this.pos += written;
      }
      if (written < out.length) this.tailAt = 0;
    }
    if (this.tailAt >= 0 && written < out.length) {
      const n = Math.min(out.length - written, this.tail.length - this.tailAt);
      out.set(this.tail.subarray(this.tailAt, this.tailAt + n), written);
      this.tailAt += n;
      written += n;
    }
    return written;
  }
}

export interface RecordScan {
  /** Records [0, end) decode whole. */
  end: number;
  samples: number;
  threads: number;
  /** Highest frame index the kept records use, -1 for none. */
  maxFrame: number;
}

/** Bytes in the region (a decompression pass, nothing kept). */
export function measureRegion(open: () => RegionPieces): number {
  const pieces = open();
  const scratch = new Uint8Array(PIECE);
  let total = 0;
  for (let n = pieces.read(scratch); n > 0; n = pieces.read(scratch)) total += n;
  return total;
}

/** One decoder pass over region[0, length): whole, or where the first failing record starts. */
function scanOnce(
  open: () => RegionPieces,
  length: number,
  littleEndian: boolean,
  startTimeUs: bigint,
): { whole: boolean } & RecordScan {
  const out: DecodeOutput = {
    events: new Uint32Array(EVENT_STRIDE * 4096),
    timestamps: new BigUint64Array(16384),
    nodes: new Uint32Array(2 * (4096 + MAX_STACK_DEPTH)),
    result: new Float64Array(8),
  };
  // Any number of threads: the header that would declare them was never written.
  const d = new RecordDecoderJs({ littleEndian, startTimeUs, threadCount: 0xffff_ffff, totalSize: length });
  const scan = { whole: false, end: 0, samples: 0, threads: 0, maxFrame: -1 };
  const pieces = open();
  let window = new Uint8Array(WINDOW);
  let windowStart = 0;
  let have = 0;
  let loaded = 0;
  for (;;) {
    // Top the window up to the pass's length.
    while (have < window.length && loaded < length) {
      const n = pieces.read(window.subarray(have, Math.min(window.length, have + (length - loaded))));
      if (n === 0) break;
      have += n;
      loaded += n;
    }
    const final = loaded >= length;
    d.decode(window.subarray(0, have), windowStart, have, final, out);
    const r = out.result;
    for (let i = 0; i < r[Result.events]!; i++) if (out.events[i * EVENT_STRIDE] === EventKind.Thread) scan.threads++;
    for (let i = 0; i < r[Result.nodes]!; i++)
      if (out.nodes[2 * i + 1]! > scan.maxFrame) scan.maxFrame = out.nodes[2 * i + 1]!;
    const status = r[Result.status]!;
    const consumed = r[Result.consumed]!;
    if (status === DecodeStatus.Done) return { ...scan, whole: true, end: length, samples: d.stats.totalSamples };
    if (status === DecodeStatus.Error) return { ...scan, end: windowStart + consumed };
    if (consumed === 0 && r[Result.events] === 0 && status === DecodeStatus.NeedMore) {
      // A record longer than the window (a long REPEAT run): a larger window, up to what a pass allows.
      if (final || window.length >= 16 * WINDOW) return { ...scan, end: windowStart };
      const grown = new Uint8Array(window.length * 2);
      grown.set(window.subarray(0, have));
      window = grown;
      continue;
    }
    window.copyWithin(0, consumed, have);
    have -= consumed;
    windowStart += consumed;
  }
}

/** salvageRecords over a region read in pieces: the longest prefix that decodes whole, and what it holds. */
export function salvageStreaming(
  open: () => RegionPieces,
  length: number,
  littleEndian: boolean,
  startTimeUs: bigint,
): RecordScan {
  for (;;) {
    const pass = scanOnce(open, length, littleEndian, startTimeUs);
    if (pass.whole) return { end: pass.end, samples: pass.samples, threads: pass.threads, maxFrame: pass.maxFrame };
    if (pass.end >= length) return { end: 0, samples: 0, threads: 0, maxFrame: -1 };
    length = pass.end;
  }
}

/** The whole region in one buffer (for one known to be small: `limit` bounds it). */
export function readRegion(pieces: RegionPieces): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (;;) {
    const chunk = new Uint8Array(PIECE);
    const n = pieces.read(chunk);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
  }
  return concatBytes(chunks);
}

/** Hands region[0, end) to `write` a piece at a time; returns the bytes handed (fewer when the region is shorter). */
export function copyRegion(open: () => RegionPieces, end: number, write: (bytes: Uint8Array) => void): number {
  const pieces = open();
  const scratch = new Uint8Array(PIECE);
  let copied = 0;
  while (copied < end) {
    const n = pieces.read(scratch.subarray(0, Math.min(scratch.length, end - copied)));
    if (n === 0) break;
    write(scratch.subarray(0, n));
    copied += n;
  }
  return copied;
}
