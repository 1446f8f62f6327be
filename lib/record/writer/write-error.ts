/** What `record` says when its file cannot be written (RecordingHost stops the recording on it). */
import { ErrorCode, ProfpackError } from '../../errors';
import { recoverCommand } from '../../tachyon/index';

/** The OS's name for what failed (ENOSPC, EIO, EACCES…), found along a write error's causes. */
function osCodeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    const { code, details, message } = e as { code?: unknown; details?: Record<string, unknown>; message?: unknown };
    if (typeof details?.syscallError === 'string') return details.syscallError;
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return code;
    // The native writer says it in its message: "…: ENOSPC: No space left on device".
    const named = typeof message === 'string' ? /\b(E[A-Z0-9]{2,}): /.exec(message) : null;
    if (named !== null) return named[1];
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What `record` says when its file cannot be written: the cause, what is kept, and the command that recovers it. */
export function recordWriteError(
  err: ProfpackError,
  file: string,
  flushed: boolean,
  earlierFiles: boolean,
): ProfpackError {
  const root = err.code === ErrorCode.TACHYON_WRITE_BROKEN && err.cause instanceof Error ? err.cause : err;
  const osCode = osCodeOf(err);
  const recover = flushed ? recoverCommand(file) : undefined;
  const kept =
    recover !== undefined
      ? `the file and its journal are kept: \`${recover}\` gives back every sample flushed before`
      : `nothing had been flushed to it, it is removed${earlierFiles ? ' (the earlier rotated files are whole)' : ''}`;
  return new ProfpackError(
    `cannot write ${file}${osCode === undefined ? '' : ` (${osCode})`}: ${root.message}; recording stopped, ${kept}`,
    {
      code: ErrorCode.TACHYON_WRITE_IO,
      expected: 'a file system with room for the profile',
      cause: err,
      details: { path: file, osCode, recover, flushed },
    },
  );
}
