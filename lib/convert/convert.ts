/**
 * `convert()`: any supported profile file to any other, by content sniffing
 * (or an explicit `from`) and the output name's extension (or `to`).
 */
import { statSync } from 'node:fs';
import { ErrorCode, ProfpackError, invalidArgument } from '../errors';
import { inputSize, readInputFile, writeOutputFile } from '../input';
import { fromCollapsed, toCollapsed } from './collapsed';
import { fromCpuProfile, toCpuProfile } from './cpuprofile';
import { MemoryProfile, copyProfile, type Frame, type ProfileSource } from './model';
import { withMappedFrames } from '../sourcemap/index';
import { toPprof } from './pprof';
import { fromPprof, type PprofSource } from './pprof-read';
import { fromSpeedscope, toSpeedscope } from './speedscope';
import { createTachyonSink, openTachyon } from './tachyon';

export const PROFILE_FORMATS = ['tachyon', 'cpuprofile', 'pprof', 'collapsed', 'speedscope'] as const;
export type ProfileFormat = (typeof PROFILE_FORMATS)[number];

export function isProfileFormat(value: string): value is ProfileFormat {
  return (PROFILE_FORMATS as readonly string[]).includes(value);
}

/** The format a file name suggests, if any. */
export function formatFromPath(path: string): ProfileFormat | undefined {
  const p = path.toLowerCase();
  if (p.endsWith('.speedscope.json')) return 'speedscope';
  if (p.endsWith('.cpuprofile')) return 'cpuprofile';
  if (p.endsWith('.pb.gz') || p.endsWith('.pprof') || p.endsWith('.pb') || p.endsWith('.pprof.gz')) return 'pprof';
  if (p.endsWith('.collapsed') || p.endsWith('.folded') || p.endsWith('.collapsed.txt')) return 'collapsed';
  if (p.endsWith('.tach') || p.endsWith('.tachyon') || p.endsWith('.bin')) return 'tachyon';
  return undefined;
}

/** The format of a file's content. */
export function detectFormat(bytes: Uint8Array): ProfileFormat {
  const head = String.fromCharCode(...bytes.subarray(0, 4));
  // Little-endian Tachyon files start "HCAT", big-endian ones "TACH" (tachyon-format.md §2).
  if (head === 'HCAT' || head === 'TACH') return 'tachyon';
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'pprof';
  let i = 0;
  while (i < bytes.length && i < 4096 && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  if (bytes[i] === 0x7b /* { */) {
    const text = Buffer.from(bytes.subarray(i, i + 4096)).toString('utf8');
    if (text.includes('"$schema"') && text.includes('speedscope')) return 'speedscope';
    if (text.includes('"shared"') && text.includes('"profiles"')) return 'speedscope';
    return 'cpuprofile';
  }
  // A protobuf Profile starts with field 1 (sample_type, length-delimited: 0x0a) or field 2 (sample: 0x12).
  if (bytes[0] === 0x0a || bytes[0] === 0x12) return 'pprof';
  const text = Buffer.from(bytes.subarray(0, 4096)).toString('utf8');
  const firstLine = text.split('\n', 1)[0] ?? '';
  if (/ \d+\s*$/.test(firstLine)) return 'collapsed';
  throw new ProfpackError('cannot tell the input format (not Tachyon, .cpuprofile, pprof, speedscope or collapsed stacks)', {
    code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
    offset: 0,
    expected: PROFILE_FORMATS.join(' | '),
  });
}

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    throw new ProfpackError(`${what} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, { code: ErrorCode.CONVERT_BAD_INPUT, cause: err });
  }
}

export interface ParseOptions {
  /** pprof: the sample type (value column) to read; default the CPU/wall one. */
  sampleType?: string;
}

/** Parses a profile held in memory (a pprof source expands its counts lazily). */
export function parseProfile(bytes: Uint8Array, format: ProfileFormat = detectFormat(bytes), options: ParseOptions = {}): ProfileSource {
  switch (format) {
    case 'cpuprofile':
      return fromCpuProfile(parseJson(bytes, '.cpuprofile'));
    case 'speedscope':
      return fromSpeedscope(parseJson(bytes, 'speedscope file'));
    case 'pprof':
      return fromPprof(bytes, { sampleType: options.sampleType });
    case 'collapsed':
      return fromCollapsed(Buffer.from(bytes).toString('utf8'));
    case 'tachyon':
      return MemoryProfile.from(openTachyon(bytes));
  }
}

export interface SerializeOptions {
  /** pprof: one sample per distinct (stack, thread) instead of one per sample. */
  aggregate?: boolean;
  /** .cpuprofile: only this thread ("ID" or "ID@INTERPRETER"). */
  thread?: string;
}

/** Serializes a profile to a non-Tachyon format. */
export function serializeProfile(source: ProfileSource, format: Exclude<ProfileFormat, 'tachyon'>, options: SerializeOptions = {}): Uint8Array {
  switch (format) {
    case 'cpuprofile':
      return Buffer.from(JSON.stringify(toCpuProfile(source, { thread: options.thread })));
    case 'speedscope':
      return Buffer.from(JSON.stringify(toSpeedscope(source)));
    case 'pprof':
      return toPprof(source, { aggregate: options.aggregate });
    case 'collapsed':
      return Buffer.from(toCollapsed(source));
  }
}

/**
 * Default ConvertOptions.maxSamples: converting to pprof, .cpuprofile or
 * speedscope holds every sample in memory (a few hundred bytes each), so a
 * larger profile is refused with ERR_CONVERT_TOO_MANY_SAMPLES instead of
 * ending in a V8 heap abort. Tachyon and collapsed output stream or aggregate
 * and have no limit.
 */
export const DEFAULT_MAX_SAMPLES = 4_000_000;

/** Output formats that hold every sample in memory. */
const IN_MEMORY_OUTPUTS: readonly ProfileFormat[] = ['pprof', 'cpuprofile', 'speedscope'];

export interface ConvertOptions extends SerializeOptions, ParseOptions {
  /** The most samples converted to pprof, .cpuprofile or speedscope (default DEFAULT_MAX_SAMPLES). */
  maxSamples?: number;
  to?: ProfileFormat;
  from?: ProfileFormat;
  /** Tachyon output compression (default zstd). */
  compression?: 'zstd' | 'none';
  /** Called with samples done and the total when known. */
  onProgress?: (done: number, total: number | undefined) => void;
  /** Each frame as written (source maps: lib/sourcemap). */
  mapFrame?: (frame: Frame) => Frame;
}

export interface ConvertSummary {
  from: ProfileFormat;
  to: ProfileFormat;
  samples: number;
  bytesIn: number;
  bytesOut: number;
  /** pprof input: label occurrences dropped (not thread, thread name or time), and their keys. */
  droppedLabels: number;
  droppedLabelKeys: string[];
}

/** Opens any supported profile file as a source (Tachyon files stream; others are parsed whole). */
export function openProfile(path: string, format?: ProfileFormat, options: ParseOptions = {}): ProfileSource & { format: ProfileFormat; close(): void } {
  let bytes: Uint8Array | undefined;
  let from = format;
  if (from === undefined) {
    bytes = readInputFile(path);
    from = detectFormat(bytes);
  }
  if (from === 'tachyon') {
    const src = openTachyon(path);
    return {
      format: from,
      meta: src.meta,
      get frames() {
        return src.frames;
      },
      sampleCount: src.sampleCount,
      samples: () => src.samples(),
      close: () => src.close(),
    };
  }
  const profile = parseProfile(bytes ?? readInputFile(path), from, options);
  return Object.assign(profile, { format: from, close: () => undefined });
}

/** Converts the profile at `input` into `output`. */
export function convert(input: string, output: string, options: ConvertOptions = {}): ConvertSummary {
  const to = options.to ?? formatFromPath(output);
  if (to === undefined) {
    throw new ProfpackError(`cannot tell the output format from "${output}"; pass --to`, { code: ErrorCode.CONVERT_UNKNOWN_FORMAT, expected: PROFILE_FORMATS.join(' | ') });
  }
  const maxSamples = options.maxSamples ?? DEFAULT_MAX_SAMPLES;
  if (!Number.isSafeInteger(maxSamples) || maxSamples < 0) throw invalidArgument(`maxSamples must be a non-negative safe integer, not ${String(maxSamples)}`, 'a non-negative safe integer');
  const limited = IN_MEMORY_OUTPUTS.includes(to);
  const bytesIn = inputSize(input);
  const source = withMappedFrames(openProfile(input, options.from, options), options.mapFrame);
  try {
    const total = source.sampleCount;
    const tooMany = (n: number): ProfpackError =>
      new ProfpackError(`${n === total ? `the profile declares ${n} samples` : `more than ${maxSamples} samples`}: converting to ${to} holds every sample in memory; the limit is ${maxSamples} (ConvertOptions.maxSamples, --max-samples), or convert to tachyon or collapsed, which stream`, {
        code: ErrorCode.CONVERT_TOO_MANY_SAMPLES,
        expected: `at most ${maxSamples} samples`,
        details: { maxSamples, declaredSamples: total },
      });
    // Refused before anything is read when the header says so; counted as read otherwise.
    if (limited && total !== undefined && total > maxSamples) throw tooMany(total);
    const progress = options.onProgress;
    let counted: ProfileSource = source;
    if (progress !== undefined) {
      counted = {
        meta: source.meta,
        frames: source.frames,
        sampleCount: total,
        *samples() {
          let done = 0;
          progress(0, total);
          for (const s of source.samples()) {
            yield s;
            if ((++done & 4095) === 0) progress(done, total);
          }
          progress(done, total);
        },
      };
      // Frames of a streaming source may grow while samples are read: keep reading the live table.
      Object.defineProperty(counted, 'frames', { get: () => source.frames });
    }
    let samples = 0;
    if (to === 'tachyon') {
      const sink = createTachyonSink(output, { sampleIntervalUs: source.meta.sampleIntervalUs, startTimeUs: source.meta.startTimeUs, compression: options.compression ?? 'zstd' });
      try {
        samples = copyProfile(counted, sink);
        const durationUs = source.meta.durationUs;
        if (durationUs !== undefined && durationUs > 0n) sink.setStats(Number(durationUs) / 1e6, samples / (Number(durationUs) / 1e6));
        sink.finalize();
      } catch (err) {
        sink.close();
        throw err;
      }
    } else {
      let n = 0;
      const counting: ProfileSource = {
        meta: counted.meta,
        get frames() {
          return counted.frames;
        },
        sampleCount: total,
        *samples() {
          for (const s of counted.samples()) {
            if (++n > maxSamples && limited) throw tooMany(n);
            yield s;
          }
        },
      };
      writeOutputFile(output, serializeProfile(counting, to, options));
      samples = n;
    }
    const pprof = source.format === 'pprof' ? (source as unknown as PprofSource) : undefined;
    return { from: source.format, to, samples, bytesIn, bytesOut: statSync(output).size, droppedLabels: pprof?.droppedLabels ?? 0, droppedLabelKeys: pprof?.droppedLabelKeys ?? [] };
  } finally {
    source.close();
  }
}
