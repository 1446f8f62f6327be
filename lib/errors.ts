/**
 * The one error class of profpack. Both backends throw it with the same codes:
 * the native addon receives this constructor at load time (see backend.ts).
 */

/** Stable error codes. Each concern adds its own here, in one place. */
export const ErrorCode = {
  // backend
  NATIVE_UNAVAILABLE: 'ERR_NATIVE_UNAVAILABLE',
  INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT',
  // varint
  VARINT_TRUNCATED: 'ERR_VARINT_TRUNCATED',
  VARINT_OVERFLOW: 'ERR_VARINT_OVERFLOW',
  SLOT_OVERFLOW: 'ERR_SLOT_OVERFLOW',
  SLOT_OUT_OF_RANGE: 'ERR_SLOT_OUT_OF_RANGE',
  // convert
  CONVERT_BAD_INPUT: 'ERR_CONVERT_BAD_INPUT',
  CONVERT_UNKNOWN_FORMAT: 'ERR_CONVERT_UNKNOWN_FORMAT',
  RECORD_FAILED: 'ERR_RECORD_FAILED',
  // svb
  SVB_TRUNCATED: 'ERR_SVB_TRUNCATED',
  // pctable
  PCTABLE_TRUNCATED: 'ERR_PCTABLE_TRUNCATED',
  PCTABLE_VARINT_OVERFLOW: 'ERR_PCTABLE_VARINT_OVERFLOW',
  PCTABLE_EMPTY_RUN: 'ERR_PCTABLE_EMPTY_RUN',
  PCTABLE_PC_OVERFLOW: 'ERR_PCTABLE_PC_OVERFLOW',
  PCTABLE_SIZE_MISMATCH: 'ERR_PCTABLE_SIZE_MISMATCH',
  PCTABLE_BAD_OFFSET: 'ERR_PCTABLE_BAD_OFFSET',
  PCTABLE_BAD_LENGTH_CODE: 'ERR_PCTABLE_BAD_LENGTH_CODE',
  PCTABLE_BAD_PCS: 'ERR_PCTABLE_BAD_PCS',
  PCTABLE_PC_OUT_OF_RANGE: 'ERR_PCTABLE_PC_OUT_OF_RANGE',
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode] | (string & {});

export interface ProfpackErrorOptions {
  code: ErrorCodeValue;
  /** Byte offset in the input where the problem is, when one applies. */
  offset?: number | bigint;
  /** What the decoder expected to find there. */
  expected?: string;
  cause?: unknown;
  /** Extra facts for callers (e.g. samples delivered before a replay error). */
  details?: Record<string, unknown>;
}

export class ProfpackError extends Error {
  readonly code: ErrorCodeValue;
  readonly offset: number | undefined;
  readonly expected: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: ProfpackErrorOptions) {
    const offset = options.offset === undefined ? undefined : Number(options.offset);
    super(offset === undefined ? message : `${message} (at byte ${offset})`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProfpackError';
    this.code = options.code;
    this.offset = offset;
    this.expected = options.expected;
    this.details = options.details;
  }
}

/** True for a ProfpackError, also one from another copy of the module. */
export function isProfpackError(value: unknown): value is ProfpackError {
  return value instanceof ProfpackError || (value instanceof Error && value.name === 'ProfpackError' && typeof (value as ProfpackError).code === 'string');
}

export function invalidArgument(message: string, expected?: string): ProfpackError {
  return new ProfpackError(message, { code: ErrorCode.INVALID_ARGUMENT, expected });
}
