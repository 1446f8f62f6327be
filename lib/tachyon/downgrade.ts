/**
 * `downgrade(in, out)`: rewrites a version-2 profile as version 1 through
 * ProfileWriter, so CPython 3.15 reads it (docs/format-v2.md). Lossless:
 * every thread gets the same samples in the same order, and the string and
 * frame tables are the same lists, index for index.
 *
 * replayIntoVersion1 does the rewriting: the same strings and frames
 * (interned in table order, so indices are kept), then every sample in the
 * version-2 file's order. The version-1 writer encodes exactly as CPython
 * 3.15.2 does, so the result is what CPython would have written for the same
 * samples. Sample order: version 2 keeps the order samples were written in;
 * version 1 defers REPEAT runs per thread (notes/tachyon-format.md §5.3), so a
 * reader of the downgraded file sees each thread's samples in the same order,
 * but the interleaving of threads may differ, as in any CPython-written file.
 * A model section's record is as many ticks as its samples/count value (a
 * CPython REPEAT run converted to version 2 is one record); a section without
 * that column is refused. `convert` to version 1 of a version-2 file is this
 * same path, so the two write the same bytes.
 */
import { defaultCompression } from './file/index';
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError } from '../errors';
import { readInputFile } from '../input';
import { refuseInputAsOutput, writeThroughTemporary } from '../output-file';
import { ProfileWriter } from './write/index';
import { MAX_STACK_DEPTH } from './format';
import { heapTotalsOf, isVersion2, readProfileV2, type V2Profile } from './read/index';
import { entryLocation, frameTableEntry, type FrameTableEntry } from './codec/index';
import type { ModelSection } from './codec/index';
import { labelKeys, sampleCountColumn, sampleTypeName } from '../profile/index';
import { encodeRecordedBy, findRecordedBy } from '../recorded-by';

export interface DowngradeOptions {
  /** Version-1 sample region: 'zstd' (level 5, CPython's; default where zstd is written) or 'none'. */
  compression?: 'zstd' | 'none';
  /** zstd level (default 5). */
  level?: number;
  /** Decoder and encoder: 'native' or 'js' (default: the process backend). */
  backend?: 'native' | 'js';
}

export interface DowngradeResult {
  samples: number;
  /** Size of the version-1 file. */
  bytes: number;
  /**
   * What version 1 could not keep, one sentence each (empty when nothing was
   * lost): a model section's value columns other than one tick per sample,
   * its labels, samples without a time, thread names, comments, heap events.
   */
  lost: string[];
  /** Heap events (allocations, frees, objects live at the start): version 1 has no place for them. */
  heapEventsDropped: number;
  /** The sample types of the version-2 file read, "type/unit" (its model section's, else the ticks'). */
  sampleTypes: string[];
}

/** What version 1's one-tick samples cannot hold of a model section (docs/format-v2.md §8). */
export function lostInVersion1(model: ModelSection | null): string[] {
  if (model === null) return [];
  const lost: string[] = [];
  const ticks = sampleCountColumn(model);
  model.sampleTypes.forEach((t, v) => {
    // The samples/count column becomes the ticks themselves; any other column is lost.
    if (v !== ticks) lost.push(`value column ${t.type}/${t.unit} (version 1 counts one tick per sample)`);
  });
  const labelled = model.labels === null ? 0 : model.labels.reduce((n, id) => n + (id !== 0 ? 1 : 0), 0);
  if (labelled > 0) {
    const keys = labelKeys(model.labelSets).map((k) => JSON.stringify(k));
    lost.push(`labels ${keys.join(', ')} of ${labelled} samples (${model.labelSets.length - 1} label sets)`);
  }
  if (model.timeAbsent !== null) lost.push('which samples had no time (version 1 stores a time for every sample)');
  if (model.threadNames.length > 0) lost.push(`${model.threadNames.length} thread names`);
  if (model.periodType !== undefined)
    lost.push(`the period (${model.period} ${model.periodType.unit} of ${model.periodType.type})`);
  if (model.durationUs !== undefined) lost.push('the duration (kept only as the stats block says it)');
  if (model.comments !== undefined && model.comments.length > 0) lost.push(`${model.comments.length} comments`);
  return lost;
}

/**
 * The model section's samples/count column: version 1 holds ticks, so a section without one (a heap or
 * contention profile) is refused as convert refuses it (ERR_TACHYON_V1_WEIGHTED, docs/formats.md).
 */
function ticksColumn(model: ModelSection): number {
  const column = sampleCountColumn(model);
  if (column < 0) {
    const types = model.sampleTypes.map((t) => `${t.type}/${t.unit}`).join(', ');
    throw new ProfpackError(
      `the profile measures ${types} and has no samples/count column; ` +
        'Tachyon version 1 holds one tick per sample: keep format version 2 to keep the values',
      { code: ErrorCode.TACHYON_V1_WEIGHTED, expected: 'a samples/count column of whole tick counts' },
    );
  }
  return column;
}

/**
 * Rewrites the version-2 profile at `inputPath` as a version-1 file at `outputPath`; `convert` to Tachyon
 * version 1 of a version-2 file comes here too.
 */
export function downgrade(inputPath: string, outputPath: string, options: DowngradeOptions = {}): DowngradeResult {
  const bytes = readInputFile(inputPath, ErrorCode.TACHYON_IO);
  if (!isVersion2(bytes)) {
    throw new ProfpackError(`${inputPath} is not a version-2 profile`, {
      code: ErrorCode.V2_BAD_HEADER,
      offset: 4,
      expected: 'format version 2 (a version-1 file needs no downgrade)',
    });
  }
  refuseInputAsOutput(outputPath, [inputPath]);
  const profile = readProfileV2(bytes, { backend: options.backend });
  if (profile.model !== null) ticksColumn(profile.model);
  const info = profile.info;
  // Written beside outputPath and renamed once whole: a half-written version-1 file is worse than none.
  let stacksCut = 0;
  const samples = writeThroughTemporary(outputPath, (writePath) => {
    const writer = new ProfileWriter(writePath, {
      sampleIntervalUs: info.sampleIntervalUs,
      startTimeUs: info.startTimeUs,
      compression: options.compression ?? defaultCompression(),
      level: options.level,
      mode: info.mode,
      captureFeatures: info.captureFeatures,
      backend: options.backend,
    });
    try {
      const count = replayIntoVersion1(profile, writer);
      stacksCut = writer.finalize().stacksCut;
      return count;
    } catch (err) {
      writer.close();
      throw err;
    }
  });
  const heap = heapTotalsOf(profile);
  const heapEventsDropped = heap === null ? 0 : heap.allocations + heap.frees + heap.live;
  const lost = lostInVersion1(profile.model);
  if (stacksCut > 0)
    lost.push(`the outermost frames of ${stacksCut} samples deeper than ${MAX_STACK_DEPTH} frames (version 1's cap)`);
  if (heapEventsDropped > 0) {
    const parts = `${heap!.allocations} allocations, ${heap!.frees} frees, ${heap!.live} objects live at the start`;
    const why = 'version 1 has no heap section, the CPU samples are kept';
    lost.push(`heap events: dropped ${heapEventsDropped} (${parts}; ${why})`);
  }
  const sampleTypes =
    profile.model === null
      ? ['samples/count']
      : profile.model.sampleTypes.map((t) => sampleTypeName({ type: t.type, unit: t.unit }));
  return { samples, bytes: fs.statSync(outputPath).size, lost, heapEventsDropped, sampleTypes };
}

/** What downgrade needs of a version-1 writer (ProfileWriter's fast path). */
export interface Version1Sink {
  internString(value: string): number;
  internFrame(frame: {
    filename: string | number;
    funcname: string | number;
    lineno?: number | null;
    endLineno?: number | null;
    column?: number | null;
    endColumn?: number | null;
    opcode?: number | null;
  }): number;
  writeStack(threadId: bigint, interpreterId: number, timestampUs: bigint, status: number, frameIds: Uint32Array): void;
  setStats(durationSec: number, sampleRate: number, errorRate?: number, missedSamples?: number): void;
}

/**
 * The location fields that intern to the same stored entry: version 1 stores
 * end − start (0 when either is −1), so start + stored delta reproduces it.
 */
export function frameSpecOf(entry: FrameTableEntry, strings: readonly string[]) {
  const filename = strings[entry.filenameIndex];
  const funcname = strings[entry.funcnameIndex];
  if (filename === undefined || funcname === undefined) {
    throw new ProfpackError('invalid string index in frame', {
      code: ErrorCode.V2_BAD_TABLES,
      expected: `string indices below ${strings.length}`,
    });
  }
  return { filename, funcname, ...entryLocation(entry) };
}

const entryKey = (e: FrameTableEntry): string =>
  `${e.filenameIndex},${e.funcnameIndex},${e.lineno},${e.endLinenoDelta},${e.column},${e.endColumnDelta},${e.opcode}`;

/**
 * End values that store a given (start, delta): CPython stores delta 0 when
 * either bound is −1, so a start of −1 takes any end (null: unbounded), and a
 * delta of 0 has two spellings (end = start, or end = −1).
 */
function endSpellings(start: number, delta: number): number[] | null {
  if (start === -1) return null;
  return delta === 0 ? [start, -1] : [(start + delta) | 0];
}

/**
 * The k-th raw spelling of a stored entry. ProfileWriter, like CPython,
 * deduplicates frames on their raw values, so a table holding the same stored
 * entry twice (CPython writes that for end −1 and end = start) is rebuilt by
 * interning each copy under another spelling of the same bytes.
 */
function spelling(entry: FrameTableEntry, strings: readonly string[], k: number, at: number) {
  const spec = frameSpecOf(entry, strings);
  const lines = endSpellings(entry.lineno, entry.endLinenoDelta);
  const columns = endSpellings(entry.column, entry.endColumnDelta);
  if (k === 0) return spec;
  if (lines === null) return { ...spec, endLineno: k - 1 };
  if (columns === null) return { ...spec, endColumn: k - 1 };
  if (k < lines.length * columns.length)
    return { ...spec, endLineno: lines[k % lines.length]!, endColumn: columns[Math.floor(k / lines.length)]! };
  throw new ProfpackError(
    `the frame table holds the same entry ${k + 1} times, which no version-1 writer can produce`,
    {
      code: ErrorCode.V2_UNSUPPORTED,
      offset: at,
      expected: `at most ${lines.length * columns.length} copies of one entry`,
    },
  );
}

function unsupported(message: string, at: number): ProfpackError {
  return new ProfpackError(message, {
    code: ErrorCode.V2_UNSUPPORTED,
    offset: at,
    expected: 'a table a version-1 writer can produce',
  });
}

/**
 * Feeds `profile` into `sink`: the strings and frames first, each at its own
 * index (else ProfpackError ERR_V2_UNSUPPORTED: the table could not be kept),
 * then every sample. Returns the number of samples written.
 */
export function replayIntoVersion1(profile: V2Profile, sink: Version1Sink): number {
  const tablesAt = profile.info.stringTableOffset;
  profile.strings.forEach((s, i) => {
    if (sink.internString(s) !== i)
      throw unsupported(`string ${i} repeats an earlier string; version 1 keeps each string once`, tablesAt);
  });
  const copies = new Map<string, number>();
  const frameAt = profile.info.frameTableOffset;
  profile.frames.forEach((entry, i) => {
    const key = entryKey(entry);
    const k = copies.get(key) ?? 0;
    copies.set(key, k + 1);
    const spec = spelling(entry, profile.strings, k, frameAt);
    // CPython's conversion must give back the stored entry, else the table would change.
    const stored = frameTableEntry(
      entry.filenameIndex,
      entry.funcnameIndex,
      spec.lineno,
      spec.endLineno,
      spec.column,
      spec.endColumn,
      spec.opcode,
    );
    if (entryKey(stored) !== key || sink.internFrame(spec) !== i)
      throw unsupported(`frame ${i} cannot be stored by a version-1 writer as it is`, frameAt);
  });
  // What recorded it: version 1 keeps it as the note string the model section replaced (lib/recorded-by.ts).
  const about = profile.model === null ? undefined : findRecordedBy([], profile.model.producer);
  if (about !== undefined) sink.internString(encodeRecordedBy(about));
  // A model section's samples/count column says how many ticks each record is (a version-1 REPEAT run read into
  // version 2 is one record); without a model section, each sample is one tick.
  const model = profile.model;
  const counts = model === null ? null : model.values[ticksColumn(model)]!;
  const intervalUs = profile.info.sampleIntervalUs;
  let record = 0;
  let written = 0;
  // Frame i is frame i in both files: stacks are written as they are.
  profile.forEachSample((threadId, interpreterId, timestampUs, status, frames, depth) => {
    const ticks = counts === null ? 1 : counts[record]!;
    if (!Number.isInteger(ticks) || ticks < 0)
      throw new ProfpackError(`record ${record} counts ${ticks} samples, not a whole number of ticks`, {
        code: ErrorCode.TACHYON_V1_WEIGHTED,
        expected: 'a samples/count column of whole tick counts',
      });
    record++;
    const stack = frames.subarray(0, depth);
    // Tick k of a record is k nominal intervals after its time (docs/formats.md, Times), as convert writes it.
    for (let k = 0; k < ticks; k++)
      sink.writeStack(threadId, interpreterId, timestampUs + BigInt(k) * intervalUs, status, stack);
    written += ticks;
  });
  const { durationSec, sampleRate, errorRate, missedSamples } = profile.info;
  if (durationSec !== null && sampleRate !== null)
    sink.setStats(durationSec, sampleRate, errorRate ?? undefined, missedSamples ?? undefined);
  return written;
}
