/**
 * The `allocations` table: one row per sampled heap object of the files
 * recorded with --heap: its thread, allocation stack (the content-addressed
 * stack_id of `stacks`), sampled size, the bytes it stands for (scaled as
 * pprof scales heap samples), the poll it was first seen at and the poll it
 * was gone at (NULL: still live at the end of what was read).
 *
 * A process's rotated files are read in order as one life: an object
 * inherited by a later file is the same object (one row, freed in the file
 * where it died); its row's profile_id is that file's, or the process's last
 * file for an object still live. Memory: each process's live set.
 */
import type { DuckDBValue } from '@duckdb/node-api';
import {
  LiveSet,
  NO_HEAP_STACK,
  openHeapFile,
  replayHeapTrace,
  unsampledWeight,
  type HeapEventBatch,
  type HeapTraceSource,
} from '../memory/index';
import type { Frame, StackTable } from '../profile/index';
import { HeapQueryBudget } from '../tachyon/index';
import { bigintTimeUs } from './times';

type StackIdOf = (frames: readonly Frame[], stacks: StackTable, sid: number, frameIds: bigint[]) => bigint;

interface ProcessState {
  live: LiveSet;
  threadIndex: Map<bigint, number>;
  threadIds: bigint[];
  stackIndex: Map<bigint, number>;
  stackIds: bigint[];
  profileId: bigint;
  /** The file read last: named when one of its times does not fit. */
  file: string;
  intervalBytes: number;
}

/** Where rows go: a DuckDB appender, or a ClickHouse batch (lib/fleet/tables.ts builds the rows for both). */
export interface RowSink {
  appendRow(values: readonly DuckDBValue[]): void;
}

export class AllocationRows {
  private readonly processes = new Map<string, ProcessState>();
  private readonly row: DuckDBValue[] = new Array<DuckDBValue>(7);
  /** One query: its processes' live sets count against one budget. */
  private readonly budget = new HeapQueryBudget();

  constructor(
    private readonly table: RowSink,
    private readonly stackIdOf: StackIdOf,
  ) {}

  /** Reads one file's heap events (none: 0 rows); returns the rows written. */
  addFile(file: string, profileId: bigint, processIdentity: string): number {
    const trace = openHeapFile(file);
    if (trace === null) return 0;
    try {
      let p = this.processes.get(processIdentity);
      if (p === undefined) {
        p = {
          live: new LiveSet(0, this.budget),
          threadIndex: new Map(),
          threadIds: [],
          stackIndex: new Map(),
          stackIds: [],
          profileId,
          file,
          intervalBytes: trace.meta.intervalBytes,
        };
        this.processes.set(processIdentity, p);
      }
      p.profileId = profileId;
      p.file = file;
      p.intervalBytes = trace.meta.intervalBytes;
      let rows = 0;
      replayHeapTrace(
        this.inProcessIds(trace, p),
        { free: (live, slot, timeUs) => (rows++, this.emit(p, live, slot, timeUs)) },
        p.live,
      );
      return rows;
    } finally {
      trace.close?.();
    }
  }

  /** True when the process has heap objects: finish() may add rows under its last profile_id. */
  tracks(processIdentity: string): boolean {
    return this.processes.has(processIdentity);
  }

  /** Rows for the objects still live at the end of each process's last file. */
  finish(): number {
    let rows = 0;
    for (const p of this.processes.values()) {
      for (const slot of p.live.slots()) {
        this.emit(p, p.live, slot, null);
        rows++;
      }
    }
    this.processes.clear();
    return rows;
  }

  private emit(p: ProcessState, live: LiveSet, slot: number, freeUs: number | null): void {
    const r = this.row;
    const stack = live.stacks[slot]!;
    r[0] = p.profileId;
    r[1] = p.threadIds[live.threads[slot]!]!;
    r[2] = stack === NO_HEAP_STACK ? null : p.stackIds[stack]!;
    r[3] = BigInt(live.sizes[slot]!);
    r[4] = unsampledWeight(live.sizes[slot]!, p.intervalBytes).bytes;
    r[5] = bigintTimeUs(live.allocTimesUs[slot]!, 'allocation time', p.file);
    r[6] = freeUs === null ? null : bigintTimeUs(freeUs, 'free time', p.file);
    this.table.appendRow(r);
  }

  /** The file's events with the process's thread and stack numbering (stable across its files). */
  private inProcessIds(trace: HeapTraceSource, p: ProcessState): HeapTraceSource {
    const frameIds: bigint[] = [];
    const stackMemo = new Map<number, number>();
    const threadMemo: number[] = [];
    const thread = (t: number): number => {
      let to = threadMemo[t];
      if (to === undefined) {
        const id = trace.threads[t]!.threadId;
        to = p.threadIndex.get(id);
        if (to === undefined) {
          to = p.threadIds.length;
          p.threadIndex.set(id, to);
          p.threadIds.push(id);
        }
        threadMemo[t] = to;
      }
      return to;
    };
    const stack = (sid: number): number => {
      if (sid === NO_HEAP_STACK) return sid;
      let to = stackMemo.get(sid);
      if (to === undefined) {
        const id = this.stackIdOf(trace.frames, trace.stacks, sid, frameIds);
        to = p.stackIndex.get(id);
        if (to === undefined) {
          to = p.stackIds.length;
          p.stackIndex.set(id, to);
          p.stackIds.push(id);
        }
        stackMemo.set(sid, to);
      }
      return to;
    };
    return {
      meta: trace.meta,
      frames: trace.frames,
      stacks: trace.stacks,
      threads: trace.threads,
      *events(): Iterable<HeapEventBatch> {
        for (const b of trace.events()) {
          if (b.kind === 'free') yield { ...b, thread: thread(b.thread) };
          else yield { ...b, thread: thread(b.thread), stackIds: b.stackIds.map(stack) };
        }
      },
    };
  }
}
