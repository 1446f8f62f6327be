/**
 * The recovery journal (docs/reliability.md "Recovery"): a sidecar file,
 * `<profile>.journal`, that makes a version-1 profile whose writer died
 * recoverable up to its last flush() without changing one byte of the
 * finalized file. The format keeps the string and frame tables in memory
 * until finalize and holds each thread's repeating samples back (seed 003,
 * tachyon-format.md §5.3, §5.7), so the profile alone cannot say which frame
 * an index means nor hold the held-back samples. At each flush the writer
 * appends one checkpoint here; finalize and close() delete the journal.
 *
 * Layout (little-endian, profpack's own):
 *   header (40 bytes): magic "PPJRNL01", flags u32 (bit 0 zstd, bit 1 the
 *     profile is little-endian), profiling config u32, start time u64,
 *     sample interval u64, reserved u64
 *   checkpoints: tag "CKPT", body length u32, body, FNV-1a-32 of the body u32
 *   body: sample-region bytes on disk at this flush u64 (uncompressed), string
 *     count u32, frame count u32, then three (length u32, bytes): the string
 *     table bytes and frame table bytes added since the previous checkpoint,
 *     and the held-back REPEAT runs as complete REPEAT records.
 * A checkpoint cut short by the kill (or failing its checksum) ends the
 * journal: the one before it still describes a consistent state.
 *
 * A version-2 profile's journal (header flag bit 2) has the same framing; its
 * region bytes count the sealed sample blocks on disk, its third part is the
 * writer's state (V2WriterState) instead of REPEAT runs, and a fourth part
 * holds the stored heap chunks finished since the previous checkpoint.
 */
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError } from '../../errors';
import { removeFile, renameReplacing } from '../../file-retry';

export const JOURNAL_SUFFIX = '.journal';
const MAGIC = 'PPJRNL01';
const HEADER_SIZE = 40;
const CHECKPOINT_TAG = 0x54504b43; // "CKPT" read as a little-endian u32
const Flag = { zstd: 1, littleEndian: 2, formatVersion2: 4 } as const;

export interface JournalHeader {
  compression: 'zstd' | 'none';
  littleEndian: boolean;
  profilingConfig: number;
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
  /** The profile's format version (default 1). */
  formatVersion?: 1 | 2;
}

/** The state at the last complete checkpoint: cumulative tables, held-back runs. */
export interface JournalState {
  header: JournalHeader;
  regionBytes: number;
  stringCount: number;
  frameCount: number;
  strings: Uint8Array;
  frames: Uint8Array;
  /** Version 1: the held-back REPEAT runs; version 2: the writer's state (decodeV2WriterState). */
  pendingRepeats: Uint8Array;
  /** Version 2: every stored heap chunk of the checkpoints read, in order. */
  heapChunks: Uint8Array;
  checkpoints: number;
}

function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0;
  return h;
}

function journalError(message: string, offset: number, expected: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.TACHYON_JOURNAL_CORRUPT, offset, expected });
}

export function encodeJournalHeader(h: JournalHeader): Uint8Array {
  const bytes = new Uint8Array(HEADER_SIZE);
  const v = new DataView(bytes.buffer);
  for (let i = 0; i < MAGIC.length; i++) bytes[i] = MAGIC.charCodeAt(i);
  const version2 = h.formatVersion === 2 ? Flag.formatVersion2 : 0;
  v.setUint32(
    8,
    (h.compression === 'zstd' ? Flag.zstd : 0) | (h.littleEndian ? Flag.littleEndian : 0) | version2,
    true,
  );
  v.setUint32(12, h.profilingConfig, true);
  v.setBigUint64(16, h.startTimeUs, true);
  v.setBigUint64(24, h.sampleIntervalUs, true);
  return bytes;
}

export interface Checkpoint {
  regionBytes: number;
  stringCount: number;
  frameCount: number;
  newStrings: Uint8Array;
  newFrames: Uint8Array;
  pendingRepeats: Uint8Array;
  /** Version 2 only: the heap chunks stored since the previous checkpoint. */
  newHeapChunks?: Uint8Array;
}

export function encodeCheckpoint(c: Checkpoint): Uint8Array {
  const parts = [c.newStrings, c.newFrames, c.pendingRepeats];
  if (c.newHeapChunks !== undefined) parts.push(c.newHeapChunks);
  const bodyLength = 8 + 4 + 4 + parts.reduce((n, p) => n + 4 + p.length, 0);
  const bytes = new Uint8Array(8 + bodyLength + 4);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, CHECKPOINT_TAG, true);
  v.setUint32(4, bodyLength, true);
  v.setBigUint64(8, BigInt(c.regionBytes), true);
  v.setUint32(16, c.stringCount, true);
  v.setUint32(20, c.frameCount, true);
  let at = 24;
  for (const part of parts) {
    v.setUint32(at, part.length, true);
    bytes.set(part, at + 4);
    at += 4 + part.length;
  }
  v.setUint32(at, fnv1a(bytes.subarray(8, at)), true);
  return bytes;
}

/**
 * Reads a journal's header and its last complete checkpoint. A bad header is
 * ERR_TACHYON_JOURNAL_CORRUPT; a torn or corrupt checkpoint ends the journal.
 */
export function parseJournal(bytes: Uint8Array): JournalState {
  if (bytes.length < HEADER_SIZE)
    throw journalError(
      `a journal is at least ${HEADER_SIZE} bytes, this one ${bytes.length}`,
      0,
      'a profpack recovery journal',
    );
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i))
      throw journalError('not a profpack recovery journal (bad magic)', 0, `"${MAGIC}"`);
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = v.getUint32(8, true);
  const header: JournalHeader = {
    compression: flags & Flag.zstd ? 'zstd' : 'none',
    littleEndian: (flags & Flag.littleEndian) !== 0,
    profilingConfig: v.getUint32(12, true),
    startTimeUs: v.getBigUint64(16, true),
    sampleIntervalUs: v.getBigUint64(24, true),
    formatVersion: flags & Flag.formatVersion2 ? 2 : 1,
  };
  const partCount = header.formatVersion === 2 ? 4 : 3;
  const strings: Uint8Array[] = [];
  const frames: Uint8Array[] = [];
  const heapChunks: Uint8Array[] = [];
  const state: JournalState = {
    header,
    regionBytes: 0,
    stringCount: 0,
    frameCount: 0,
    strings: new Uint8Array(0),
    frames: new Uint8Array(0),
    pendingRepeats: new Uint8Array(0),
    heapChunks: new Uint8Array(0),
    checkpoints: 0,
  };
  let at = HEADER_SIZE;
  while (at + 12 <= bytes.length) {
    if (v.getUint32(at, true) !== CHECKPOINT_TAG) break;
    const bodyLength = v.getUint32(at + 4, true);
    const body = at + 8;
    if (bodyLength < 16 + 4 * partCount || body + bodyLength + 4 > bytes.length) break;
    if (fnv1a(bytes.subarray(body, body + bodyLength)) !== v.getUint32(body + bodyLength, true)) break;
    const parts: Uint8Array[] = [];
    let p = body + 16;
    for (let k = 0; k < partCount; k++) {
      const n = p + 4 <= body + bodyLength ? v.getUint32(p, true) : -1;
      if (n < 0 || p + 4 + n > body + bodyLength) break;
      parts.push(bytes.subarray(p + 4, p + 4 + n));
      p += 4 + n;
    }
    const regionBytes = Number(v.getBigUint64(body, true));
    if (
      parts.length !== partCount ||
      p !== body + bodyLength ||
      regionBytes < state.regionBytes ||
      !Number.isSafeInteger(regionBytes)
    )
      break;
    state.regionBytes = regionBytes;
    state.stringCount = v.getUint32(body + 8, true);
    state.frameCount = v.getUint32(body + 12, true);
    strings.push(parts[0]!);
    frames.push(parts[1]!);
    state.pendingRepeats = parts[2]!;
    if (partCount === 4) heapChunks.push(parts[3]!);
    state.checkpoints++;
    at = body + bodyLength + 4;
  }
  state.strings = concatBytes(strings);
  state.frames = concatBytes(frames);
  state.heapChunks = concatBytes(heapChunks);
  return state;
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Journal size below which it is never rewritten. */
const COMPACT_FLOOR = 1 << 20;

/**
 * The writer's side: the sidecar file, created at the first checkpoint,
 * removed at the writer's end. Each checkpoint repeats the held-back runs (up
 * to 16 KiB a thread), so a long recording's journal is rewritten as one
 * checkpoint (a new file renamed over the old: a kill leaves one or the
 * other) once it is twice what that one checkpoint takes.
 */
export class JournalWriter {
  private fd = -1;
  private stringBytes = 0;
  private frameBytes = 0;
  private size = 0;
  private lastSamples = -1;
  private heapChunkCount = 0;

  constructor(
    readonly path: string,
    private readonly header: JournalHeader,
  ) {}

  /**
   * Appends one checkpoint (one write()); the tables are the writer's
   * cumulative encoded bytes, `heapChunks` (version 2) every chunk stored so
   * far. Nothing when no sample, table entry or heap chunk came since the last one.
   */
  checkpoint(
    regionBytes: number,
    samples: number,
    stringCount: number,
    strings: Uint8Array,
    frameCount: number,
    frames: Uint8Array,
    pendingRepeats: Uint8Array,
    heapChunks?: readonly Uint8Array[],
  ): void {
    const chunkCount = heapChunks?.length ?? 0;
    if (
      samples === this.lastSamples &&
      strings.length === this.stringBytes &&
      frames.length === this.frameBytes &&
      chunkCount === this.heapChunkCount
    )
      return;
    const heapBytes = heapChunks?.reduce((n, c) => n + c.length, 0) ?? 0;
    const whole = HEADER_SIZE + 40 + strings.length + frames.length + pendingRepeats.length + heapBytes;
    const fresh = this.fd < 0 || this.size > Math.max(COMPACT_FLOOR, 2 * whole);
    if (fresh) {
      this.stringBytes = 0;
      this.frameBytes = 0;
      this.heapChunkCount = 0;
    }
    const bytes = encodeCheckpoint({
      regionBytes,
      stringCount,
      frameCount,
      newStrings: strings.subarray(this.stringBytes),
      newFrames: frames.subarray(this.frameBytes),
      pendingRepeats,
      newHeapChunks: heapChunks === undefined ? undefined : concatBytes(heapChunks.slice(this.heapChunkCount)),
    });
    if (fresh) {
      // Header and a checkpoint with the whole tables in a new file, renamed over the old one.
      const temp = `${this.path}.new`;
      const fd = fs.openSync(temp, 'w');
      try {
        writeAll(fd, concatBytes([encodeJournalHeader(this.header), bytes]));
        // Closed first: Windows does not replace a file that is still open.
        if (this.fd >= 0) fs.closeSync(this.fd);
        this.fd = -1;
        renameReplacing(temp, this.path);
      } catch (err) {
        fs.closeSync(fd);
        throw err;
      }
      this.fd = fd;
      this.size = HEADER_SIZE + bytes.length;
    } else {
      writeAll(this.fd, bytes);
      this.size += bytes.length;
    }
    this.stringBytes = strings.length;
    this.frameBytes = frames.length;
    this.heapChunkCount = chunkCount;
    this.lastSamples = samples;
  }

  /** The profile is final (or discarded): the journal has nothing left to say. */
  remove(): void {
    if (this.fd < 0) return;
    this.keep();
    removeFile(this.path);
  }

  /** The writer failed: the journal stays on disk for recover(); only the descriptor goes. */
  keep(): void {
    if (this.fd < 0) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already gone with the failure that ended the writer
    }
    this.fd = -1;
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
}

/** What a version-2 checkpoint adds to the tables to finalize the file as its writer would have. */
export interface V2WriterState {
  samples: number;
  threads: number;
  /** The tables' zstd level at finalize, or null: stored raw. */
  tablesLevel: number | null;
  frameTable: 'plain' | 'mtf' | 'columns';
  /** The heap section's header (its totals) when a heap recording began, else null. */
  heapHeader: Uint8Array | null;
}

const FRAME_TABLE_CODINGS = ['plain', 'mtf', 'columns'] as const;
const V2_STATE_SIZE = 20;

/**
 * Layout: samples u64, threads u32, tables level i32, flags u8 (bit 0 tables
 * zstd, bit 1 heap), frame-table coding u8, 2 reserved, the heap header.
 */
export function encodeV2WriterState(s: V2WriterState): Uint8Array {
  const heap = s.heapHeader ?? new Uint8Array(0);
  const bytes = new Uint8Array(V2_STATE_SIZE + heap.length);
  const v = new DataView(bytes.buffer);
  v.setBigUint64(0, BigInt(s.samples), true);
  v.setUint32(8, s.threads, true);
  v.setInt32(12, s.tablesLevel ?? 0, true);
  bytes[16] = (s.tablesLevel !== null ? 1 : 0) | (s.heapHeader !== null ? 2 : 0);
  bytes[17] = FRAME_TABLE_CODINGS.indexOf(s.frameTable);
  bytes.set(heap, V2_STATE_SIZE);
  return bytes;
}

/** The state part of a version-2 checkpoint (its checksum held): a malformed one is ERR_TACHYON_JOURNAL_CORRUPT. */
export function decodeV2WriterState(bytes: Uint8Array): V2WriterState {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const coding = FRAME_TABLE_CODINGS[bytes[17] ?? 255];
  const samples = bytes.length >= V2_STATE_SIZE ? Number(v.getBigUint64(0, true)) : -1;
  if (coding === undefined || !Number.isSafeInteger(samples) || samples < 0 || bytes[16]! > 3)
    throw journalError("the journal's version-2 writer state is malformed", 0, 'a version-2 checkpoint state');
  const level = v.getInt32(12, true);
  if (level < -131072 || level > 22) throw journalError(`tables level ${level} is no zstd level`, 0, '-131072..22');
  return {
    samples,
    threads: v.getUint32(8, true),
    tablesLevel: bytes[16]! & 1 ? level : null,
    frameTable: coding,
    heapHeader: bytes[16]! & 2 ? bytes.slice(V2_STATE_SIZE) : null,
  };
}
