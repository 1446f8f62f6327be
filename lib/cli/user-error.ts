/**
 * User errors end the CLI with exit code 2 and one line on stderr (the
 * ProfpackError code and message), never a stack trace. Anything else is a
 * bug and keeps its stack.
 */
import { isProfpackError } from '../errors';

export const USER_ERROR_EXIT = 2;

/** One line, whatever a cause put into the message (a require stack, say). */
function firstLine(message: string): string {
  const end = message.indexOf('\n');
  return end < 0 ? message : message.slice(0, end);
}

export function reportUserError(err: unknown): never {
  if (isProfpackError(err)) {
    process.stderr.write(`profpack: ${err.code}: ${firstLine(err.message)}\n`);
    process.exit(USER_ERROR_EXIT);
  }
  const sys = err as NodeJS.ErrnoException;
  if (sys !== null && typeof sys === 'object' && typeof sys.code === 'string' && typeof sys.syscall === 'string') {
    process.stderr.write(`profpack: ${firstLine(sys.message)}\n`);
    process.exit(USER_ERROR_EXIT);
  }
  throw err;
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
