/**
 * Tachyon ↔ model, through ProfileReader and ProfileWriter (lib/tachyon).
 * A Tachyon source streams: samples() replays the file without holding them.
 */
import { ErrorCode, ProfpackError } from '../errors';
import type { ProfileSink, ProfileSource } from './model';

export interface TachyonSink extends ProfileSink {
  setStats(durationSec: number, sampleRate: number): void;
  finalize(): void;
  /** Discards the file. */
  close(): void;
}

export interface TachyonSinkOptions {
  sampleIntervalUs: bigint;
  startTimeUs: bigint;
  compression?: 'zstd' | 'none';
  mode?: number;
}

export interface TachyonSource extends ProfileSource {
  close(): void;
}

function unavailable(what: string): ProfpackError {
  return new ProfpackError(`${what} is not available on this branch yet`, { code: ErrorCode.CONVERT_UNKNOWN_FORMAT });
}

export function openTachyon(input: string | Uint8Array): TachyonSource {
  void input;
  throw unavailable('ProfileReader');
}

export function createTachyonSink(path: string, options: TachyonSinkOptions): TachyonSink {
  void path;
  void options;
  throw unavailable('ProfileWriter');
}
