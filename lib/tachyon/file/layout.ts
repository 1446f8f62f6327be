/**
 * The open stage of a version-1 Tachyon file as CPython 3.15.2's BinaryReader performs it
 * (../shared/notes/tachyon-format.md §2, §6, §7, §10): CPython's checks of the header, footer, table
 * offsets, statistics block and footer counts (read by header.ts), in CPython's order and with its
 * messages. Shared by both backends: it only touches the fixed-size parts of the
 * file, through a FileBytes (a JS buffer, or copies out of the native mapping).
 */
import { ErrorCode, ProfpackError, type ErrorCodeValue } from '../../errors';
import {
  FOOTER_SIZE,
  FORMAT_VERSION,
  Footer,
  HEADER_SIZE,
  Header,
  MAGIC,
  MAGIC_SWAPPED,
  MIN_FRAME_ENTRY_SIZE,
  ProfilingConfig,
  STATS_BLOCK_LEGACY_SIZE,
  STATS_BLOCK_SIZE,
} from '../format';
import {
  layoutOf,
  offsetNumber,
  readFooter,
  readHeader,
  readStatsBlock,
  type FileBytes,
  type Layout,
  type StatsValuesRead,
} from './header';

export function openError(code: ErrorCodeValue, message: string, offset?: number, expected?: string): ProfpackError {
  return new ProfpackError(message, { code, offset, expected, details: { stage: 'open' } });
}

function hex8(value: number): string {
  return '0x' + value.toString(16).padStart(8, '0');
}

/** A file whose header is still its writer's zero placeholder (CPython: "Invalid magic number: 0x00000000"). */
export function notFinalizedError(): ProfpackError {
  return openError(
    ErrorCode.TACHYON_NOT_FINALIZED,
    "Invalid magic number: 0x00000000 (the header is still the writer's zero placeholder" +
      ': the file was never finalized)',
    0,
    'a finalized Tachyon file',
  );
}

/** Whether `bytes` begins with a writer's zero placeholder header: a Tachyon file that was never finalized. */
export function hasPlaceholderHeader(bytes: Uint8Array): boolean {
  return bytes.length >= HEADER_SIZE && bytes.subarray(0, HEADER_SIZE).every((b) => b === 0);
}

/** The shell command that rebuilds `path` from its journal (the path quoted when a shell would split it). */
export function recoverCommand(path: string): string {
  return `profpack recover ${/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`}`;
}

/**
 * A file that was never finalized (its writer was killed or failed) says how to get its samples back: `recover`
 * rebuilds it from the journal beside it.
 */
export function withRecoverHint(err: unknown, path: string): unknown {
  if (!(err instanceof ProfpackError) || err.code !== ErrorCode.TACHYON_NOT_FINALIZED) return err;
  return new ProfpackError(
    // CPython's own words first (its reader says only this), then what to do.
    `Invalid magic number: 0x00000000: ${path} was never finalized (its writer was killed or failed): ` +
      `run \`${recoverCommand(path)}\` ` +
      '(recover() in the library) to rebuild it from its journal',
    { code: err.code, offset: err.offset, expected: err.expected, details: err.details, cause: err },
  );
}

/**
 * Header, footer, offsets and stats block, with CPython 3.15.2's checks in its
 * order. Table parsing and zstd validation follow in the caller.
 */
export function parseLayout(source: FileBytes): Layout {
  const size = source.size;
  if (size < HEADER_SIZE)
    throw openError(ErrorCode.TACHYON_TOO_SMALL, 'File too small for header', 0, `at least ${HEADER_SIZE} bytes`);
  const header = readHeader(source.read(0, HEADER_SIZE));
  const magicLE = header.magic;
  if (magicLE === 0) {
    throw notFinalizedError();
  } else if (magicLE !== MAGIC && magicLE !== MAGIC_SWAPPED) {
    throw openError(
      ErrorCode.TACHYON_BAD_MAGIC,
      `Invalid magic number: ${hex8(magicLE)}`,
      0,
      `${hex8(MAGIC)} in either byte order`,
    );
  }
  const littleEndian = header.littleEndian;
  const version = header.version;
  const [pyMajor, pyMinor, pyMicro] = header.pythonVersion;
  if (version !== FORMAT_VERSION) {
    if (version > FORMAT_VERSION) {
      throw openError(
        ErrorCode.TACHYON_FUTURE_VERSION,
        `Binary file was created with Python ${pyMajor}.${pyMinor}.${pyMicro} (format version ${version}), ` +
          `but this is Python 3.15.2 (format version 1)`,
        Header.version,
        'format version 1',
      );
    }
    throw openError(
      ErrorCode.TACHYON_UNSUPPORTED_VERSION,
      `Unsupported format version ${version} (this reader supports version 1)`,
      Header.version,
      'format version 1',
    );
  }
  const modeBits = header.profilingConfig & ProfilingConfig.modeMask;
  if (modeBits > 5) {
    throw openError(
      ErrorCode.TACHYON_BAD_MODE,
      `Invalid profiling mode in header: ${modeBits}`,
      Header.profilingConfig,
      'mode bits 0..5',
    );
  }
  const stringTableOffsetBig = header.stringTableOffset;
  const frameTableOffsetBig = header.frameTableOffset;
  const footer = readFooter(source, littleEndian);

  const bigSize = BigInt(size);
  if (stringTableOffsetBig > bigSize) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_PAST_END,
      `Invalid string table offset: ${stringTableOffsetBig} exceeds file size ${size}`,
      Header.stringTableOffset,
    );
  }
  if (frameTableOffsetBig > bigSize) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_PAST_END,
      `Invalid frame table offset: ${frameTableOffsetBig} exceeds file size ${size}`,
      Header.frameTableOffset,
    );
  }
  const stringTableOffset = offsetNumber(stringTableOffsetBig);
  const frameTableOffset = offsetNumber(frameTableOffsetBig);
  if (stringTableOffset < HEADER_SIZE) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_BEFORE_DATA,
      `Invalid string table offset: ${stringTableOffset} is before data section`,
      Header.stringTableOffset,
    );
  }
  if (frameTableOffset < HEADER_SIZE) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSET_BEFORE_DATA,
      `Invalid frame table offset: ${frameTableOffset} is before data section`,
      Header.frameTableOffset,
    );
  }
  if (stringTableOffset > frameTableOffset) {
    throw openError(
      ErrorCode.TACHYON_TABLE_OFFSETS_ORDER,
      `Invalid table offsets: string table (${stringTableOffset}) is after frame table (${frameTableOffset})`,
      Header.stringTableOffset,
    );
  }

  return layoutOf(header, footer, parseStats(source, littleEndian), size);
}

/**
 * Footer counts against the bytes that remain, before anything is allocated
 * (CPython checks them after decompressing the sample region).
 */
export function checkTableCounts(layout: Layout): void {
  const { info, fileSize, stringTableOffset, frameTableOffset } = layout;
  const maxStrings = fileSize - stringTableOffset;
  if (info.stringCount > maxStrings) {
    throw openError(
      ErrorCode.TACHYON_STRING_COUNT,
      `Invalid string count ${info.stringCount} exceeds maximum possible ${maxStrings}`,
      fileSize - FOOTER_SIZE + Footer.stringCount,
    );
  }
  const maxFrames = Math.floor((fileSize - frameTableOffset) / MIN_FRAME_ENTRY_SIZE);
  if (info.frameCount > maxFrames) {
    throw openError(
      ErrorCode.TACHYON_FRAME_COUNT,
      `Invalid frame count ${info.frameCount} exceeds maximum possible ${maxFrames}`,
      fileSize - FOOTER_SIZE + Footer.frameCount,
    );
  }
}

/** Version 1's statistics block with CPython's checks (a block may even overlap the header). */
function parseStats(source: FileBytes, littleEndian: boolean): StatsValuesRead | null {
  const size = source.size;
  const stats = readStatsBlock(source, littleEndian, 0, (blockSize, at) => {
    // CPython: 32 <= size <= file_size - 32.
    if (blockSize < STATS_BLOCK_LEGACY_SIZE || blockSize > size - FOOTER_SIZE) {
      throw openError(
        ErrorCode.TACHYON_STATS_SIZE,
        'Invalid profiling statistics size',
        at,
        `${STATS_BLOCK_SIZE} or ${STATS_BLOCK_LEGACY_SIZE}`,
      );
    }
  });
  if (stats === null) return null;
  const { durationSec, sampleRate, errorRate, missedSamples } = stats;
  const finiteNonNegative = (v: number | null): boolean => v !== null && Number.isFinite(v) && v >= 0;
  if (
    !finiteNonNegative(durationSec) ||
    !finiteNonNegative(sampleRate) ||
    (errorRate !== null && !finiteNonNegative(errorRate)) ||
    (missedSamples !== null && !Number.isFinite(missedSamples))
  ) {
    throw openError(
      ErrorCode.TACHYON_STATS_VALUES,
      'Invalid profiling statistics values',
      size - FOOTER_SIZE - stats.size,
      'finite values, rates and duration >= 0',
    );
  }
  return stats;
}
