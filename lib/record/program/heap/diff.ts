/**
 * What changed between two polls of V8's sampling heap profile. V8 keeps a
 * sample for each sampled object while it lives and numbers samples in
 * allocation order (`ordinal`, from 1 per sampling session, one per sampled
 * object), so: an ordinal first seen is an allocation, an ordinal seen before
 * and missing now is a free, and an ordinal never seen at all (a gap below the
 * newest) is an object sampled and collected between two polls.
 */

/** The sampled objects alive at a poll. */
export interface LiveSamples {
  /** Ascending. */
  ordinals: Uint32Array;
  /** The highest ordinal ever seen (0 before the first poll). */
  maxOrdinal: number;
}

export const NO_SAMPLES: LiveSamples = { ordinals: new Uint32Array(0), maxOrdinal: 0 };

export interface SampleDiff {
  /** Indices into the poll's samples of the objects first seen, in ascending ordinal order. */
  born: Uint32Array;
  /** Ordinals alive before and gone now, ascending. */
  freed: Uint32Array;
  /** Ordinals used up since the previous poll by objects that were never seen alive. */
  shortLived: number;
  live: LiveSamples;
}

/** Index packing below 2^53: ordinal · 2^21 + index sorts by ordinal with the typed array's own numeric sort. */
const PACKED_INDEX_SPAN = 2 ** 21;

/** Indices of `ordinals` in ascending ordinal order. */
function orderByOrdinal(ordinals: Uint32Array): Uint32Array {
  const n = ordinals.length;
  const order = new Uint32Array(n);
  if (n < PACKED_INDEX_SPAN) {
    const packed = new Float64Array(n);
    for (let i = 0; i < n; i++) packed[i] = ordinals[i]! * PACKED_INDEX_SPAN + i;
    packed.sort();
    for (let i = 0; i < n; i++) order[i] = packed[i]! % PACKED_INDEX_SPAN;
  } else {
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => ordinals[a]! - ordinals[b]!);
  }
  return order;
}

/**
 * Compares this poll's sample ordinals (any order) with the previous poll's live set. `collected`: ordinals born
 * and collected since the previous poll that were seen all the same (a GC prologue's capture, native/heap/): not
 * short-lived, and they may be the newest.
 */
export function diffSamples(
  before: LiveSamples,
  ordinals: Uint32Array,
  collected: Uint32Array = new Uint32Array(0),
): SampleDiff {
  const order = orderByOrdinal(ordinals);
  const n = order.length;
  const live = new Uint32Array(n);
  const born = new Uint32Array(n);
  const freed = new Uint32Array(before.ordinals.length);
  let bornCount = 0;
  let freedCount = 0;
  let liveCount = 0;
  let j = 0;
  const prev = before.ordinals;
  for (let k = 0; k < n; k++) {
    const index = order[k]!;
    const ordinal = ordinals[index]!;
    // A repeated ordinal (never seen from V8) counts once.
    if (liveCount > 0 && live[liveCount - 1] === ordinal) continue;
    while (j < prev.length && prev[j]! < ordinal) freed[freedCount++] = prev[j++]!;
    if (j < prev.length && prev[j] === ordinal) j++;
    else born[bornCount++] = index;
    live[liveCount++] = ordinal;
  }
  while (j < prev.length) freed[freedCount++] = prev[j++]!;
  let maxOrdinal = Math.max(before.maxOrdinal, liveCount > 0 ? live[liveCount - 1]! : 0);
  for (const ordinal of collected) maxOrdinal = Math.max(maxOrdinal, ordinal);
  // Born objects all have ordinals above the previous maximum (V8 numbers in allocation order).
  const shortLived = Math.max(0, maxOrdinal - before.maxOrdinal - bornCount - collected.length);
  return {
    born: born.slice(0, bornCount),
    freed: freed.slice(0, freedCount),
    shortLived,
    live: { ordinals: live.slice(0, liveCount), maxOrdinal },
  };
}
