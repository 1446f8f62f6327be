/**
 * One pass over a heap trace's events with the live set kept: each question
 * (heap profiles, leak suspects, the heap flame page, Parquet rows) is a set
 * of handlers on allocations, frees and polls. A poll is complete when the
 * events move to a later time (its 'alloc' batch comes before its 'free'
 * batch), so `poll` sees the live set as it was at that poll.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { LiveSet } from './live-set';
import { NO_HEAP_STACK, type HeapEventBatch, type HeapTraceSource } from '../profile/index';

export interface ReplayHandlers {
  /** An object entered the live set at `timeUs` (its poll, or its first poll for an inherited object). */
  alloc?(live: LiveSet, slot: number, timeUs: number, inherited: boolean): void;
  /** An object left it at the poll at `timeUs`; its slot's columns are still readable. */
  free?(live: LiveSet, slot: number, timeUs: number): void;
  /** Sampled objects born and dead between the polls ending at `timeUs` (no stack or size known). */
  shortLived?(count: number, thread: number, timeUs: number): void;
  /** A poll is complete: the live set is as it was at `timeUs`. */
  poll?(live: LiveSet, timeUs: number): void;
}

export interface ReplaySummary {
  live: LiveSet;
  polls: number;
  allocations: number;
  frees: number;
  /** Frees that named no live object (a file that starts mid-recording without its live-at-start section). */
  unmatchedFrees: number;
  shortLived: number;
  firstUs: number;
  lastUs: number;
}

function outOfOrder(timeUs: number, lastUs: number): ProfpackError {
  return new ProfpackError(`heap trace: a batch at ${timeUs} µs follows one at ${lastUs} µs`, {
    code: ErrorCode.CONVERT_BAD_INPUT,
    expected: 'heap event batches in time order',
  });
}

/** `live`: carried on from an earlier replay (the previous rotated file of the same process, same thread numbering). */
/** A batch naming a thread or stack its source does not have: a damaged file, refused before it is used. */
function checkIds(trace: HeapTraceSource, batch: HeapEventBatch): void {
  if (!(batch.thread < trace.threads.length))
    throw new ProfpackError(
      `heap trace: a batch names thread ${batch.thread}, but the trace has ${trace.threads.length}`,
      {
        code: ErrorCode.CONVERT_BAD_INPUT,
        expected: `a thread index below ${trace.threads.length}`,
      },
    );
  if (batch.kind === 'free') return;
  const size = trace.stacks.size;
  for (let i = 0; i < batch.stackIds.length; i++) {
    const id = batch.stackIds[i]!;
    if (id >= size && id !== NO_HEAP_STACK)
      throw new ProfpackError(`heap trace: an allocation names stack ${id}, but the trace has ${size}`, {
        code: ErrorCode.CONVERT_BAD_INPUT,
        expected: `a stack id below ${size}`,
      });
  }
}

export function replayHeapTrace(
  trace: HeapTraceSource,
  handlers: ReplayHandlers,
  live = new LiveSet(trace.meta.intervalBytes),
): ReplaySummary {
  const summary: ReplaySummary = {
    live,
    polls: 0,
    allocations: 0,
    frees: 0,
    unmatchedFrees: 0,
    shortLived: 0,
    firstUs: Number.NaN,
    lastUs: Number.NaN,
  };
  let pollUs = Number.NaN;
  /**
   * Per thread and ordinal space (2 × thread, + 1 external), the highest ordinal this replay has seen enter the live
   * set (V8 and the external sampler number objects in order).
   */
  const seenUpTo = new Map<number, number>();
  const see = (space: number, ordinal: number): void => {
    if (!(ordinal <= (seenUpTo.get(space) ?? 0))) seenUpTo.set(space, ordinal);
  };
  const endPoll = (): void => {
    if (Number.isNaN(pollUs)) return;
    summary.polls++;
    handlers.poll?.(live, pollUs);
  };
  const at = (timeUs: number): void => {
    if (timeUs === pollUs) return;
    if (timeUs < pollUs) throw outOfOrder(timeUs, pollUs);
    endPoll();
    pollUs = timeUs;
    if (Number.isNaN(summary.firstUs)) summary.firstUs = timeUs;
    summary.lastUs = timeUs;
  };
  for (const batch of trace.events()) {
    checkIds(trace, batch);
    // The query's bounds, before the batch's objects join the live set (a free batch adds none).
    live.budget.admit(batch.kind === 'free' ? 0 : batch.ordinals.length, batch.ordinals.length);
    const external = batch.external === true;
    const space = batch.thread * 2 + (external ? 1 : 0);
    if (batch.kind === 'live') {
      // Objects a file inherits are live at its start; within concatenated files, at the poll before it.
      if (Number.isNaN(pollUs)) at(trace.meta.startTimeUs);
      const seen = seenUpTo.get(space) ?? 0;
      for (let i = 0; i < batch.ordinals.length; i++) {
        // A rotated file read after its predecessor inherits objects this replay already holds; one it saw
        // allocated and no longer holds was freed by a poll already read (a file read out of its place, after
        // that poll: its objects must not live twice).
        if (live.has(batch.thread, batch.ordinals[i]!, external) || batch.ordinals[i]! <= seen) continue;
        see(space, batch.ordinals[i]!);
        const slot = live.add(
          batch.thread,
          batch.ordinals[i]!,
          batch.sizes[i]!,
          batch.stackIds[i]!,
          batch.allocTimesUs[i]!,
          external,
        );
        handlers.alloc?.(live, slot, batch.allocTimesUs[i]!, true);
      }
      continue;
    }
    at(batch.timeUs);
    if (batch.kind === 'alloc') {
      for (let i = 0; i < batch.ordinals.length; i++) {
        see(space, batch.ordinals[i]!);
        const { ordinals, sizes, stackIds, timeUs } = batch;
        const slot = live.add(batch.thread, ordinals[i]!, sizes[i]!, stackIds[i]!, timeUs, external);
        handlers.alloc?.(live, slot, batch.timeUs, false);
      }
      summary.allocations += batch.ordinals.length;
      if (batch.shortLived > 0) {
        summary.shortLived += batch.shortLived;
        handlers.shortLived?.(batch.shortLived, batch.thread, batch.timeUs);
      }
    } else {
      for (let i = 0; i < batch.ordinals.length; i++) {
        const slot = live.remove(batch.thread, batch.ordinals[i]!, external);
        if (slot < 0) {
          summary.unmatchedFrees++;
          continue;
        }
        summary.frees++;
        handlers.free?.(live, slot, batch.timeUs);
      }
    }
  }
  endPoll();
  return summary;
}
