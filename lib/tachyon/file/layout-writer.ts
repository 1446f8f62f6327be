/**
 * The fixed parts of a Tachyon file, written (both versions; file/layout.ts
 * parses them): the 64-byte header as fixed-width slots patched at finalize
 * (seed 001's lesson), the profile statistics block, the footer (§2, §6, §7).
 */
import { type SlotWriter, type Slot, type SlotWidth } from '../../varint/index';
import {
  FOOTER_SIZE,
  Footer,
  Header,
  STATS_BLOCK_SIZE,
  STATS_SIGNATURE,
  STATS_VERSION,
  StatsBlock,
  StatsPresence,
} from '../format';

/** The header's fields in file order with their widths; reserved as zeros, patched at finalize. */
const HEADER_SLOTS: readonly [keyof typeof Header, SlotWidth][] = [
  ['magic', 4],
  ['version', 4],
  ['pythonMajor', 1],
  ['pythonMinor', 1],
  ['pythonMicro', 1],
  ['reserved', 1],
  ['startTimeUs', 8],
  ['sampleIntervalUs', 8],
  ['sampleCount', 8],
  ['threadCount', 4],
  ['stringTableOffset', 8],
  ['frameTableOffset', 8],
  ['compressionType', 4],
  ['profilingConfig', 4],
];

export type HeaderSlots = Record<keyof typeof Header, Slot>;

/** Appends the header as 64 zero bytes of slots, each at format.ts's offset. */
export function reserveHeader(slots: SlotWriter): HeaderSlots {
  const header: Partial<HeaderSlots> = {};
  for (const [name, width] of HEADER_SLOTS) {
    const slot = slots.reserve(width);
    if (slot.offset !== Header[name])
      throw new Error(`header slot ${name} at ${slot.offset}, expected ${Header[name]}`);
    header[name] = slot;
  }
  return header as HeaderSlots;
}

/** The statistics block's values (CPython's set_stats); an absent rate is not flagged present. */
export interface StatsValues {
  durationSec: number;
  sampleRate: number;
  errorRate?: number | null;
  missedSamples?: number | null;
}

/** The 56-byte statistics block that goes before the footer. */
export function statsBlock(v: StatsValues, littleEndian: boolean): Uint8Array {
  const block = new Uint8Array(STATS_BLOCK_SIZE);
  const view = new DataView(block.buffer);
  const le = littleEndian;
  view.setFloat64(StatsBlock.durationSec, v.durationSec, le);
  view.setFloat64(StatsBlock.sampleRate, v.sampleRate, le);
  let flags = 0;
  if (v.errorRate !== undefined && v.errorRate !== null) {
    view.setFloat64(StatsBlock.errorRate, v.errorRate, le);
    flags |= StatsPresence.ErrorRate;
  }
  if (v.missedSamples !== undefined && v.missedSamples !== null) {
    view.setFloat64(StatsBlock.missedSamples, v.missedSamples, le);
    flags |= StatsPresence.MissedSamples;
  }
  view.setUint32(StatsBlock.presenceFlags, flags, le);
  const tail = STATS_BLOCK_SIZE - StatsBlock.tailSize;
  for (let i = 0; i < STATS_SIGNATURE.length; i++) block[tail + i] = STATS_SIGNATURE.charCodeAt(i);
  view.setUint32(tail + 8, STATS_VERSION, le);
  view.setUint32(tail + 12, STATS_BLOCK_SIZE, le);
  return block;
}

/** The 32-byte footer: table counts and the file size. */
export function footer(
  stringCount: number,
  frameCount: number,
  fileSize: number,
  littleEndian: boolean,
  modelSectionOffset = -1,
  heapSectionOffset = -1,
): Uint8Array {
  const bytes = new Uint8Array(FOOTER_SIZE);
  const view = new DataView(bytes.buffer);
  view.setUint32(Footer.stringCount, stringCount, littleEndian);
  view.setUint32(Footer.frameCount, frameCount, littleEndian);
  view.setBigUint64(Footer.fileSize, BigInt(fileSize), littleEndian);
  // Version 2's model section (docs/format-v2.md §8): its offset in the first reserved u64, little-endian as all of
  // version 2.
  if (modelSectionOffset >= 0) view.setBigUint64(Footer.reserved, BigInt(modelSectionOffset), true);
  // Its heap section (§9): the second reserved u64.
  if (heapSectionOffset >= 0) view.setBigUint64(Footer.reserved + 8, BigInt(heapSectionOffset), true);
  return bytes;
}
