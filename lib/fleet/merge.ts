/**
 * `mergeProfiles()`: one Tachyon file from many. Each input is replayed into
 * one ProfileWriter (openProfiles streams them one at a time), so memory is
 * the merged frame table plus one file's reader, whatever the sample count.
 */
import { statSync } from 'node:fs';
import { refuseInputAsOutput, writeThroughTemporary } from '../output-file';
import { copyProfile, threadKey, type ProfileSource } from '../convert/model';
import { createTachyonSink } from '../convert/tachyon';
import { openProfiles, type FleetSource } from './source';

export interface MergeOptions {
  compression?: 'zstd' | 'none';
  onFile?: (index: number, file: string) => void;
}

export interface MergeResult {
  files: number;
  samples: number;
  threads: number;
  frames: number;
  bytes: number;
}

export function mergeProfiles(inputs: readonly string[], out: string, options: MergeOptions = {}): MergeResult {
  const source = openProfiles(inputs);
  // `merge DIR -o DIR/day.tach` run twice lists its own output: refused before anything is written.
  refuseInputAsOutput(out, source.files);
  source.onFile = options.onFile;
  // Written beside `out` and renamed at the end: a failure leaves `out` as it was.
  return writeThroughTemporary(out, (writePath) => mergeInto(source, writePath, options.compression));
}

function mergeInto(source: FleetSource, writePath: string, compression: MergeOptions['compression']): MergeResult {
  const { startTimeUs, sampleIntervalUs } = source.meta;
  const sink = createTachyonSink(writePath, { startTimeUs, sampleIntervalUs, compression: compression ?? 'zstd' });
  let first: bigint | undefined;
  let last: bigint | undefined;
  const threads = new Set<string>();
  // source.frames is the live merged table: it grows while samples are read.
  const timed: ProfileSource = {
    meta: source.meta,
    frames: source.frames,
    *samples() {
      for (const s of source.samples()) {
        if (first === undefined || s.timestampUs < first) first = s.timestampUs;
        if (last === undefined || s.timestampUs > last) last = s.timestampUs;
        threads.add(threadKey(s.threadId, s.interpreterId));
        yield s;
      }
    },
  };
  let samples: number;
  try {
    samples = copyProfile(timed, sink);
    const durationSec = first === undefined ? 0 : Number(last! - startTimeUs) / 1e6;
    sink.setStats(durationSec, durationSec > 0 && threads.size > 0 ? samples / threads.size / durationSec : 0);
    sink.finalize();
  } catch (err) {
    sink.close();
    throw err;
  }
  return { files: source.files.length, samples, threads: threads.size, frames: source.frames.length, bytes: statSync(writePath).size };
}
