/** Whether a recording samples JS stacks: `cpu: false` is a heap-only recording (record --no-cpu). */
import { ErrorCode, ProfpackError } from '../../errors';

/**
 * `cpu` checked (default true): false needs the heap, the only thing then recorded, and excludes `workers`, whose
 * threads have only CPU samples to give.
 */
export function checkCpu(cpu: unknown, heap: boolean, workers: boolean): boolean {
  const value = cpu ?? true;
  if (typeof value !== 'boolean')
    throw new ProfpackError(`cpu must be true or false, not a value of type ${typeof value}`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'a boolean',
    });
  if (!value && !heap)
    throw new ProfpackError('cpu: false records the heap alone: it needs heap', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'heap with cpu: false',
    });
  if (!value && workers)
    throw new ProfpackError("workers records worker threads' CPU samples: it needs cpu", {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'cpu with workers',
    });
  return value;
}
