/**
 * The end of a ProfileWriter's file, written at finalize (CPython's order, §5.7): the string and frame tables
 * (re-coded for version 2), version 2's model and heap sections, the stats block, the footer and the patched header;
 * also the library-only options that steer it (WriterInternals) and setStats' checks. Kept apart from writer.ts,
 * which holds the writer's state and its per-sample calls: this is the one-shot file layout after the samples.
 */
import type { SlotWriter } from '../../varint/index';
import { Compression, FOOTER_SIZE, FORMAT_VERSION, FORMAT_VERSION_2, MAGIC, WRITER_PYTHON_VERSION } from '../format';
import { footer, statsBlock, type HeaderSlots, type StatsValues } from '../file/index';
import { HeaderFlag, version2Tables, type FrameTableCoding } from '../codec/index';
import type { ByteSink } from '../../byte-sink';
import { finiteNonNegative, invalid } from './arguments';
import { Counter, type SampleEngine } from './engines/index';

/**
 * Version 2's tables' zstd level (finalize): 1–3 % larger than 19 for 1/6–1/20 of its time
 * (bench/RESULTS.md ## v2).
 */
const V2_TABLES_LEVEL = 9;

/**
 * Options for the library's own callers and tests, kept out of the public
 * ProfileWriterOptions: an in-memory file, version 2's block size and table
 * storage. Passed as `options[WRITER_INTERNALS]`.
 */
export interface WriterInternals {
  /** The file is this buffer (JS encoders, or version 2's native one); `path` is then only a name. */
  memory?: ByteSink;
  /** Version 2: samples per block (tests cross block boundaries with small ones). */
  blockMaxSamples?: number;
  /**
   * Version 2: zstd tables (default: when compression is 'zstd'), their level (9) and frame-table coding ('columns').
   */
  compressTables?: boolean;
  tablesLevel?: number;
  frameTable?: FrameTableCoding;
  /**
   * Version 2: a model section written after the frame table at finalize (codec/model/section.ts), given the
   * tables' zstd level or null.
   */
  modelSection?: { encode(level: number | null): Uint8Array };
}
export const WRITER_INTERNALS = Symbol('profpack.writerInternals');

/** A table as the trailer reads it: a WriterStringTable or WriterFrameTable, or a journal's bytes (recover). */
export interface TableBytes {
  readonly count: number;
  readonly encoded: { view(): Uint8Array };
}

/** What the trailer is written from: the writer's tables, header slots and settings. */
export interface TrailerParts {
  /** Where the samples went and their counters (a writer's engine, or recover's rebuilt region). */
  engine: Pick<SampleEngine, 'output' | 'counters'>;
  slots: SlotWriter;
  header: HeaderSlots;
  formatVersion: 1 | 2;
  strings: TableBytes;
  frames: TableBytes;
  /** Version 2's encoded heap section, or null. */
  heapSection: Uint8Array | null;
  internals: WriterInternals;
  compression: 'zstd' | 'none';
  littleEndian: boolean;
  stats: StatsValues | undefined;
  startTime: bigint;
  interval: bigint;
  config: number;
}

/**
 * Appends the tables, sections, stats block and footer after the finished samples, patches the header and flushes;
 * returns the engine's final counters (taken after the footer is written).
 */
export function writeTrailer(p: TrailerParts): Float64Array {
  const out = p.engine.output;
  // Version 2 re-codes the tables built as version 1's (docs/format-v2.md §5), compressed with the region.
  const t = p.internals;
  const tablesLevel = v2TablesLevel(t, p.compression);
  const v2Tables =
    p.formatVersion === 2
      ? version2Tables(
          p.strings.encoded.view(),
          p.strings.count,
          p.frames.encoded.view(),
          p.frames.count,
          tablesLevel,
          t.frameTable,
        )
      : null;
  const stringTableOffset = out.position;
  out.write(v2Tables === null ? p.strings.encoded.view() : v2Tables.strings);
  const frameTableOffset = out.position;
  out.write(v2Tables === null ? p.frames.encoded.view() : v2Tables.frames);
  const modelOffset = v2Tables !== null && t.modelSection !== undefined ? out.position : -1;
  if (modelOffset >= 0) out.write(t.modelSection!.encode(tablesLevel));
  const heapOffset = v2Tables !== null && p.heapSection !== null ? out.position : -1;
  if (heapOffset >= 0) out.write(p.heapSection!);
  if (p.stats !== undefined) out.write(statsBlock(p.stats, p.littleEndian));
  const fileSize = out.position + FOOTER_SIZE;
  out.write(footer(p.strings.count, p.frames.count, fileSize, p.littleEndian, modelOffset, heapOffset));
  const counters = Float64Array.from(p.engine.counters());
  const s = p.slots;
  const hd = p.header;
  s.patch(hd.magic, MAGIC);
  s.patch(hd.version, p.formatVersion === 2 ? FORMAT_VERSION_2 : FORMAT_VERSION);
  const heapFlag = heapOffset >= 0 ? HeaderFlag.HeapSection : 0;
  const sections = (modelOffset >= 0 ? HeaderFlag.ModelSection : 0) | heapFlag;
  if (v2Tables !== null) s.patch(hd.reserved, v2Tables.flags | sections);
  s.patch(hd.pythonMajor, WRITER_PYTHON_VERSION[0]);
  s.patch(hd.pythonMinor, WRITER_PYTHON_VERSION[1]);
  s.patch(hd.pythonMicro, WRITER_PYTHON_VERSION[2]);
  s.patch(hd.startTimeUs, p.startTime);
  s.patch(hd.sampleIntervalUs, p.interval);
  s.patch(hd.sampleCount, counters[Counter.totalSamples]!);
  s.patch(hd.threadCount, counters[Counter.threadCount]!);
  s.patch(hd.stringTableOffset, stringTableOffset);
  s.patch(hd.frameTableOffset, frameTableOffset);
  s.patch(hd.compressionType, p.compression === 'zstd' ? Compression.Zstd : Compression.None);
  s.patch(hd.profilingConfig, p.config);
  out.flush();
  return counters;
}

/** Version 2's tables' zstd level at finalize, or null: stored raw. */
export function v2TablesLevel(t: WriterInternals, compression: 'zstd' | 'none'): number | null {
  return (t.compressTables ?? compression === 'zstd') ? (t.tablesLevel ?? V2_TABLES_LEVEL) : null;
}

/** setStats' arguments as the stats block's values, with CPython's checks. */
export function checkedStats(
  durationSec: number,
  sampleRate: number,
  errorRate?: number | null,
  missedSamples?: number | null,
): StatsValues {
  const duration = finiteNonNegative(durationSec, 'duration');
  const rate = finiteNonNegative(sampleRate, 'sample rate');
  const error = errorRate === undefined || errorRate === null ? undefined : finiteNonNegative(errorRate, 'error rate');
  let missed: number | undefined;
  if (missedSamples !== undefined && missedSamples !== null) {
    if (typeof missedSamples !== 'number' || !Number.isFinite(missedSamples)) {
      throw invalid(
        `missed samples must be a finite value, got ${String(missedSamples)}`,
        'a finite number (may be negative)',
      );
    }
    missed = missedSamples;
  }
  return { durationSec: duration, sampleRate: rate, errorRate: error, missedSamples: missed };
}
