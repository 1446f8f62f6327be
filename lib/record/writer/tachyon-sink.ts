/**
 * Where a recording's samples go: a tick sink with the shape of
 * ProfileWriter's fast path (frames interned once, one stack per tick), so a
 * recording streams into a Tachyon file or into any caller's sink.
 */
import { defaultCompression } from '../../tachyon/index';
import { frameFromV8, type CpuProfileCallFrame } from '../../v8/index';
import type { Frame } from '../../profile/index';
import { MAX_STACK_DEPTH, ProfileWriter, flushTick, type HeapFileSink } from '../../tachyon/index';

/** One tick at a time, frames interned first; compat's deprecated ProfileSink adds a weight to writeStack. */
export interface TickSink {
  internFrame(frame: Frame): number;
  writeStack(
    threadId: bigint,
    interpreterId: number,
    timestampUs: bigint,
    status: number,
    frameIds: ArrayLike<number>,
  ): void;
}

export interface TachyonSink extends TickSink {
  /** A string no frame names (lib/recorded-by.ts: what recorded the file). */
  note(text: string): void;
  setStats(durationSec: number, sampleRate: number): void;
  /**
   * Returns how many samples reached Tachyon version 1's 256 frames, when it counts them: cut by the
   * writer, or already cut by V8's sampler (which keeps the innermost 255 frames and the root).
   */
  finalize(): number | void;
  /** Discards the file. */
  close(): void;
  /**
   * One periodic flush, for a sink made without flushIntervalMs whose caller runs the timer (the inline recorder:
   * lib/record/program/agent.ts, ChunkTarget.timed). False once the writer is finished or broken.
   */
  flush(): boolean;
  /** The file's heap events (a `heap` sink: format version 2), else null. */
  readonly heap: HeapFileSink | null;
}

export interface TachyonSinkOptions {
  sampleIntervalUs: bigint;
  startTimeUs: bigint;
  compression?: 'zstd' | 'none';
  /** Profiling mode (0 wall .. 4 exception); default unknown. */
  mode?: number;
  /** ProfileWriter's flushIntervalMs (default none: flush() is then the caller's to call). */
  flushIntervalMs?: number;
  /**
   * The file also holds heap events (`heap`): then it is format version 2, the
   * only one with a heap section; a CPU-only recording stays version 1, which
   * CPython reads and `recover` salvages.
   */
  heap?: boolean;
  /** The frame a heap stack's V8 call frame is written as (source maps), with `heap`. */
  mapFrame?: (frame: Frame) => Frame;
}

/** A new Tachyon file as a sink (CPython 3.15.2's encoding, via ProfileWriter). */
export function createTachyonSink(path: string, options: TachyonSinkOptions): TachyonSink {
  const writer = new ProfileWriter(path, {
    sampleIntervalUs: options.sampleIntervalUs,
    startTimeUs: options.startTimeUs,
    compression: options.compression ?? defaultCompression(),
    mode: options.mode ?? null,
    flushIntervalMs: options.flushIntervalMs,
    formatVersion: options.heap === true ? 2 : 1,
  });
  const mapFrame = options.mapFrame ?? ((frame: Frame) => frame);
  // The heap stacks' V8 call frames become model frames here, in the writer (lib/tachyon knows no V8 frame).
  const frameOf = (cf: CpuProfileCallFrame): Frame => mapFrame(frameFromV8(cf));
  const heap = options.heap === true ? writer.heapSink({ frameOf }) : null;
  let atCap = 0;
  return {
    heap,
    internFrame: (frame) => writer.internFrame(frame),
    writeStack: (threadId, interpreterId, timestampUs, status, frameIds) => {
      writer.writeStack(threadId, interpreterId, timestampUs, status, frameIds as Uint32Array | readonly number[]);
      if (frameIds.length >= MAX_STACK_DEPTH) atCap++;
    },
    setStats: (durationSec, sampleRate) => writer.setStats(durationSec, sampleRate),
    note: (text) => void writer.internString(text),
    finalize: () => {
      writer.finalize();
      return atCap;
    },
    close: () => writer.close(),
    flush: () => flushTick(writer),
  };
}
