/**
 * `mergeProfiles()`: one Tachyon file from many. Each input is replayed into
 * one ProfileWriter (openProfiles streams them one at a time), so memory is
 * the merged frame table plus one file's reader, whatever the sample count.
 */
import { statSync } from 'node:fs';
import { writeProfile } from '../formats/index';
import { refuseInputAsOutput } from '../output-file';
import { batchSamples, mapBatches, sampleCountColumn, type SampleBatch } from '../profile/index';
import { openProfiles } from './source';

export interface MergeOptions {
  compression?: 'zstd' | 'none';
  onFile?: (index: number, file: string) => void;
  /** What the Tachyon file cannot keep (stacks past 256 frames cut, labels, other sample types). */
  onWarning?: (message: string) => void;
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
  // Samples, not records: a record of a tick stream may be a REPEAT run (its samples/count value says how many).
  let samples = 0;
  const counted = mapBatches(source, function* (batches: Iterable<SampleBatch>) {
    const column = sampleCountColumn(source.meta);
    for (const b of batches) {
      samples += batchSamples(b, column);
      yield b;
    }
  });
  writeProfile(counted, out, 'tachyon', { compression: options.compression ?? 'zstd', onWarning: options.onWarning });
  return {
    files: source.files.length,
    samples,
    threads: source.threads.length,
    frames: source.frames.length,
    bytes: statSync(out).size,
  };
}
