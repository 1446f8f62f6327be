/**
 * Constants of the Tachyon format as CPython 3.15.2 writes and reads it
 * (../shared/notes/tachyon-format.md; where the seed's prose differs, the
 * note and the vectors win). One place for every offset, bit and limit.
 */

/** u32 magic; on disk a little-endian file starts "HCAT", a big-endian one "TACH". */
export const MAGIC = 0x54414348;
/** The magic read with the wrong byte order: every fixed-width field must be swapped. */
export const MAGIC_SWAPPED = 0x48434154;
export const FORMAT_VERSION = 1;
/** Opt-in extension; CPython 3.15 refuses it at open. */
export const FORMAT_VERSION_2 = 2;

/** Header: 64 bytes, fixed-width fields in the writer's byte order. */
export const HEADER_SIZE = 64;
export const Header = {
  magic: 0, // u32
  version: 4, // u32
  pythonMajor: 8, // u8
  pythonMinor: 9, // u8
  pythonMicro: 10, // u8
  reserved: 11, // u8, written 0, never checked
  startTimeUs: 12, // u64
  sampleIntervalUs: 20, // u64
  sampleCount: 28, // u64 (thread-samples)
  threadCount: 36, // u32, distinct (thread_id, interpreter_id) pairs
  stringTableOffset: 40, // u64, absolute
  frameTableOffset: 48, // u64, absolute
  compressionType: 56, // u32
  profilingConfig: 60, // u32
} as const;

/** The Python version profpack writes into the header (the version whose format it follows). */
export const WRITER_PYTHON_VERSION = [3, 15, 2] as const;

export const Compression = { None: 0, Zstd: 1 } as const;
/** CPython writes level 5, streamed as one frame with no content size or checksum. */
export const ZSTD_LEVEL = 5;
/** CPython refuses to decompress a sample region beyond 1 GiB. */
export const ZSTD_MAX_DECOMPRESSED = 1 << 30;

/** profiling_config word at header offset 60. */
export const ProfilingConfig = {
  modeMask: 0x7, // bits 0-2: mode + 1; 0 = unknown; 6, 7 = invalid
  featuresKnown: 1 << 3,
  featuresShift: 4, // bits 4-8
  featuresMask: 0x1f,
} as const;

export const ProfilingMode = { Wall: 0, Cpu: 1, Gil: 2, All: 3, Exception: 4 } as const;
export const MAX_PROFILING_MODE = 4;
/** CPython's names of the profiling modes, indexed by ProfilingMode value. */
export const PROFILING_MODE_NAMES = ['wall', 'cpu', 'gil', 'all', 'exception'] as const;
export type ProfilingModeName = (typeof PROFILING_MODE_NAMES)[number];

/** Capture-feature bits (inside bits 4-8 of the config word). */
export const CaptureFeature = { AllThreads: 1, Native: 2, Gc: 4, Opcodes: 8, Blocking: 16 } as const;
/** CPython's names of the capture features: name i is bit 1 << i. */
export const CAPTURE_FEATURE_NAMES = ['all_threads', 'native', 'gc', 'opcodes', 'blocking'] as const;

/** Every record starts with thread_id u64, interpreter_id u32, encoding u8. */
export const RECORD_PREFIX_SIZE = 13;

export enum RecordKind {
  Repeat = 0,
  Full = 1,
  Suffix = 2,
  PopPush = 3,
}

/**
 * Records and samples counted by kind: the fields CPython's BinaryReader.get_stats() and
 * BinaryWriter.get_stats() share: ReplayStats extends it (WriterStats, in write/types.ts, repeats them).
 */
export interface RecordCounts {
  repeatRecords: number;
  repeatSamples: number;
  fullRecords: number;
  suffixRecords: number;
  popPushRecords: number;
  totalRecords: number;
  totalSamples: number;
}

/** Status byte of a sample (bits 6-7 unused but preserved). */
export { ThreadStatus } from '../profile/index';

/** CPython caps a stack at 256 frames: its writer drops the outermost, its reader rejects deeper. */
export const MAX_STACK_DEPTH = 256;
/** Per-thread REPEAT buffer: flushed as one record when used + 11 would exceed it. */
export const REPEAT_BUFFER_SIZE = 16 * 1024;
/** Worst case of one REPEAT entry: a 10-byte delta varint and a status byte. */
export const REPEAT_ENTRY_MAX = 11;
/** CPython's writer buffers 512 KiB before each write (and before each zstd call). */
export const WRITE_BUFFER_SIZE = 512 * 1024;
/**
 * Raw sample records per zstd call (native/tachyon/format.h kZstdInputSize). zstd's output does not depend on how its
 * input is cut between ZSTD_e_continue calls, so this is free to differ from CPython's 512 KiB: each call first brings
 * zstd's ~5 MB of level-5 tables back into the cache the encoding in between evicted (bench/RESULTS.md, branch wsz).
 */
export const ZSTD_INPUT_SIZE = 4 * 1024 * 1024;

/** Opcode byte meaning "no opcode"; real opcodes are 0..254. */
export const NO_OPCODE = 255;
/** Minimum bytes of one frame-table entry (6 one-byte varints + opcode). */
export const MIN_FRAME_ENTRY_SIZE = 7;

/** Optional statistics block, just before the footer. */
export const STATS_BLOCK_SIZE = 56;
export const STATS_BLOCK_LEGACY_SIZE = 32;
export const STATS_SIGNATURE = 'TACHSTAT';
export const STATS_VERSION = 1;
export const StatsBlock = {
  durationSec: 0, // f64
  sampleRate: 8, // f64
  errorRate: 16, // f64 (56-byte block)
  missedSamples: 24, // f64 (56-byte block)
  presenceFlags: 32, // u32: bit0 error_rate, bit1 missed_samples
  reserved: 36, // u32
  // The last 16 bytes of either size: signature (8), version u32, size u32.
  tailSize: 16,
} as const;
export const StatsPresence = { ErrorRate: 1, MissedSamples: 2 } as const;

/** Footer: the last 32 bytes. */
export const FOOTER_SIZE = 32;
export const Footer = {
  stringCount: 0, // u32
  frameCount: 4, // u32
  fileSize: 8, // u64 (not checked by CPython's reader)
  reserved: 16, // 16 bytes of zeros
} as const;

export const U32_MAX = 0xffff_ffff;
export const U64_MAX = (1n << 64n) - 1n;

/** The line `record` prints when stacks reached MAX_STACK_DEPTH (V8's sampler or the writer cut them). */
export function stacksAtCapNote(samples: number): string {
  const n = samples.toLocaleString('en');
  const what = `${n} sample${samples === 1 ? '' : 's'} reached Tachyon's ${MAX_STACK_DEPTH}-frame cap (CPython's)`;
  return `${what}: deeper stacks keep their innermost ${MAX_STACK_DEPTH} frames`;
}
