/**
 * How the profpack command reports user errors (bad file, bad arguments, a
 * file system refusal): one line on stderr, `profpack: CODE: message`, exit
 * status 2, no stack trace. Anything else is a bug and keeps its stack.
 */
import { isProfpackError } from '../errors';

/** Exit status of a user error. */
export const EXIT_USER_ERROR = 2;

/** One line, whatever a cause put into the message (a require stack, say). */
function firstLine(message: string): string {
  const end = message.indexOf('\n');
  return end < 0 ? message : message.slice(0, end);
}

/** The one line a user error prints, or null for an error that is a bug. */
export function userErrorLine(err: unknown): string | null {
  if (isProfpackError(err)) return `profpack: ${err.code}: ${firstLine(err.message)}`;
  const sys = err as NodeJS.ErrnoException;
  if (sys !== null && typeof sys === 'object' && typeof sys.code === 'string' && typeof sys.syscall === 'string') {
    return `profpack: ${firstLine(sys.message)}`;
  }
  return null;
}

/** Ends the process on a user error (one line, exit 2); rethrows anything else. */
export function reportUserError(err: unknown): never {
  const line = userErrorLine(err);
  if (line === null) throw err;
  process.stderr.write(line + '\n');
  process.exit(EXIT_USER_ERROR);
}

/** Wraps a command action so user errors exit 2 with one line. */
export function action<A extends unknown[]>(fn: (...args: A) => void | Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      reportUserError(err);
    }
  };
}
