/**
 * ProfileWriter's checks of a sample's shape before anything of it is interned or encoded: writeSample's
 * interpreters / threads / frames, writeStack's frame ids and writeStacks' tick arrays (staged into reused scratch).
 * Kept apart from writer.ts, which holds the writer's state and calls: these only refuse bad input, and a refused
 * sample leaves no bytes behind.
 */
import { firstBadId, firstIdAtOrAbove, invalid, statusByte, u32Value, u64Halves } from './arguments';
import { STAGED_HEADER, TickRecord, unknownFrameId } from './engines/index';
import type { FrameInfo, SampleInterpreterInfo, StackTick } from './types';

/** writeSample's staging: STAGED_HEADER words per thread, then its kept frame ids (the engines' staged layout). */
export class SampleStaging {
  words = new Uint32Array(4096);
  /** Words staged by the last stageSampleHeaders. */
  count = 0;
  /** Threads of the last sample deeper than the file's stack limit. */
  cut = 0;
  /** Threads of the last sample. */
  threads = 0;
  /**
   * Each thread's frameInfo as read by the checks (the first `threads`), so that pass 2 interns the arrays checked here
   * (a getter could answer another one) without walking the interpreters again. Held until the next sample.
   */
  readonly frames: (readonly FrameInfo[])[] = [];
  /** Holes seen by touchFrames in the last sample (kept so that its loads are not dead code). */
  holesSeen = 0;
}

/**
 * writeSample's pass 1: ids and shapes are checked, so nothing is interned for a sample refused on them, and each
 * thread's header (thread id low and high halves, interpreter id, timestamp low and high, status byte, kept depth) is
 * staged where its frame ids will follow, so each id and status is converted once. Uses halves[0..1].
 */
export function stageSampleHeaders(
  interpreters: readonly SampleInterpreterInfo[],
  staging: SampleStaging,
  h: Uint32Array,
  maxDepth: number,
  tsHi: number,
  tsLo: number,
): void {
  let w = staging.words;
  let at = 0;
  let cut = 0;
  let holes = 0;
  let threads = 0;
  const staged = staging.frames;
  for (const interp of interpreters) {
    if (interp === null || typeof interp !== 'object')
      throw invalid('an interpreter must be an object', '{ interpreterId, threads }');
    const interpreterId = u32Value(interp.interpreterId, 'interpreterId');
    if (!Array.isArray(interp.threads)) throw invalid('interpreter.threads must be an array', 'SampleThreadInfo[]');
    for (const thread of interp.threads) {
      if (thread === null || typeof thread !== 'object')
        throw invalid('a thread must be an object', '{ threadId, status, frameInfo }');
      u64Halves(thread.threadId, 'threadId', h, 0);
      const status = statusByte(thread.status);
      const frames = thread.frameInfo;
      if (!Array.isArray(frames)) throw invalid('thread.frameInfo must be an array', 'FrameInfo[]');
      const depth = frames.length < maxDepth ? frames.length : maxDepth;
      if (frames.length > maxDepth) cut++;
      if (at + STAGED_HEADER + depth > w.length) {
        const grown = new Uint32Array(Math.max(at + STAGED_HEADER + depth, 2 * w.length));
        grown.set(w.subarray(0, at));
        staging.words = w = grown;
      }
      w[at] = h[1]!;
      w[at + 1] = h[0]!;
      w[at + 2] = interpreterId;
      w[at + 3] = tsLo;
      w[at + 4] = tsHi;
      w[at + 5] = status;
      w[at + 6] = depth;
      holes += touchFrames(frames, depth);
      if (threads < staged.length) staged[threads] = frames;
      else staged.push(frames); // packed: filled in order
      threads++;
      at += STAGED_HEADER + depth;
    }
  }
  staging.count = at;
  staging.cut = cut;
  staging.threads = threads;
  staging.holesSeen = holes;
}

/**
 * Reads one element per cache line of a thread's kept frames, bottom first (where pass 2 starts), and counts the holes:
 * a software prefetch. A caller's frame arrays are fresh for each sample and usually out of cache; these loads are
 * independent of each other and issued for all the sample's threads in this short pass, so their misses overlap,
 * where pass 2's comparison loop meets them one frame at a time (bench/RESULTS.md, branch wsample2: ~20 % of
 * writeSample's CPU).
 */
function touchFrames(frames: readonly unknown[], depth: number): number {
  let holes = 0;
  for (let k = depth - 1; k >= 0; k -= 8) if (frames[k] === undefined) holes++;
  return holes;
}

/** writeStack's frame ids: the first `depth` must each have been returned by internFrame (below `count`). */
export function checkFrameIds(frameIds: Uint32Array | readonly number[], depth: number, count: number): void {
  const bad =
    frameIds instanceof Uint32Array ? firstIdAtOrAbove(frameIds, depth, count) : firstBadId(frameIds, depth, count);
  if (bad >= 0) throw unknownFrameId(frameIds, bad, count);
}

/**
 * Checks a tick's arrays and stages its thread ids (as low, high u32 halves), interpreter ids, statuses and ends
 * into `record`, or into a larger one when it is too small; returns the one used. A caller's small fresh array
 * (64 bytes or less lives on V8's heap) would be moved out of the heap by the addon on every tick: the record is the
 * writer's. Its header (timestamp, count, frame count) is the caller's to fill. Uses halves[0..1].
 */
export function stageTick(tick: StackTick, record: TickRecord, h: Uint32Array): TickRecord {
  if (tick === null || typeof tick !== 'object')
    throw invalid('writeStacks expects a tick object', '{ threadIds, interpreterIds, statuses, stackEnds, frameIds }');
  const { threadIds, interpreterIds, statuses, stackEnds, frameIds } = tick;
  if (!(stackEnds instanceof Uint32Array) || !(frameIds instanceof Uint32Array))
    throw invalid('stackEnds and frameIds must be Uint32Arrays', 'Uint32Array');
  const count = stackEnds.length;
  if (
    threadIds.length !== count ||
    statuses.length !== count ||
    (typeof interpreterIds !== 'number' && interpreterIds.length !== count)
  ) {
    throw invalid(
      `a tick of ${count} stacks needs ${count} thread ids, statuses and interpreter ids`,
      'arrays of one length',
    );
  }
  if (record.capacity < count) record = new TickRecord(2 * count);
  const { tids, interps, statuses: st, ends } = record;
  const single = typeof interpreterIds === 'number' ? u32Value(interpreterIds, 'interpreterId') : -1;
  for (let k = 0; k < count; k++) {
    u64Halves(threadIds[k], 'threadId', h, 0);
    tids[2 * k] = h[1]!;
    tids[2 * k + 1] = h[0]!;
    interps[k] = single >= 0 ? single : u32Value((interpreterIds as ArrayLike<number>)[k], 'interpreterId');
    st[k] = statuses instanceof Uint8Array ? statuses[k]! : statusByte(statuses[k]);
    ends[k] = stackEnds[k]!;
  }
  record.words[2] = count;
  record.ids = frameIds;
  return record;
}
