/**
 * Constants of format version 2 (docs/format-v2.md): what version 2
 * adds to the version-1 layout of lib/tachyon/format.ts. Everything not named
 * here (header offsets, tables, stats block, footer) is version 1's.
 */

/**
 * Record kinds only a version-2 file may contain. A version-2 sample region is
 * a sequence of sample blocks; each starts with version 1's 13-byte record
 * prefix (thread_id and interpreter_id written 0, ignored) and one of these.
 * Values 0..3 stay version 1's REPEAT / FULL / SUFFIX / POP_PUSH.
 */
export enum BlockKind {
  /** Stacks coded with memtrace's cache and prediction (seed 004), per thread. */
  Predict = 4,
  /** Stacks named by an interned stack id; new stacks defined inline. Read only: earlier releases wrote it. */
  StackTable = 5,
  /**
   * The same stack table, stacks named by recency: "the stack of the sample d
   * back, cut by p frames, plus k new frames" (recent.ts). What 'stacktable' writes.
   */
  StackTableRecent = 6,
}

/** How a writer codes its stacks: 'predict' writes kind 4 blocks, 'stacktable' kind 6. */
export type StackCoding = 'predict' | 'stacktable';

/** Here, not in blocks.ts: the native encoder needs the kind alone, not the JS block coders. */
export function blockKindOf(coding: StackCoding): BlockKind {
  return coding === 'predict' ? BlockKind.Predict : BlockKind.StackTableRecent;
}

/** Header byte 11 (reserved and written 0 in version 1) carries version 2's flags. */
export const HEADER_FLAGS_OFFSET = 11;
export const HeaderFlag = {
  /** The string table and the frame table are each one zstd frame. */
  TablesZstd: 1 << 0,
  /** Frame-table filename/funcname indices are move-to-front codes (mtf.ts). */
  FrameTableMtf: 1 << 1,
  /**
   * The frame table is stored column by column, name indices as "next new
   * string" codes and line numbers relative to the file's previous frame
   * (tables.ts). Exclusive with FrameTableMtf.
   */
  FrameTableColumns: 1 << 2,
  /**
   * Strings are stored NUL-terminated instead of length-prefixed (measured
   * 3–15 % smaller after zstd). Only when no string contains a NUL byte.
   */
  StringsNulTerminated: 1 << 3,
  /**
   * A model section (sample types, value columns, labels: model.ts) follows
   * the frame table; its offset is the footer's first reserved u64
   * (MODEL_OFFSET_IN_FOOTER). Readers from before it refuse the bit, so no
   * reader takes the section for part of the frame table.
   */
  ModelSection: 1 << 4,
  /**
   * A heap section (sampled allocations and frees: heap-*.ts) follows the frame
   * table and the model section; its offset is the footer's second reserved u64
   * (HEAP_OFFSET_IN_FOOTER).
   */
  HeapSection: 1 << 5,
} as const;
export const KNOWN_HEADER_FLAGS =
  HeaderFlag.TablesZstd |
  HeaderFlag.FrameTableMtf |
  HeaderFlag.FrameTableColumns |
  HeaderFlag.StringsNulTerminated |
  HeaderFlag.ModelSection |
  HeaderFlag.HeapSection;

/**
 * Footer offset of model_section_offset u64 (version 1's 16 reserved bytes start here), with
 * HeaderFlag.ModelSection.
 */
export const MODEL_OFFSET_IN_FOOTER = 16; // Footer.reserved
/** Footer offset of heap_section_offset u64, with HeaderFlag.HeapSection. */
export const HEAP_OFFSET_IN_FOOTER = 24;

/**
 * A block holds at most this many samples, and is also ended once its columns
 * reach WRITE_BUFFER_SIZE bytes (512 KiB, what version 1 buffers). Larger
 * blocks compress better: 64 Ki samples measured 3 % smaller than 8 Ki.
 */
export const BLOCK_MAX_SAMPLES = 65536;

/**
 * Bytes a block may take. A writer ends a block once its columns reach 512
 * KiB, and one sample adds at most a few KiB, so a larger block is not one a
 * writer made; readers hold one block at a time and refuse larger ones
 * (ERR_V2_LIMIT), which bounds their memory.
 */
export const BLOCK_MAX_BYTES = 4 << 20;

/**
 * Frames a version-2 stack may have (version 1 keeps CPython's 256). Real producers stay below it:
 * Go's pprof allows at most 1,024 frames (runtime maxProfStackDepth, GODEBUG profstackdepth), V8's sampler
 * keeps 255 and CPython 256, and perf's callchains default to 127. 4,096 leaves room for pprof's inlined
 * frames and deep collapsed or speedscope stacks, and keeps a thread's worst-case path at 32 KiB (writers
 * grow it with the thread's depth). Deeper stacks keep their innermost 4,096 frames and are counted as cut.
 */
export const V2_MAX_STACK_DEPTH = 4096;

/**
 * Frames a block may decode to: what BLOCK_MAX_SAMPLES stacks of 256 frames make, so every block written
 * before stacks could be deeper passes. Writers end a block before a sample would pass it; readers refuse
 * more (ERR_V2_LIMIT), which bounds a block's decoded frames (64 MiB) and the work a few bytes can ask for
 * (a sample that repeats a 4,096-frame stack costs 3 bytes of stack columns).
 */
export const BLOCK_MAX_FRAMES = BLOCK_MAX_SAMPLES * 256;

/**
 * Threads with predicted-stack state (a 115 KiB cache each on both sides):
 * readers allocate it on a thread's first predicted sample and refuse a file
 * that needs more (ERR_V2_LIMIT); writers code the samples of any further
 * thread with the stack table. Native twin: region_decoder.h kMaxPredictThreads.
 */
export const MAX_PREDICT_THREADS = 1024;

/**
 * Columns of a sample block, in file order after the sample count. Values
 * that span several bytes are split into byte planes (a low-byte column and
 * a LEB128 column for the rest): zstd's entropy stage models the planes far
 * better than interleaved LEB128 bytes (bench/RESULTS.md ## v2).
 */
export const BLOCK_COLUMNS = [
  'threads', // LEB128 thread index per sample
  'threadDefinitions', // u64 thread_id + u32 interpreter_id per new thread
  'deltas', // u8: low 7 bits of the time code per sample
  'deltasHigh', // LEB128: time code >> 7 per sample
  'statuses', // u8 per sample
  'stacks', // Predict: keep, ncodes, codewords; StackTable: u8 low byte of the ref; StackTableRecent: u8 new frames k
  'stacksHigh', // StackTable: LEB128 ref >> 8 per sample; StackTableRecent: k − 255 when k ≥ 255
  // StackTable: u8 low byte of the parent distance per sample with definitions;
  // StackTableRecent: LEB128 sample distance
  'parents',
  'parentsHigh', // StackTable: LEB128 parent distance >> 8; StackTableRecent: LEB128 frames cut (distance ≥ 1)
  'stackFrames', // StackTable: LEB128 frame index per defined stack; StackTableRecent: LEB128 zigzag32 frame − caller
] as const;
export type BlockColumn = (typeof BLOCK_COLUMNS)[number];
export const BlockColumnIndex = Object.fromEntries(BLOCK_COLUMNS.map((name, i) => [name, i])) as {
  [K in BlockColumn]: number;
};

/**
 * The time code is split at 7 bits: measured 0.1–2 % smaller after zstd-19
 * than a split at 8 bits on every real stream (jitter of a few hundred µs
 * puts most codes below 2^14, so the high part is mostly one small byte).
 */
export const TIME_LOW_BITS = 7;
export const TIME_LOW_MASK = (1 << TIME_LOW_BITS) - 1;

/** Thread definition: thread_id u64 + interpreter_id u32, little-endian. */
export const THREAD_DEFINITION_SIZE = 12;

/** Memtrace's cache: 2^14 buckets, two-way skewed-associative (notes/memtrace.md §4.3). */
export const CACHE_BITS = 14;
export const CACHE_SIZE = 1 << CACHE_BITS;
export const CACHE_MASK = CACHE_SIZE - 1;
/** Multipliers of memtrace's two hashes: h1 = (v*H1 >> 11) & mask, h2 = (v*H2 >> 21) & mask. */
export const HASH1_MULTIPLIER = 0x4983723;
export const HASH1_SHIFT = 11;
export const HASH2_MULTIPLIER = 0xfdea731;
export const HASH2_SHIFT = 21;

/** Codeword = bucket << 2 | tag, u16 little-endian. */
export enum CodewordTag {
  /** Hit, then no correct prediction. */
  Hit0 = 0,
  /** Hit, then one correct prediction. */
  Hit1 = 1,
  /** Hit, then N (2..255) correct predictions: a u8 N follows. */
  HitN = 2,
  /** Miss: the frame index follows as LEB128 and is stored in this bucket. */
  Miss = 3,
}
/** memtrace caps a hitN run at 255 (the 256th correct prediction starts a new codeword). */
export const MAX_PREDICTION_RUN = 255;

/** Move-to-front list length for frame-table names (memtrace uses 31 for file and function names). */
export const MTF_SIZE = 31;
