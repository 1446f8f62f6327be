/**
 * Tachyon ↔ model, through ProfileReader and ProfileWriter (lib/tachyon).
 * A Tachyon source streams: samples() replays the file without holding them,
 * and a sink is the writer's fast path (internFrame / writeStack).
 */
import { findRecordedBy, processIdentity } from '../recorded-by';
import { ProfileReader, ProfileWriter } from '../tachyon/index';
import { normalizeFrame, type Frame, type ProfileMeta, type ProfileSink, type ProfileSource, type Sample } from './model';

export interface TachyonSink extends ProfileSink {
  setStats(durationSec: number, sampleRate: number): void;
  finalize(): void;
  /** Discards the file. */
  close(): void;
  /** A string no frame names (lib/recorded-by.ts: what recorded the file). */
  note(text: string): void;
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

export interface TachyonSource extends ProfileSource {
  readonly reader: ProfileReader;
  close(): void;
}

/** A frame the file's table could not resolve; the reader refuses any sample that uses it. */
const UNRESOLVED: Frame = { filename: '', funcname: '<unresolved frame>', lineno: null, endLineno: null, column: null, endColumn: null, opcode: null };

/** Opens a Tachyon file (path) or buffer as a streaming model source. */
export function openTachyon(input: string | Uint8Array): TachyonSource {
  const reader = typeof input === 'string' ? ProfileReader.open(input) : ProfileReader.fromBuffer(input);
  const meta: ProfileMeta = { startTimeUs: reader.info.startTimeUs, sampleIntervalUs: reader.info.sampleIntervalUs };
  const durationSec = reader.info.durationSec;
  if (typeof durationSec === 'number' && durationSec > 0) meta.durationUs = BigInt(Math.round(durationSec * 1e6));
  const recordedBy = findRecordedBy(reader.strings);
  if (recordedBy !== undefined) {
    meta.processIdentity = processIdentity(recordedBy);
    // A Node recording's main thread is thread 0 (worker threads: their threadId).
    meta.threadNames = new Map([['0', 'main']]);
  }
  const frames = reader.frames.map((f) => (f === null ? UNRESOLVED : normalizeFrame(f)));
  const count = Number(reader.info.sampleCount);
  return {
    reader,
    meta,
    frames,
    sampleCount: Number.isSafeInteger(count) ? count : undefined,
    samples: () => reader.samples() as Iterable<Sample>,
    close: () => reader.close(),
  };
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
  return {
    internFrame: (frame) => writer.internFrame(frame),
    writeStack: (threadId, interpreterId, timestampUs, status, frameIds) => writer.writeStack(threadId, interpreterId, timestampUs, status, frameIds as Uint32Array | readonly number[]),
    setStats: (durationSec, sampleRate) => writer.setStats(durationSec, sampleRate),
    finalize: () => {
      writer.finalize();
    },
    close: () => writer.close(),
    note: (text) => void writer.internString(text),
  };
}
