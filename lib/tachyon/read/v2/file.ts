/**
 * Version-2 files read (docs/format-v2.md): version 1's header, tables, stats
 * block and footer, with a sample region made of sample blocks (codec/blocks.ts)
 * and optionally zstd-compressed tables. readProfileV2 decodes a whole file
 * held in memory; ProfileWriter (formatVersion 2) writes them. CPython 3.15
 * refuses version 2 at open ("format version 2"), so it never half-reads one.
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { readInputFile } from '../../../input';
import {
  Compression,
  FOOTER_SIZE,
  HEADER_SIZE,
  Header,
  MAGIC,
  MAGIC_SWAPPED,
  MAX_PROFILING_MODE,
  ProfilingConfig,
  STATS_BLOCK_LEGACY_SIZE,
  STATS_BLOCK_SIZE,
  ZSTD_MAX_DECOMPRESSED,
  FORMAT_VERSION_2,
} from '../../format';
import { ByteSource } from '../../codec/index';
import {
  SampleBlockReader,
  V2_MAX_STACK_DEPTH,
  type OnV2Sample,
  type StackCoding,
  type V2Sample,
} from '../../codec/index';
import {
  BlockKind,
  HEADER_FLAGS_OFFSET,
  HeaderFlag,
  KNOWN_HEADER_FLAGS,
  MODEL_OFFSET_IN_FOOTER,
  HEAP_OFFSET_IN_FOOTER,
} from '../../codec/index';
import { decodeModelSection, type ModelSection } from '../../codec/index';
import { decodeFrameTable, decodeStringTable, type FrameTableCoding, type FrameTableEntry } from '../../codec/index';
import { v2Native } from '../../codec/index';
import { RegionBlocks, checkV2ZstdRegion } from './region';
import { ChunkBuilder, type V2SampleChunk } from './chunk';
import {
  bytesSource,
  layoutOf,
  readFooter,
  readFooterU64,
  readHeader,
  readStatsBlock,
  tachyonVersion,
  zstdDecompress,
  type FileBytes,
  type InflateInput,
  type Layout,
  type ProfileInfo,
} from '../../file/index';

/** The header facts of a version-2 file: version 1's get_info() fields, the version as text, and where things are. */
export interface V2Info extends Omit<ProfileInfo, 'pythonVersion'> {
  pythonVersion: string;
  /** Header byte 11 (HeaderFlag). */
  flags: number;
  stringTableOffset: number;
  frameTableOffset: number;
  profilingConfig: number;
  /** Bytes of the statistics block before the footer (0 when there is none). */
  statsBlockSize: number;
}

export type { V2SampleChunk } from './chunk';

export interface V2ReadOptions {
  /** Region decoder: 'native' (native/tachyon/v2) or 'js'; default: the native one when the addon is loaded. */
  backend?: 'native' | 'js';
  /** Cap on the decompressed sample region and tables (CPython's 1 GiB by default). */
  maxDecompressedSize?: number;
  /**
   * A zstd region up to this size is kept decompressed after the open-stage check (default 16 MiB); a larger one is
   * decompressed again, a block at a time, by each pass over the samples.
   */
  keepDecompressedLimit?: number;
}

const DEFAULT_KEEP_LIMIT = 16 << 20;

/** A decoded version-2 file: header facts, tables, and the sample region. */
export interface V2Profile {
  info: V2Info;
  /** The header facts in the shape version 1's reader gives them (ProfileReader's layout and info). */
  layout: Layout;
  strings: string[];
  frames: FrameTableEntry[];
  /** Size of the (decompressed) sample region. */
  regionSize: number;
  /** How the region's first block codes stacks; null without samples. */
  stackCoding: StackCoding | null;
  /** The whole decompressed region (for tools and tests: it is as large as the region). */
  regionBytes(): Uint8Array;
  /** The model section (HeaderFlag.ModelSection: sample types, value columns, labels), or null. */
  model: ModelSection | null;
  /** The heap section's bytes and file offset (HeaderFlag.HeapSection: read/heap-trace.ts decodes it), or null. */
  heap: { offset: number; bytes: Uint8Array } | null;
  /** Which region decoder this profile uses. */
  backend: 'native' | 'js';
  /**
   * The samples in chunks. Bad input: the samples decoded before it are
   * yielded first, then the ProfpackError is thrown. The header's thread
   * and sample counts are not checked here (forEachSample does).
   */
  chunks(): Generator<V2SampleChunk, void, undefined>;
  /** Calls `onSample` for each sample in file order (the stack array is reused). */
  forEachSample(onSample: OnV2Sample): number;
  /** Every sample, with its own stack array. */
  samples(): V2Sample[];
}

function headerError(message: string, offset: number, expected?: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.V2_BAD_HEADER, offset, expected });
}

/** True when `bytes` starts with a version-2 header (either byte order). */
export function isVersion2(bytes: Uint8Array): boolean {
  return tachyonVersion(bytes) === FORMAT_VERSION_2;
}

/** Reads a version-2 file from disk (whole, into memory) and opens it. */
export function openProfileV2(path: string, options: V2ReadOptions = {}): V2Profile {
  return readProfileV2(readInputFile(path, ErrorCode.TACHYON_IO), options);
}

/**
 * Opens a version-2 file: header, stats, footer, tables, and the sample
 * region (decompressed). Samples are decoded on demand. `input` is the file
 * held in memory, or read by ranges (FileBytes: recover's check of what it
 * wrote, which must not hold the region); a read by ranges keeps no region.
 */
export function readProfileV2(input: Uint8Array | FileBytes, options: V2ReadOptions = {}): V2Profile {
  const native = options.backend === 'js' ? null : v2Native;
  if (options.backend === 'native' && native === null) {
    throw new ProfpackError('the native version-2 decoder was requested but the addon is not loaded', {
      code: ErrorCode.NATIVE_UNAVAILABLE,
    });
  }
  const limit = options.maxDecompressedSize ?? ZSTD_MAX_DECOMPRESSED;
  const whole = input instanceof Uint8Array ? bytesSource(input) : input;
  const size = whole.size;
  if (size < HEADER_SIZE + FOOTER_SIZE)
    throw headerError(
      `file of ${size} bytes is too small for a header and footer`,
      0,
      `at least ${HEADER_SIZE + FOOTER_SIZE} bytes`,
    );
  const header = readHeader(whole.read(0, HEADER_SIZE));
  const magic = header.magic;
  if (magic === MAGIC_SWAPPED)
    throw new ProfpackError('big-endian version-2 files are not supported', {
      code: ErrorCode.V2_UNSUPPORTED,
      offset: 0,
      expected: 'a little-endian file ("HCAT")',
    });
  if (magic !== MAGIC)
    throw headerError(`invalid magic number 0x${magic.toString(16).padStart(8, '0')}`, 0, '0x54414348');
  const version = header.version;
  if (version !== FORMAT_VERSION_2) throw headerError(`format version ${version} is not 2`, Header.version, '2');
  const flags = header.flags;
  if (flags & ~KNOWN_HEADER_FLAGS)
    throw new ProfpackError(`unknown header flags 0x${flags.toString(16)}`, {
      code: ErrorCode.V2_UNSUPPORTED,
      offset: HEADER_FLAGS_OFFSET,
      expected: `only bits of 0x${KNOWN_HEADER_FLAGS.toString(16)}`,
    });
  if (flags & HeaderFlag.FrameTableMtf && flags & HeaderFlag.FrameTableColumns) {
    throw headerError(
      'header flags name two frame-table codings',
      HEADER_FLAGS_OFFSET,
      'at most one of FrameTableMtf and FrameTableColumns',
    );
  }
  const frameTableCoding: FrameTableCoding =
    flags & HeaderFlag.FrameTableColumns ? 'columns' : flags & HeaderFlag.FrameTableMtf ? 'mtf' : 'plain';
  const config = header.profilingConfig;
  const modeBits = config & ProfilingConfig.modeMask;
  if (modeBits > MAX_PROFILING_MODE + 1)
    throw headerError(`invalid profiling mode in header: ${modeBits}`, Header.profilingConfig, '0..5');
  const compressionType = header.compressionType;
  if (compressionType !== Compression.None && compressionType !== Compression.Zstd) {
    throw new ProfpackError(`unknown compression type ${compressionType}`, {
      code: ErrorCode.V2_UNSUPPORTED,
      offset: Header.compressionType,
      expected: '0 or 1',
    });
  }
  const stringTableOffset = Number(header.stringTableOffset);
  const frameTableOffset = Number(header.frameTableOffset);
  const footerAt = size - FOOTER_SIZE;
  if (stringTableOffset < HEADER_SIZE || stringTableOffset > footerAt)
    throw headerError(
      `string table offset ${stringTableOffset} is outside ${HEADER_SIZE}..${footerAt}`,
      Header.stringTableOffset,
    );
  if (frameTableOffset < stringTableOffset || frameTableOffset > footerAt)
    throw headerError(
      `frame table offset ${frameTableOffset} is outside ${stringTableOffset}..${footerAt}`,
      Header.frameTableOffset,
    );

  // Stats block: just before the footer, found by its signature (as in version 1), after the frame table.
  const stats = readStatsBlock(whole, true, frameTableOffset, (statsSize, at) => {
    if (
      (statsSize !== STATS_BLOCK_SIZE && statsSize !== STATS_BLOCK_LEGACY_SIZE) ||
      footerAt - statsSize < frameTableOffset
    ) {
      throw headerError(
        `invalid profiling statistics size ${statsSize}`,
        at,
        `${STATS_BLOCK_SIZE} or ${STATS_BLOCK_LEGACY_SIZE}`,
      );
    }
  });
  const statsBlockSize = stats?.size ?? 0;
  let tablesEnd = footerAt - statsBlockSize;
  let heap: V2Profile['heap'] = null;
  if (flags & HeaderFlag.HeapSection) {
    // Last before the stats block: frame table, [model section], heap section (docs/format-v2.md §9).
    const at = footerAt + HEAP_OFFSET_IN_FOOTER;
    const offset = readFooterU64(whole, true, HEAP_OFFSET_IN_FOOTER);
    if (offset < BigInt(frameTableOffset) || offset >= BigInt(tablesEnd)) {
      throw headerError(`heap section offset ${offset} is outside ${frameTableOffset}..${tablesEnd - 1}`, at);
    }
    heap = { offset: Number(offset), bytes: whole.read(Number(offset), tablesEnd) };
    tablesEnd = heap.offset;
  }
  let modelOffset = -1;
  if (flags & HeaderFlag.ModelSection) {
    const at = footerAt + MODEL_OFFSET_IN_FOOTER;
    const offset = readFooterU64(whole, true, MODEL_OFFSET_IN_FOOTER);
    if (offset < BigInt(frameTableOffset) || offset >= BigInt(tablesEnd))
      throw headerError(`model section offset ${offset} is outside ${frameTableOffset}..${tablesEnd - 1}`, at);
    modelOffset = Number(offset);
  }
  const modelEnd = tablesEnd;
  if (modelOffset >= 0) tablesEnd = modelOffset;
  const footer = readFooter(whole, true);
  const { stringCount, frameCount } = footer;

  const tablesZstd = (flags & HeaderFlag.TablesZstd) !== 0;
  const tableSpan = (start: number, end: number, what: string): ByteSource => {
    if (!tablesZstd) return new ByteSource(whole.read(start, end), 0, end - start, start);
    const plain = zstdDecompress(whole.read(start, end), start, what, limit);
    return new ByteSource(plain, 0, plain.length, start);
  };
  const strings = decodeStringTable(
    tableSpan(stringTableOffset, frameTableOffset, 'string table'),
    stringCount,
    (flags & HeaderFlag.StringsNulTerminated) !== 0,
  );
  const frames = decodeFrameTable(tableSpan(frameTableOffset, tablesEnd, 'frame table'), frameCount, frameTableCoding);

  const declared = header.sampleCount;
  const model =
    modelOffset < 0
      ? null
      : decodeModelSection(whole.read(modelOffset, modelEnd), modelOffset, Number(declared), limit);
  const stored: InflateInput =
    input instanceof Uint8Array
      ? input.subarray(HEADER_SIZE, stringTableOffset)
      : { source: input, start: HEADER_SIZE, end: stringTableOffset };
  const storedSize = stringTableOffset - HEADER_SIZE;
  const zstdRegion = compressionType === Compression.Zstd && storedSize > 0;
  const checked = zstdRegion
    ? checkV2ZstdRegion(stored, limit, options.keepDecompressedLimit ?? DEFAULT_KEEP_LIMIT)
    : { size: storedSize, data: stored instanceof Uint8Array ? stored : null };
  // Blocks come from the kept bytes, else from a new decompression of the stored region.
  const regionBlocks = (): RegionBlocks =>
    checked.data !== null ? new RegionBlocks(checked.data, false, limit) : new RegionBlocks(stored, zstdRegion, limit);
  const firstBlock = regionBlocks();
  let stackCoding: StackCoding | null;
  try {
    const first = firstBlock.next();
    stackCoding = first === null ? null : stackCodingOf(first.bytes);
  } finally {
    firstBlock.release();
  }

  const layout = layoutOf(header, footer, stats, size);
  const info: V2Info = {
    ...layout.info,
    pythonVersion: header.pythonVersion.join('.'),
    flags,
    stringTableOffset,
    frameTableOffset,
    profilingConfig: config,
    statsBlockSize,
  };

  function* nativeChunks(): Generator<V2SampleChunk, void, undefined> {
    const blocks = regionBlocks();
    const decoder = native!.createDecoder(info.startTimeUs, info.sampleIntervalUs);
    const threadIds: bigint[] = [];
    const interpreterIds: number[] = [];
    try {
      for (let block = blocks.next(); block !== null; block = blocks.next()) {
        const d = native!.decodeBlocks(decoder, block.bytes, HEADER_SIZE + block.at);
        // Reading a BigUint64Array element allocates a bigint: read each thread id once.
        for (let t = 0; t < d.threadIds.length; t++) {
          threadIds.push(d.threadIds[t]!);
          interpreterIds.push(d.interpreterIds[t]!);
        }
        const count = d.sampleThread.length;
        if (count > 0)
          yield {
            count,
            sampleThread: d.sampleThread,
            timestamps: d.timestamps,
            statuses: d.statuses,
            stackOffsets: d.stackOffsets,
            frames: d.frames,
            threadIds,
            interpreterIds,
          };
        if (d.error !== undefined) throw d.error;
      }
    } finally {
      native!.releaseDecoder(decoder);
      blocks.release();
    }
  }

  function* jsChunks(): Generator<V2SampleChunk, void, undefined> {
    const blocks = regionBlocks();
    const reader = new SampleBlockReader({ sampleIntervalUs: info.sampleIntervalUs, startTimeUs: info.startTimeUs });
    const threadIds: bigint[] = [];
    const interpreterIds: number[] = [];
    try {
      for (let block = blocks.next(); block !== null; block = blocks.next()) {
        const chunk = new ChunkBuilder(threadIds, interpreterIds);
        let failure: { error: unknown } | null = null;
        try {
          reader.decodeBlock(
            block.bytes,
            HEADER_SIZE + block.at,
            0,
            (threadId, interpreterId, timestampUs, status, stack, depth) => {
              const t = reader.lastThreadIndex;
              if (t === threadIds.length) {
                threadIds.push(threadId);
                interpreterIds.push(interpreterId);
              }
              chunk.add(t, timestampUs, status, stack, depth);
            },
          );
        } catch (err) {
          failure = { error: err };
        }
        if (chunk.count > 0) yield chunk.done();
        if (failure !== null) throw failure.error;
      }
    } finally {
      blocks.release();
    }
  }

  const chunks = native !== null ? nativeChunks : jsChunks;

  const forEachSample: V2Profile['forEachSample'] = (onSample) => {
    let delivered = 0;
    const stack = new Uint32Array(V2_MAX_STACK_DEPTH);
    for (const c of chunks()) {
      const { sampleThread, timestamps, statuses, stackOffsets, frames, threadIds, interpreterIds } = c;
      for (let i = 0; i < c.count; i++) {
        const t = sampleThread[i]!;
        if (t >= info.threadCount) throw threadCountError(info, delivered);
        const from = stackOffsets[i]!;
        const depth = stackOffsets[i + 1]! - from;
        for (let k = 0; k < depth; k++) stack[k] = frames[from + k]!;
        delivered++;
        onSample(threadIds[t]!, interpreterIds[t]!, timestamps[i]!, statuses[i]!, stack, depth);
      }
    }
    if (BigInt(delivered) !== info.sampleCount) throw sampleCountError(info, delivered);
    return delivered;
  };

  return {
    info,
    layout,
    strings,
    frames,
    regionSize: checked.size,
    stackCoding,
    regionBytes: () =>
      checked.data !== null
        ? checked.data
        : zstdRegion
          ? zstdDecompress(whole.read(HEADER_SIZE, stringTableOffset), HEADER_SIZE, 'sample region', limit)
          : whole.read(HEADER_SIZE, stringTableOffset),
    model,
    heap,
    backend: native !== null ? 'native' : 'js',
    chunks,
    forEachSample,
    samples() {
      const out: V2Sample[] = [];
      forEachSample((threadId, interpreterId, timestampUs, status, stack, depth) => {
        out.push({ threadId, interpreterId, timestampUs, status, stack: stack.slice(0, depth) });
      });
      return out;
    },
  };
}

/** More threads in the region than the header declares. */
export function threadCountError(info: V2Info, delivered: number): ProfpackError {
  return new ProfpackError(`sample data defines more threads than the header's ${info.threadCount}`, {
    code: ErrorCode.V2_UNDEFINED_THREAD,
    offset: Header.threadCount,
    expected: `at most ${info.threadCount} threads`,
    details: { samplesDelivered: delivered },
  });
}

/** The region ended with another number of samples than the header declares. */
export function sampleCountError(info: V2Info, delivered: number): ProfpackError {
  return new ProfpackError(
    `sample count mismatch: header declares ${info.sampleCount} samples but the region holds ${delivered}`,
    {
      code: ErrorCode.V2_BAD_BLOCK,
      offset: Header.sampleCount,
      expected: `${delivered}`,
      details: { samplesDelivered: delivered },
    },
  );
}

/** The stack coding of a version-2 region's first block, or null without samples. */
export function stackCodingOf(region: Uint8Array): StackCoding | null {
  if (region.length < 13) return null;
  return region[12] === BlockKind.Predict ? 'predict' : 'stacktable';
}
