/**
 * Reader bounds on heap events (docs/memory.md "Limits"), shared by the heap
 * section's decoder (per file) and lib/memory's replay (per query). Alone in
 * its module so that lib/memory takes nothing else from the section's code.
 */
import { ErrorCode, ProfpackError } from '../../../errors';

/**
 * The sampled objects live at once and the events read,
 * per file (the section's decoder) and per query (a replay, over every file it reads). A file or query past one is
 * refused with ERR_V2_LIMIT before the objects are allocated. A real recording stays far below them: 2 Mi live
 * samples are a 32 GiB heap sampled every 16 KiB.
 */
export const HEAP_LIMITS = {
  live: { env: 'PROFPACK_HEAP_MAX_LIVE', fallback: 2 ** 21 },
  events: { env: 'PROFPACK_HEAP_MAX_EVENTS', fallback: 2 ** 27 },
} as const;

export interface HeapReadLimits {
  /** Sampled objects live at once. */
  live: number;
  /** Allocations, frees and inherited objects read. */
  events: number;
}

/** The limits now: each the environment's override (a positive integer) or its default. */
export function heapReadLimits(): HeapReadLimits {
  const read = (l: { env: string; fallback: number }): number => {
    const raw = process.env[l.env];
    if (raw === undefined || raw.trim() === '') return l.fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < 1)
      throw new ProfpackError(`${l.env}=${raw}: not a positive integer`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'a positive integer',
      });
    return value;
  };
  return { live: read(HEAP_LIMITS.live), events: read(HEAP_LIMITS.events) };
}

/** The ERR_V2_LIMIT of a heap bound: `what` would reach `count`, past `limit` (its variable names the override). */
export function heapLimitError(
  what: 'live' | 'events',
  count: number,
  limit: number,
  where: string,
  offset?: number,
): ProfpackError {
  const noun = what === 'live' ? 'sampled objects live at once' : 'heap events';
  return new ProfpackError(
    `${where}: ${count} ${noun}, past the limit of ${limit} (${HEAP_LIMITS[what].env} raises it)`,
    { code: ErrorCode.V2_LIMIT, expected: `at most ${limit} ${noun}`, ...(offset === undefined ? {} : { offset }) },
  );
}

/**
 * One query's running counts against the limits: the live sets it holds (a fleet query keeps one per process)
 * and the events it has read, over every file.
 */
export class HeapQueryBudget {
  liveObjects = 0;
  events = 0;
  constructor(readonly limits: HeapReadLimits = heapReadLimits()) {}

  /** Before a batch of `objects` may join a live set and `events` more are read: throws past a limit. */
  admit(objects: number, events: number): void {
    if (this.liveObjects + objects > this.limits.live)
      throw heapLimitError('live', this.liveObjects + objects, this.limits.live, 'heap query');
    if (this.events + events > this.limits.events)
      throw heapLimitError('events', this.events + events, this.limits.events, 'heap query');
    this.events += events;
  }
}
