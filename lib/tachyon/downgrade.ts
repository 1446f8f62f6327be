/**
 * `downgrade(in, out)`: rewrites a version-2 profile as version 1 through
 * ProfileWriter, so CPython 3.15 reads it (docs/format-v2.md). Lossless:
 * every thread gets the same samples in the same order (downgrade.ts says
 * why threads may interleave differently), and the string and frame tables
 * are the same lists, index for index.
 */
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError } from '../errors';
import { readInputFile } from '../input';
import { ProfileWriter } from './write/writer';
import { replayIntoVersion1 } from './v2/downgrade';
import { isVersion2, readProfileV2 } from './v2/file';

export interface DowngradeOptions {
  /** Compression of the version-1 sample region: 'zstd' (default, level 5, CPython's) or 'none'. */
  compression?: 'zstd' | 'none';
  /** zstd level (default 5). */
  level?: number;
  /** Decoder and encoder: 'native' or 'js' (default: the process backend). */
  backend?: 'native' | 'js';
}

export interface DowngradeResult {
  samples: number;
  /** Size of the version-1 file. */
  bytes: number;
}

/** Rewrites the version-2 profile at `inputPath` as a version-1 file at `outputPath`. */
export function downgrade(inputPath: string, outputPath: string, options: DowngradeOptions = {}): DowngradeResult {
  const bytes = readInputFile(inputPath, ErrorCode.TACHYON_IO);
  if (!isVersion2(bytes)) {
    throw new ProfpackError(`${inputPath} is not a version-2 profile`, { code: ErrorCode.V2_BAD_HEADER, offset: 4, expected: 'format version 2 (a version-1 file needs no downgrade)' });
  }
  const profile = readProfileV2(bytes, { backend: options.backend });
  const info = profile.info;
  const writer = new ProfileWriter(outputPath, {
    sampleIntervalUs: info.sampleIntervalUs,
    startTimeUs: info.startTimeUs,
    compression: options.compression ?? 'zstd',
    level: options.level,
    mode: info.mode,
    captureFeatures: info.captureFeatures,
    backend: options.backend,
  });
  let samples: number;
  try {
    samples = replayIntoVersion1(profile, writer);
    writer.finalize();
  } catch (err) {
    writer.close();
    // A half-written version-1 file is worse than none.
    fs.rmSync(outputPath, { force: true });
    throw err;
  }
  return { samples, bytes: fs.statSync(outputPath).size };
}
