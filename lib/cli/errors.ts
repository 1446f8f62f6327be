/**
 * How the profpack command reports user errors: one line with the code and
 * the message on stderr, exit status 2, no stack trace.
 */
import { isProfpackError } from '../errors';

/** Exit status of a user error (bad file, bad arguments). */
export const EXIT_USER_ERROR = 2;

/** An error the command reports as a user error, with its code. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The one line a user error prints; other errors are bugs and keep their stack. */
export function userErrorLine(err: unknown): string | null {
  if (err instanceof CliError || isProfpackError(err)) return `profpack: ${String((err as { code: string }).code)}: ${(err as Error).message}`;
  return null;
}
