/**
 * Hand-built Tachyon files for the resource-bound and hang tests: a valid
 * little-endian header, a sample region given as bytes (raw or zstd), and the
 * string and frame tables of vectors/tachyon/s01_single_thread_none.bin
 * (6 strings, 5 frames; shared notes §3.3), with the footer to match.
 */
import { readFileSync } from 'node:fs';
import { sharedPath } from '../support/environment';
import { uleb128 } from '../support/reference-leb128';

const s01 = readFileSync(sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin'));
// s01's layout (its expected.json "layout"): strings @213, frames @252, no stats block.
const S01_STRINGS = s01.subarray(213, 252);
const S01_FRAMES = s01.subarray(252, s01.length - 32);
export const S01_STRING_COUNT = 6;
export const S01_FRAME_COUNT = 5;

export interface CraftOptions {
  region: Uint8Array;
  compression?: number;
  sampleCount?: bigint;
  threadCount?: number;
  stringCount?: number;
  frameCount?: number;
  startTimeUs?: bigint;
  /** Format version in the header (default 1; 2 with flags 0 has version 1's tables). */
  version?: number;
}

export function craftTachyon(o: CraftOptions): Uint8Array {
  const stringOffset = 64 + o.region.length;
  const frameOffset = stringOffset + S01_STRINGS.length;
  const size = frameOffset + S01_FRAMES.length + 32;
  const out = Buffer.alloc(size);
  out.write('HCAT', 0, 'latin1'); // magic 0x54414348 little-endian
  out.writeUInt32LE(o.version ?? 1, 4);
  out.set([3, 15, 2, 0], 8);
  out.writeBigUInt64LE(o.startTimeUs ?? 1_000_000n, 12);
  out.writeBigUInt64LE(1000n, 20);
  out.writeBigUInt64LE(o.sampleCount ?? 0n, 28);
  out.writeUInt32LE(o.threadCount ?? 1, 36);
  out.writeBigUInt64LE(BigInt(stringOffset), 40);
  out.writeBigUInt64LE(BigInt(frameOffset), 48);
  out.writeUInt32LE(o.compression ?? 0, 56);
  out.writeUInt32LE(0, 60);
  out.set(o.region, 64);
  out.set(S01_STRINGS, stringOffset);
  out.set(S01_FRAMES, frameOffset);
  out.writeUInt32LE(o.stringCount ?? S01_STRING_COUNT, size - 32);
  out.writeUInt32LE(o.frameCount ?? S01_FRAME_COUNT, size - 28);
  out.writeBigUInt64LE(BigInt(size), size - 24);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** The 13-byte record prefix: thread id, interpreter id (little-endian), encoding. */
export function recordPrefix(threadId: bigint, interpreterId: number, encoding: number): number[] {
  const b = Buffer.alloc(13);
  b.writeBigUInt64LE(threadId, 0);
  b.writeUInt32LE(interpreterId, 8);
  b[12] = encoding;
  return [...b];
}

export const STATUS = 0x23;

/** FULL record: delta, status, depth, frames. */
export function fullRecord(threadId: bigint, frames: number[], delta = 1000): number[] {
  return [
    ...recordPrefix(threadId, 0, 1),
    ...uleb128(delta),
    STATUS,
    ...uleb128(frames.length),
    ...frames.flatMap((f) => uleb128(f)),
  ];
}

/**
 * A zstd frame made of RLE blocks of zero bytes (zstd format spec, RFC 8878
 * §3.1.1): `blocks` blocks of 128 KiB each, so a few bytes per 128 KiB of
 * output. `contentSize` writes an 8-byte Frame_Content_Size (which a careless
 * decoder trusts for an up-front allocation); otherwise the size is unknown.
 */
export function zstdRleBomb(blocks: number, contentSize?: bigint): Uint8Array {
  const BLOCK = 128 * 1024;
  const header: number[] = [0x28, 0xb5, 0x2f, 0xfd];
  if (contentSize === undefined) {
    header.push(0x00); // FHD: no content size, not single-segment, no checksum, no dict
    header.push((17 - 10) << 3); // Window_Descriptor: 2^17 = 128 KiB window
  } else {
    header.push(0xc0); // FHD: Frame_Content_Size_flag 3 (8 bytes), not single-segment
    header.push((17 - 10) << 3);
    const fcs = Buffer.alloc(8);
    fcs.writeBigUInt64LE(contentSize);
    header.push(...fcs);
  }
  const out = new Uint8Array(header.length + blocks * 4);
  out.set(header);
  let at = header.length;
  for (let i = 0; i < blocks; i++) {
    const last = i === blocks - 1 ? 1 : 0;
    const h = (BLOCK << 3) | (1 << 1) | last; // Block_Size, Block_Type 1 = RLE, Last_Block
    out[at++] = h & 0xff;
    out[at++] = (h >> 8) & 0xff;
    out[at++] = (h >> 16) & 0xff;
    out[at++] = 0x00; // the repeated byte
  }
  return out;
}

/** An empty zstd frame (RFC 8878: one raw block of size 0, last). */
export function zstdEmptyFrame(): number[] {
  return [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00]; // single-segment, FCS 0, raw last block of 0 bytes
}
