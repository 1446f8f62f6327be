/**
 * recover()'s check of the version-2 file it built, before renaming it into
 * place: read as ProfileReader and openHeapTrace read it (every sample's
 * frames against the frame table, the header's counts, every heap event), but
 * by ranges of the file, so a region of GBs is never held (ProfileReader keeps
 * a version-2 file in memory).
 */
import type { FileBytes } from '../file/index';
import { checkFrameIndex, heapTraceOf, readProfileV2, v2Frames, type V2ReadOptions } from '../read/index';

/** Throws what a reader of the file would throw; returns its sample count. */
export function verifyV2File(
  source: FileBytes,
  options: Pick<V2ReadOptions, 'backend' | 'maxDecompressedSize'>,
): number {
  const profile = readProfileV2(source, { ...options, keepDecompressedLimit: 0 });
  const table = v2Frames(profile);
  let delivered = 0;
  const samples = profile.forEachSample((_thread, _interpreter, _time, _status, stack, depth) => {
    for (let k = 0; k < depth; k++) checkFrameIndex(table, stack[k]!, delivered);
    delivered++;
  });
  const heap = heapTraceOf(profile);
  if (heap !== null) for (const batch of heap.events()) void batch;
  return samples;
}
