/**
 * Rewrites a decoded version-2 profile through a version-1 writer: the same
 * strings and frames (interned in table order, so indices are kept), then
 * every sample in the version-2 file's order. The version-1 writer encodes
 * exactly as CPython 3.15.2 does, so the result is what CPython would have
 * written for the same samples.
 *
 * Sample order: version 2 keeps the order samples were written in; version 1
 * defers REPEAT runs per thread (notes/tachyon-format.md §5.3), so a reader of
 * the downgraded file sees each thread's samples in the same order, but the
 * interleaving of threads may differ, exactly as in any CPython-written file.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import type { V2Profile } from './file';
import type { FrameTableEntry } from './tables';

/** What downgrade needs of a version-1 writer (ProfileWriter's fast path). */
export interface Version1Sink {
  internString(value: string): number;
  internFrame(frame: { filename: string | number; funcname: string | number; lineno?: number | null; endLineno?: number | null; column?: number | null; endColumn?: number | null; opcode?: number | null }): number;
  writeStack(threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, frameIds: Uint32Array): void;
  setStats(durationSec: number, sampleRate: number, errorRate?: number, missedSamples?: number): void;
}

/**
 * The location fields that intern to the same stored entry: version 1 stores
 * end − start (0 when either is −1), so start + stored delta reproduces it.
 */
export function frameSpecOf(entry: FrameTableEntry, strings: readonly string[]) {
  const { lineno, column } = entry;
  const filename = strings[entry.filenameIndex];
  const funcname = strings[entry.funcnameIndex];
  if (filename === undefined || funcname === undefined) {
    throw new ProfpackError('invalid string index in frame', { code: ErrorCode.V2_BAD_TABLES, expected: `string indices below ${strings.length}` });
  }
  return {
    filename,
    funcname,
    lineno,
    endLineno: lineno === -1 ? -1 : (lineno + entry.endLinenoDelta) | 0,
    column,
    endColumn: column === -1 ? -1 : (column + entry.endColumnDelta) | 0,
    opcode: entry.opcode === 255 ? null : entry.opcode,
  };
}

/** Feeds `profile` into `sink`; returns the number of samples written. */
export function replayIntoVersion1(profile: V2Profile, sink: Version1Sink): number {
  for (const s of profile.strings) sink.internString(s);
  const ids = new Uint32Array(profile.frames.length);
  profile.frames.forEach((entry, i) => {
    ids[i] = sink.internFrame(frameSpecOf(entry, profile.strings));
  });
  const stack = new Uint32Array(256);
  const written = profile.forEachSample((threadId, interpreterId, timestampUs, status, frames, depth) => {
    for (let k = 0; k < depth; k++) stack[k] = ids[frames[k]!]!;
    sink.writeStack(threadId, interpreterId, timestampUs, status, stack.subarray(0, depth));
  });
  const { durationSec, sampleRate, errorRate, missedSamples } = profile.info;
  if (durationSec !== null && sampleRate !== null) sink.setStats(durationSec, sampleRate, errorRate ?? undefined, missedSamples ?? undefined);
  return written;
}
