/** A HeapEventSink for tests: every event kept, sizes summed by the functions on each allocation's stack. */
import type {
  HeapAllocationBatch,
  HeapEventSink,
  HeapFreeBatch,
  HeapRecordingInfo,
} from '../../../../lib/record/wire/index';
import { unsampledWeight } from '../../../../lib/profile/index';

export interface CollectedAllocation {
  size: number;
  /** Function names on the stack, innermost first. */
  functions: string[];
  timeUs: number;
}

export class HeapCollector implements HeapEventSink {
  info: HeapRecordingInfo | undefined;
  readonly allocated = new Map<number, CollectedAllocation>();
  readonly freed = new Map<number, number>();
  shortLived = 0;
  allocationBatches = 0;
  /** Ordinals ascend within a batch and across a thread's batches. */
  ordered = true;
  private lastOrdinal = 0;

  begin(info: HeapRecordingInfo): void {
    this.info = info;
  }

  allocations(batch: HeapAllocationBatch): void {
    this.allocationBatches++;
    this.shortLived += batch.shortLived;
    for (let i = 0; i < batch.ordinals.length; i++) {
      const ordinal = batch.ordinals[i]!;
      if (ordinal <= this.lastOrdinal) this.ordered = false;
      this.lastOrdinal = ordinal;
      this.allocated.set(ordinal, {
        size: batch.sizes[i]!,
        functions: batch.stacks.callFramesOf(batch.stackIds[i]!).map((cf) => cf.functionName),
        timeUs: batch.timeUs,
      });
    }
  }

  frees(batch: HeapFreeBatch): void {
    for (const ordinal of batch.ordinals) this.freed.set(ordinal, batch.timeUs);
  }

  /**
   * Bytes by the first of `names` found on each allocation's stack (innermost first); `live`: not freed;
   * `unsampled`: each size scaled by 1/p as inuse_space reads it, else the sampled sizes.
   */
  bytesBy(names: readonly string[], live: boolean, unsampled = false): Map<string, number> {
    const interval = this.info?.intervalBytes ?? 0;
    const out = new Map<string, number>([...names, '(other)'].map((n) => [n, 0]));
    for (const [ordinal, a] of this.allocated) {
      if (live && this.freed.has(ordinal)) continue;
      const site = a.functions.find((f) => names.includes(f)) ?? '(other)';
      const bytes = unsampled ? unsampledWeight(a.size, interval).bytes : a.size;
      out.set(site, (out.get(site) ?? 0) + bytes);
    }
    return out;
  }
}
