/** The variables `profpack record` passes its settings to the preload in. */
export const RecordEnv = {
  /** The pipe descriptor harvests go to (the writer is `profpack record` itself). */
  fd: 'PROFPACK_RECORD_FD',
  intervalUs: 'PROFPACK_RECORD_INTERVAL_US',
  harvestMs: 'PROFPACK_RECORD_HARVEST_MS',
  workers: 'PROFPACK_RECORD_WORKERS',
  channel: 'PROFPACK_RECORD_CHANNEL',
  /** With --workers --heap: the heap settings (JSON HeapOptions) each worker's agent records its own heap with. */
  workerHeap: 'PROFPACK_RECORD_WORKER_HEAP',
  /** Set: also record the heap, at this mean sampling interval in bytes. */
  heapIntervalBytes: 'PROFPACK_RECORD_HEAP_INTERVAL_BYTES',
  heapNearLimitRatio: 'PROFPACK_RECORD_HEAP_NEAR_LIMIT_RATIO',
  /** 'harvest': every timed harvest polls the heap (heap-options.ts, HeapPolls). */
  heapPolls: 'PROFPACK_RECORD_HEAP_POLLS',
  /** 'count': short-lived sampled objects are counted only (heap-options.ts, HeapShortLived). */
  heapShortLived: 'PROFPACK_RECORD_HEAP_SHORT_LIVED',
  /** '0': no Buffer/ArrayBuffer sampling (program/heap/external.ts). */
  heapBuffers: 'PROFPACK_RECORD_HEAP_BUFFERS',
  /** '0': a heap-only recording, V8's CPU profiler never started (record --no-cpu). */
  cpu: 'PROFPACK_RECORD_CPU',
  /**
   * Child processes (`--children`): JSON ChildRecording. Every Node process
   * started below the recorded one (it stays in the environment) that has no
   * recording pipe writes its own file, as `node --cpu-prof` does.
   */
  children: 'PROFPACK_RECORD_CHILDREN',
  /**
   * `record --inline`: JSON InlineRecording. The preload writes the file in the program (startRecording's inline
   * writer); the pipe then carries only a 'ping' at the start and the summary at the end ('inline-end').
   */
  inline: 'PROFPACK_RECORD_INLINE',
} as const;

/** What `record --inline` hands the preload (RecordEnv.inline): the file and how to write it. */
export interface InlineRecording {
  out: string;
  compression: 'zstd' | 'none';
  flushIntervalMs?: number;
  sourceMaps?: boolean;
}

/** Where a child process's recording goes (RecordEnv.children). */
export interface ChildRecording {
  /** The root's file without ".tach": a child writes `${base}.${pid}.tach`. */
  base?: string;
  /** A rotating recording: children rotate in the same directory (the names carry the pid). */
  rotate?: { everyMs: number; dir: string; keep?: number };
  compression?: 'zstd' | 'none';
  flushIntervalMs?: number;
  sourceMaps?: boolean;
}

/** A child's own file next to the root's: `profile.tach` → `profile.<pid>.tach`. */
export function childFile(base: string, pid: number): string {
  return `${base}.${pid}.tach`;
}
