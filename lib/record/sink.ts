/**
 * Where a recording's samples go: a tick sink with the shape of
 * ProfileWriter's fast path (frames interned once, one stack per tick), so a
 * recording streams into a Tachyon file or into any caller's sink.
 */
import type { Frame } from '../profile/index';
import { MAX_STACK_DEPTH, ProfileWriter } from '../tachyon/index';

export interface ProfileSink {
  internFrame(frame: Frame): number;
  writeStack(
    threadId: bigint,
    interpreterId: number,
    timestampUs: bigint,
    status: number,
    frameIds: ArrayLike<number>,
  ): void;
}

export interface TachyonSink extends ProfileSink {
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
}

export interface TachyonSinkOptions {
  sampleIntervalUs: bigint;
  startTimeUs: bigint;
  compression?: 'zstd' | 'none';
  /** Profiling mode (0 wall .. 4 exception); default unknown. */
  mode?: number;
  /** ProfileWriter's flushIntervalMs (default none). */
  flushIntervalMs?: number;
}

/** A new Tachyon file as a sink (CPython 3.15.2's encoding, via ProfileWriter). */
export function createTachyonSink(path: string, options: TachyonSinkOptions): TachyonSink {
  const writer = new ProfileWriter(path, {
    sampleIntervalUs: options.sampleIntervalUs,
    startTimeUs: options.startTimeUs,
    compression: options.compression ?? 'zstd',
    mode: options.mode ?? null,
    flushIntervalMs: options.flushIntervalMs,
  });
  let atCap = 0;
  return {
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
  };
}
