/**
 * A recording's ranges and rotation options, checked alike by the library and the CLI (writer/rotation.ts names
 * the rotating files).
 */
import { ErrorCode, ProfpackError } from '../../errors';

export interface RotateOptions {
  /** Close the file and start the next one this often (ms). */
  everyMs: number;
  /** Directory of the files (created if missing). */
  dir: string;
  /** Finished files left on disk at most; older ones are deleted (default: all kept). */
  keep?: number;
  /** File name prefix (default "profile"). */
  prefix?: string;
}

/** One finished file of a rotating recording, as onFile() receives it. */
export interface RotatedFileStats {
  samples: number;
  threads: number;
  /** Span of the file's samples. */
  durationSec: number;
  bytes: number;
  /** 0 for the recording's first file. */
  index: number;
}

export type OnFile = (path: string, stats: RotatedFileStats) => void;

/** onFile as the recording calls it: a throwing callback must not stop the recording. */
export function safeOnFile(onFile: OnFile | undefined): OnFile {
  return (file, stats) => {
    try {
      onFile?.(file, stats);
    } catch (err) {
      process.emitWarning(`profpack: onFile(${file}) threw: ${(err as Error).message}`);
    }
  };
}

/** How often a recording's file is flushed (and its journal written) unless told otherwise. */
export const DEFAULT_FLUSH_INTERVAL_MS = 1000;
/** Node's timers take at most 2^31-1 ms: a longer delay fires after 1 ms (a new file every harvest). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** V8's sampling interval is an int of microseconds. */
export const MAX_INTERVAL_US = 2 ** 31 - 1;

/** `value` (a number of `unit`) within [min, max], or ERR_INVALID_ARGUMENT that names the bound. */
export function checkRange(name: string, value: number, min: number, max: number, unit: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ProfpackError(`${name} must be ${min}..${max} ${unit}, not ${String(value)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: `${min}..${max} ${unit}`,
    });
  }
  return value;
}

/** Checks rotation options (library and CLI alike); returns them with defaults. */
export function checkRotate(options: RotateOptions): Required<RotateOptions> {
  if (options === null || typeof options !== 'object')
    throw new ProfpackError('rotate must be { everyMs, dir, keep? }', { code: ErrorCode.INVALID_ARGUMENT });
  const { everyMs, dir, prefix = 'profile' } = options;
  // null too: Infinity crosses JSON (to the writer process) as null.
  const keep = options.keep ?? Infinity;
  checkRange('rotate.everyMs', everyMs, 1, MAX_TIMER_MS, 'ms');
  if (typeof dir !== 'string' || dir === '')
    throw new ProfpackError('rotate.dir must name a directory', { code: ErrorCode.INVALID_ARGUMENT });
  if (keep !== Infinity && (!Number.isInteger(keep) || keep < 1))
    throw new ProfpackError(`rotate.keep must be an integer ≥ 1, not ${keep}`, { code: ErrorCode.INVALID_ARGUMENT });
  if (!/^[\w.-]+$/.test(prefix))
    throw new ProfpackError(`rotate.prefix must be a plain file name part, not "${prefix}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  return { everyMs, dir, keep, prefix };
}

/** "60s", "5m", "1h", "250ms" or plain milliseconds → ms. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (m === null)
    throw new ProfpackError(`not a duration: "${text}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'e.g. 60s, 5m, 1h, 500ms',
    });
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms']!;
  return checkRange(`duration "${text}"`, Number(m[1]) * unit, 1, MAX_TIMER_MS, 'ms');
}
