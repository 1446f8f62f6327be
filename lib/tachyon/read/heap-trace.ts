/**
 * openHeapTrace: a version-2 file's heap section (docs/format-v2.md §9) as a
 * HeapTraceSource (lib/profile/heap-trace.ts), the interface the heap questions
 * read. The section is decoded one chunk at a time while events() is
 * iterated, never whole; stacks go into the model's StackTable as they are
 * met, over the file's frame table (CPU and heap stacks share its frames).
 */
import { ErrorCode } from '../../errors';
import { readInputFile } from '../../input';
import type {
  ExternalMemorySample,
  ExternalObjectCounts,
  HeapEventBatch,
  HeapTraceMeta,
  HeapTraceSource,
} from '../../profile/index';
// Not lib/profile/index: lib/profile/frames imports lib/tachyon, and this file loads with it.
import { StackTable, ThreadTable, scriptPath, type Frame, type ThreadRef } from '../../profile/index';
import { findRecordedBy, processIdentity } from '../../recorded-by';
import { FORMAT_VERSION } from '../format';
import { hasPlaceholderHeader, notFinalizedError, tachyonVersion, withRecoverHint } from '../file/index';
import { decodeHeapTotals, HeapSectionDecoder, HeapRecordFlag, type HeapTotals } from '../codec/index';
import { v2Frames } from './v2/index';
import { readProfileV2, type V2Profile, type V2ReadOptions } from './v2/index';

export type HeapTraceOptions = Pick<V2ReadOptions, 'backend' | 'maxDecompressedSize'>;

const absent = (v: number | null): number | null => (v === -1 ? null : v);

/** Tachyon's -1 ("no position") as the model's null: lib/profile's normalizeFrame, which cannot be imported here. */
function modelFrame(f: Frame): Frame {
  const { funcname, opcode } = f;
  return {
    // One spelling with the CPU frames (lib/profile's FrameTable): older recordings stored file: URLs.
    filename: scriptPath(f.filename),
    funcname,
    lineno: absent(f.lineno),
    endLineno: absent(f.endLineno),
    column: absent(f.column),
    endColumn: absent(f.endColumn),
    opcode,
  };
}

/** A frame the file's table cannot resolve (its strings are bad): kept as a placeholder so ids still line up. */
const UNRESOLVED: Frame = {
  filename: '',
  funcname: '(unknown)',
  lineno: null,
  endLineno: null,
  column: null,
  endColumn: null,
  opcode: null,
};

/** The file's heap events, or null when it holds none (a version-1 file, or version 2 without a heap section). */
export function openHeapTrace(path: string, options: HeapTraceOptions = {}): HeapTraceSource | null {
  return heapTraceOfFile(readInputFile(path, ErrorCode.TACHYON_IO), path, options);
}

/** openHeapTrace over the file's bytes, read already (a caller that opens each file once). */
export function heapTraceOfFile(
  bytes: Uint8Array,
  path: string,
  options: HeapTraceOptions = {},
): HeapTraceSource | null {
  if (hasPlaceholderHeader(bytes)) throw withRecoverHint(notFinalizedError(), path);
  if (tachyonVersion(bytes) === FORMAT_VERSION) return null;
  return heapTraceOf(readProfileV2(bytes, options));
}

/** An opened version-2 profile's heap events, or null without a heap section. */
export function heapTraceOf(profile: V2Profile): HeapTraceSource | null {
  return profile.heap === null ? null : new FileHeapTrace(profile, profile.heap);
}

/** What a version-2 profile's heap section holds, from its header (null without one): `info` and `downgrade` say it. */
export function heapTotalsOf(profile: V2Profile): HeapTotals | null {
  return profile.heap === null ? null : decodeHeapTotals(profile.heap.bytes, profile.heap.offset)[0];
}

class FileHeapTrace implements HeapTraceSource {
  readonly frames: readonly Frame[];
  readonly stacks = new StackTable();
  private readonly threadTable = new ThreadTable();
  private readonly decoder: HeapSectionDecoder;
  private lastTimeUs: number | null = null;
  private readonly startTimeUs: number;
  private readonly durationUs: number | null;
  private readonly processIdentity: string | undefined;

  constructor(profile: V2Profile, section: { offset: number; bytes: Uint8Array }) {
    this.frames = v2Frames(profile).map((f) => (f === null ? UNRESOLVED : modelFrame(f)));
    this.startTimeUs = Number(profile.info.startTimeUs);
    this.durationUs = profile.info.durationSec === null ? null : Math.round(profile.info.durationSec * 1e6);
    const recordedBy = findRecordedBy(profile.strings, profile.model?.producer);
    this.processIdentity = recordedBy === undefined ? undefined : processIdentity(recordedBy);
    const stackOf = (frames: Uint32Array, depth: number): number => this.stacks.intern(frames, depth);
    this.decoder = new HeapSectionDecoder(section.bytes, section.offset, this.startTimeUs, this.frames.length, stackOf);
  }

  get threads(): readonly ThreadRef[] {
    return this.threadTable.list;
  }

  /** The duration is the stats block's, else the last poll's time once events() has reached it. */
  get meta(): HeapTraceMeta {
    const durationUs = this.durationUs ?? (this.lastTimeUs === null ? 0 : this.lastTimeUs - this.startTimeUs);
    return {
      intervalBytes: this.decoder.totals.intervalBytes,
      startTimeUs: this.startTimeUs,
      durationUs,
      ...(this.processIdentity === undefined ? {} : { processIdentity: this.processIdentity }),
    };
  }

  /** One pass over the section (as events() makes), keeping its Memory records. */
  externalMemory(): ExternalMemorySample[] {
    return this.externalPass().memory;
  }

  /** The same pass, counting the external objects' events. */
  externalObjects(): ExternalObjectCounts {
    return this.externalPass().objects;
  }

  private external: { memory: ExternalMemorySample[]; objects: ExternalObjectCounts } | null = null;

  private externalPass(): { memory: ExternalMemorySample[]; objects: ExternalObjectCounts } {
    if (this.external !== null) return this.external;
    const memory: ExternalMemorySample[] = [];
    const objects = { allocations: 0, frees: 0, live: 0 };
    for (const r of this.decoder.records()) {
      const thread = this.threadTable.intern(r.threadId);
      if (r.flags === HeapRecordFlag.Memory)
        memory.push({
          thread,
          timeUs: r.timeUs,
          externalBytes: r.externalBytes,
          arrayBuffersBytes: r.arrayBuffersBytes,
        });
      if (!r.external) continue;
      if (r.flags & HeapRecordFlag.Live) objects.live += r.ordinals.length;
      else objects.allocations += r.ordinals.length;
      objects.frees += r.freed.length;
    }
    return (this.external = { memory, objects });
  }

  /** Each call decodes the section again from its start (the tables only grow, so ids stay the same). */
  *events(): Iterable<HeapEventBatch> {
    for (const r of this.decoder.records()) {
      const thread = this.threadTable.intern(r.threadId);
      if (r.flags === HeapRecordFlag.Memory) {
        this.lastTimeUs = this.lastTimeUs === null ? r.timeUs : Math.max(this.lastTimeUs, r.timeUs);
        continue;
      }
      if (r.flags & HeapRecordFlag.Live) {
        yield {
          kind: 'live',
          thread,
          ordinals: r.ordinals,
          sizes: r.sizes,
          stackIds: r.stackIds,
          allocTimesUs: r.allocTimesUs!,
          ...(r.external ? { external: true } : {}),
        };
        continue;
      }
      this.lastTimeUs = this.lastTimeUs === null ? r.timeUs : Math.max(this.lastTimeUs, r.timeUs);
      if (r.flags & HeapRecordFlag.Alloc) {
        yield {
          kind: 'alloc',
          thread,
          timeUs: r.timeUs,
          sinceUs: r.sinceUs,
          ordinals: r.ordinals,
          sizes: r.sizes,
          stackIds: r.stackIds,
          shortLived: r.shortLived,
          ...(r.external ? { external: true } : {}),
        };
      }
      if (r.flags & HeapRecordFlag.Free)
        yield {
          kind: 'free',
          thread,
          timeUs: r.timeUs,
          sinceUs: r.sinceUs,
          ordinals: r.freed,
          ...(r.external ? { external: true } : {}),
        };
    }
  }
}
