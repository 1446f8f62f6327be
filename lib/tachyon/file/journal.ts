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
 */
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError } from '../../errors';
import { removeFile, renameReplacing } from '../../file-retry';

export const JOURNAL_SUFFIX = '.journal';
const MAGIC = 'PPJRNL01';
const HEADER_SIZE = 40;
const CHECKPOINT_TAG = 0x54504b43; // "CKPT" read as a little-endian u32
const Flag = { zstd: 1, littleEndian: 2 } as const;

export interface JournalHeader {
  compression: 'zstd' | 'none';
  littleEndian: boolean;
  profilingConfig: number;
  startTimeUs: bigint;
  sampleIntervalUs: bigint;
}

/** The state at the last complete checkpoint: cumulative tables, held-back runs. */
export interface JournalState {
  header: JournalHeader;
  regionBytes: number;
  stringCount: number;
  frameCount: number;
  strings: Uint8Array;
  frames: Uint8Array;
  pendingRepeats: Uint8Array;
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
  v.setUint32(8, (h.compression === 'zstd' ? Flag.zstd : 0) | (h.littleEndian ? Flag.littleEndian : 0), true);
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
}

export function encodeCheckpoint(c: Checkpoint): Uint8Array {
  const bodyLength = 8 + 4 + 4 + 12 + c.newStrings.length + c.newFrames.length + c.pendingRepeats.length;
  const bytes = new Uint8Array(8 + bodyLength + 4);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, CHECKPOINT_TAG, true);
  v.setUint32(4, bodyLength, true);
  v.setBigUint64(8, BigInt(c.regionBytes), true);
  v.setUint32(16, c.stringCount, true);
  v.setUint32(20, c.frameCount, true);
  let at = 24;
  for (const part of [c.newStrings, c.newFrames, c.pendingRepeats]) {
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
  };
  const strings: Uint8Array[] = [];
  const frames: Uint8Array[] = [];
  const state: JournalState = {
    header,
    regionBytes: 0,
    stringCount: 0,
    frameCount: 0,
    strings: new Uint8Array(0),
    frames: new Uint8Array(0),
    pendingRepeats: new Uint8Array(0),
    checkpoints: 0,
  };
  let at = HEADER_SIZE;
  while (at + 12 <= bytes.length) {
    if (v.getUint32(at, true) !== CHECKPOINT_TAG) break;
    const bodyLength = v.getUint32(at + 4, true);
    const body = at + 8;
    if (bodyLength < 28 || body + bodyLength + 4 > bytes.length) break;
    if (fnv1a(bytes.subarray(body, body + bodyLength)) !== v.getUint32(body + bodyLength, true)) break;
    const parts: Uint8Array[] = [];
    let p = body + 16;
    for (let k = 0; k < 3; k++) {
      const n = p + 4 <= body + bodyLength ? v.getUint32(p, true) : -1;
      if (n < 0 || p + 4 + n > body + bodyLength) break;
      parts.push(bytes.subarray(p + 4, p + 4 + n));
      p += 4 + n;
    }
    const regionBytes = Number(v.getBigUint64(body, true));
    if (
      parts.length !== 3 ||
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
    state.checkpoints++;
    at = body + bodyLength + 4;
  }
  state.strings = concatBytes(strings);
  state.frames = concatBytes(frames);
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

  constructor(
    readonly path: string,
    private readonly header: JournalHeader,
  ) {}

  /**
   * Appends one checkpoint (one write()); the tables are the writer's
   * cumulative encoded bytes. Nothing when no sample came since the last one.
   */
  checkpoint(
    regionBytes: number,
    samples: number,
    stringCount: number,
    strings: Uint8Array,
    frameCount: number,
    frames: Uint8Array,
    pendingRepeats: Uint8Array,
  ): void {
    if (samples === this.lastSamples && strings.length === this.stringBytes && frames.length === this.frameBytes)
      return;
    const whole = HEADER_SIZE + 40 + strings.length + frames.length + pendingRepeats.length;
    const fresh = this.fd < 0 || this.size > Math.max(COMPACT_FLOOR, 2 * whole);
    if (fresh) {
      this.stringBytes = 0;
      this.frameBytes = 0;
    }
    const bytes = encodeCheckpoint({
      regionBytes,
      stringCount,
      frameCount,
      newStrings: strings.subarray(this.stringBytes),
      newFrames: frames.subarray(this.frameBytes),
      pendingRepeats,
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
