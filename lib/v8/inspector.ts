/**
 * One call on an in-process inspector session (`node:inspector`'s Session), answered before it returns: Node's
 * in-process session answers synchronously on the session's own thread, which the CPU and heap samplers rely on
 * to poll without yielding to the program.
 */
import type * as inspector from 'node:inspector';
import { ErrorCode, ProfpackError } from '../errors';

export function postSync<T = unknown>(session: inspector.Session, method: string, params?: object): T {
  let failure: Error | null = null;
  let answered = false;
  let result: T | undefined;
  session.post(method, params, (err: Error | null, res?: object) => {
    failure = err;
    result = res as T | undefined;
    answered = true;
  });
  if (!answered)
    throw new ProfpackError(`inspector ${method} did not answer synchronously`, { code: ErrorCode.RECORD_FAILED });
  if (failure !== null)
    throw new ProfpackError(`inspector ${method} failed: ${(failure as Error).message}`, {
      code: ErrorCode.RECORD_FAILED,
      cause: failure,
    });
  return result as T;
}
