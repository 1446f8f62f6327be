/**
 * `convert()`: read → model → write. The input format comes from the content
 * (or `from`), the output's from its name (or `to`); samples stream from the
 * reader to the writer in batches, and no record is ever expanded by value.
 */
import { readSync, statSync } from 'node:fs';
import { ErrorCode, ProfpackError, invalidArgument } from '../errors';
import { closeInput, inputSize, openInput } from '../input';
import { downgrade, isVersion2 } from '../tachyon/index';
import { refuseInputAsOutput } from '../output-file';
import {
  batchSamples,
  mapBatches,
  sampleCountColumn,
  sampleTypeName,
  type Frame,
  type ProfileSource,
  type SampleBatch,
} from '../profile/index';
import { withMappedFrames } from '../sourcemap/index';
import type { WriteOptions } from './adapter';
import {
  adapterFor,
  FORMAT_NAMES,
  formatLabels,
  formatFromPath,
  openProfile,
  writeProfile,
  type FormatName,
} from './registry';

/**
 * Default ConvertOptions.maxSamples: the outputs whose adapter `writesWhole`
 * (.cpuprofile, .heapprofile, speedscope) hold every sample record in memory
 * (a few dozen bytes each), so a larger profile is refused with
 * ERR_CONVERT_TOO_MANY_SAMPLES instead of ending in a V8 heap abort. The
 * others stream (pprof's writer keeps one encoded stack per distinct stack).
 */
export const DEFAULT_MAX_SAMPLES = 4_000_000;

export interface ConvertOptions extends WriteOptions {
  to?: FormatName;
  from?: FormatName;
  /** The most sample records converted to a format held in memory (default DEFAULT_MAX_SAMPLES). */
  maxSamples?: number;
  /** Each frame as written (source maps: lib/sourcemap). */
  mapFrame?: (frame: Frame) => Frame;
  /** Called with records done and the total when known. */
  onProgress?: (done: number, total: number | undefined) => void;
}

export interface ConvertSummary {
  from: FormatName;
  to: FormatName;
  /**
   * Samples read: the samples/count column's sum where the profile has one (a record, a Tachyon REPEAT run, may stand
   * for many), else its records; as `downgrade` counts them.
   */
  samples: number;
  /** The sample types of the profile read, "type/unit". */
  sampleTypes: string[];
  bytesIn: number;
  bytesOut: number;
}

/** Converts the profile at `input` into `output`. */
export function convert(input: string, output: string, options: ConvertOptions = {}): ConvertSummary {
  const to = options.to ?? formatFromPath(output);
  if (to === undefined) {
    throw new ProfpackError(`cannot tell the output format from "${output}"; pass --to`, {
      code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
      expected: FORMAT_NAMES.join(' | '),
    });
  }
  const maxSamples = options.maxSamples ?? DEFAULT_MAX_SAMPLES;
  if (!Number.isSafeInteger(maxSamples) || maxSamples < 0)
    throw invalidArgument(
      `maxSamples must be a non-negative safe integer, not ${String(maxSamples)}`,
      'a non-negative safe integer',
    );
  const limited = adapterFor(to).writesWhole === true;
  const bytesIn = inputSize(input);
  refuseInputAsOutput(output, [input]);
  if (isPlainDowngrade(input, to, options)) return viaDowngrade(input, output, bytesIn, options);
  // pprof's writer reads each record once, in order: a reader may stream them (recordsOnce).
  const opened = openProfile(input, {
    format: options.from,
    onWarning: options.onWarning,
    recordsOnce: to === 'pprof',
  });
  const source = options.mapFrame === undefined ? opened : withMappedFrames(opened, options.mapFrame);
  try {
    const total = source.sampleCount;
    const tooMany = (n: number): ProfpackError =>
      new ProfpackError(
        `${n === total ? `the profile declares ${n} samples` : `more than ${maxSamples} samples`}: ` +
          `converting to ${to} holds every sample in memory; ` +
          `the limit is ${maxSamples} (ConvertOptions.maxSamples, --max-samples), ` +
          `or convert to ${formatLabels((a) => a.writesWhole !== true, ' or ')}, which stream`,
        {
          code: ErrorCode.CONVERT_TOO_MANY_SAMPLES,
          expected: `at most ${maxSamples} samples`,
          details: { maxSamples, declaredSamples: total },
        },
      );
    // Refused before anything is read when the reader knows the count; counted as read otherwise.
    if (limited && total !== undefined && total > maxSamples) throw tooMany(total);
    let done = 0;
    let samples = 0;
    const countColumn = sampleCountColumn(source.meta);
    const counted: ProfileSource = mapBatches(source, function* (batches: Iterable<SampleBatch>) {
      options.onProgress?.(0, total);
      for (const b of batches) {
        done += b.length;
        samples += batchSamples(b, countColumn);
        if (limited && done > maxSamples) throw tooMany(done);
        yield b;
        options.onProgress?.(done, total);
      }
    });
    writeProfile(counted, output, to, options);
    return {
      from: source.format,
      to,
      samples,
      sampleTypes: source.meta.sampleTypes.map(sampleTypeName),
      bytesIn,
      bytesOut: statSync(output).size,
    };
  } finally {
    source.close();
  }
}

/**
 * Tachyon version 2 to version 1 with nothing to change on the way (no thread, sample type, aggregation or frame
 * mapping) is `downgrade`: one code path, so the two give the same bytes, the frame table kept index for index.
 */
function isPlainDowngrade(input: string, to: FormatName, options: ConvertOptions): boolean {
  if (to !== 'tachyon' || (options.version ?? 1) !== 1 || (options.from ?? 'tachyon') !== 'tachyon') return false;
  if (options.mapFrame !== undefined || options.thread !== undefined || options.sampleType !== undefined) return false;
  if (options.aggregate === true) return false;
  const file = openInput(input);
  try {
    const head = new Uint8Array(8);
    return isVersion2(head.subarray(0, readSync(file.fd, head, 0, head.length, 0)));
  } finally {
    closeInput(file);
  }
}

function viaDowngrade(input: string, output: string, bytesIn: number, options: ConvertOptions): ConvertSummary {
  options.onProgress?.(0, undefined);
  const result = downgrade(input, output, { compression: options.compression });
  options.onProgress?.(result.samples, result.samples);
  for (const what of result.lost) options.onWarning?.(`Tachyon version 1 does not keep ${what}`);
  return {
    from: 'tachyon',
    to: 'tachyon',
    samples: result.samples,
    sampleTypes: result.sampleTypes,
    bytesIn,
    bytesOut: result.bytes,
  };
}
