/**
 * The Tachyon file a recording streams into: ProfileWriter's fast path
 * (internFrame / writeStack) behind the ProfileSink interface.
 */
import type { Frame, ProfileSink } from '../convert/model';
import { ErrorCode, ProfpackError } from '../errors';

export interface RecordSink extends ProfileSink {
  /** Pushes buffered samples to the file (what a hard crash would otherwise lose). */
  flush(): void;
  setStats(durationSec: number, sampleRate: number): void;
  finalize(): void;
  /** Discards the file. */
  close(): void;
}

export interface TachyonSinkOptions {
  sampleIntervalUs: bigint;
  startTimeUs: bigint;
  compression: 'zstd' | 'none';
  mode?: number;
}

export function openTachyonSink(path: string, options: TachyonSinkOptions): RecordSink {
  void path;
  void options;
  void (null as unknown as Frame);
  throw new ProfpackError('ProfileWriter is not available on this branch yet', { code: ErrorCode.RECORD_FAILED });
}
