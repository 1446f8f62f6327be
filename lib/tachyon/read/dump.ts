/**
 * The dump of a Tachyon file in the shape of the shared vectors'
 * *.expected.json (../shared/vectors/tachyon/README.md): what `profpack dump
 * --json` prints and what other tools check us against. u64 values stay
 * bigint until stringifyExact writes them as exact JSON integers.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { isProfpackError } from '../../errors';
import { hashInputFile } from '../../input';
import { ProfileReader, type Frame, type ProfileInfo, type ReaderOptions, type ReplayStats } from './reader';

export interface DumpFrame {
  filename: string;
  funcname: string;
  lineno: number | null;
  end_lineno: number | null;
  column: number | null;
  end_column: number | null;
  opcode: number | null;
}

export interface DumpSample {
  thread_id: bigint | number;
  interpreter_id: number;
  timestamp_us: bigint | number;
  status: number;
  call: number;
  frames: DumpFrame[];
}

export interface Dump {
  schema: 'tachyon-expected/1';
  file: string | null;
  file_size: number;
  sha256: string;
  reader: { implementation: string; python: null };
  accepted: boolean;
  stage: 'ok' | 'open' | 'replay';
  error: { code: string; message: string } | null;
  info: Record<string, unknown> | null;
  /** What replay() returned (samples delivered); null unless accepted. */
  replay_count: number | null;
  /** CPython's get_stats() after the replay, snake_case; null unless accepted. */
  replay_stats: Record<string, number> | null;
  /** collect() calls made. */
  collect_calls: number;
  /** The file's layout as profpack's reader parsed it (the vectors' comes from tachyon_layout.py, not CPython). */
  layout: Record<string, unknown>;
  samples: DumpSample[];
  /** Present for a replay-stage error, as in the vectors. */
  samples_before_error?: number;
}

/** bigint when beyond 2^53, else number: the value a JSON integer parser gives back. */
export function exactInteger(value: bigint): bigint | number {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** CPython's get_info() dict, snake_case, as in the vectors. */
export function infoToJson(info: ProfileInfo): Record<string, unknown> {
  return {
    version: info.version,
    python_version: [...info.pythonVersion],
    start_time_us: exactInteger(info.startTimeUs),
    sample_interval_us: exactInteger(info.sampleIntervalUs),
    sample_count: exactInteger(info.sampleCount),
    thread_count: info.threadCount,
    string_count: info.stringCount,
    frame_count: info.frameCount,
    compression_type: info.compressionType,
    duration_sec: info.durationSec,
    sample_rate: info.sampleRate,
    error_rate: info.errorRate,
    missed_samples: info.missedSamples,
    mode: info.mode,
    capture_features: info.captureFeatures,
  };
}

export function frameToJson(f: Frame): DumpFrame {
  return {
    filename: f.filename,
    funcname: f.funcname,
    lineno: f.lineno,
    end_lineno: f.endLineno,
    column: f.column,
    end_column: f.endColumn,
    opcode: f.opcode,
  };
}

function errorOf(err: unknown): { code: string; message: string } {
  if (isProfpackError(err)) {
    // The message without the " (at byte N)" suffix ProfpackError adds.
    const suffix = err.offset === undefined ? '' : ` (at byte ${err.offset})`;
    const message = suffix && err.message.endsWith(suffix) ? err.message.slice(0, -suffix.length) : err.message;
    return { code: String(err.code), message };
  }
  throw err;
}

/**
 * Opens and replays `input` (a path or the bytes), never throwing for a bad
 * file. With `onSample`, each sample goes there as it is read and
 * `dump.samples` stays empty: memory stays bounded whatever the file holds.
 */
export function dumpProfile(
  input: string | Uint8Array,
  options: ReaderOptions = {},
  onSample?: (sample: DumpSample) => void,
): Dump {
  // An unreadable path leaves size and hash empty: the reader reports it with its own code below.
  const digest =
    typeof input === 'string'
      ? hashInputFile(input)
      : { size: input.length, sha256: createHash('sha256').update(input).digest('hex') };
  const dump: Dump = {
    schema: 'tachyon-expected/1',
    file: typeof input === 'string' ? basename(input) : null,
    file_size: digest?.size ?? 0,
    sha256: digest?.sha256 ?? '',
    reader: { implementation: 'profpack ProfileReader', python: null },
    accepted: false,
    stage: 'open',
    error: null,
    info: null,
    replay_count: null,
    replay_stats: null,
    collect_calls: 0,
    layout: { source: LAYOUT_SOURCE, error: 'not opened' },
    samples: [],
  };
  let reader: ProfileReader;
  try {
    reader = typeof input === 'string' ? ProfileReader.open(input, options) : ProfileReader.fromBuffer(input, options);
    dump.reader.implementation = `profpack ProfileReader (${reader.backend} backend)`;
  } catch (err) {
    dump.error = errorOf(err);
    dump.layout = { source: LAYOUT_SOURCE, error: dump.error.message };
    return dump;
  }
  try {
    dump.info = infoToJson(reader.info);
    dump.layout = layoutToJson(reader, null);
    dump.stage = 'replay';
    const samples: DumpSample[] = [];
    let delivered = 0;
    const emit = onSample ?? ((sample: DumpSample) => samples.push(sample));
    const framesJson = new WeakMap<readonly Frame[], DumpFrame[]>();
    let calls = 0;
    let count: number;
    try {
      count = reader.replay({
        collect(stackFrames, timestampsUs) {
          const call = calls++;
          for (const interp of stackFrames) {
            for (const thread of interp.threads) {
              let frames = framesJson.get(thread.frameInfo);
              if (!frames) {
                frames = thread.frameInfo.map(frameToJson);
                framesJson.set(thread.frameInfo, frames);
              }
              const threadId = exactInteger(thread.threadId);
              for (const ts of timestampsUs) {
                emit({
                  thread_id: threadId,
                  interpreter_id: interp.interpreterId,
                  timestamp_us: exactInteger(ts),
                  status: thread.status,
                  call,
                  frames,
                });
              }
              delivered += timestampsUs.length;
            }
          }
        },
      });
    } catch (err) {
      dump.error = errorOf(err);
      dump.collect_calls = calls;
      dump.samples_before_error = delivered;
      return dump;
    }
    dump.accepted = true;
    dump.stage = 'ok';
    dump.replay_count = count;
    const stats = reader.stats;
    if (stats !== null) dump.replay_stats = statsToJson(stats);
    dump.collect_calls = calls;
    dump.layout = layoutToJson(reader, stats);
    dump.samples = samples;
    return dump;
  } finally {
    reader.close();
  }
}

const LAYOUT_SOURCE = 'profpack ProfileReader (not CPython)';

function statsToJson(s: ReplayStats): Record<string, number> {
  return {
    repeat_records: s.repeatRecords,
    repeat_samples: s.repeatSamples,
    full_records: s.fullRecords,
    suffix_records: s.suffixRecords,
    pop_push_records: s.popPushRecords,
    total_records: s.totalRecords,
    total_samples: s.totalSamples,
    stack_reconstructions: s.stackReconstructions,
  };
}

/** The vectors' "layout", from what the reader parsed (their own comes from tachyon_layout.py). */
function layoutToJson(reader: ProfileReader, stats: ReplayStats | null): Record<string, unknown> {
  const l = reader.layout;
  // A file is read in its own byte order: "HCAT" (LE) or "TACH" (BE) at offset 0.
  const out: Record<string, unknown> = {
    source: LAYOUT_SOURCE,
    byte_order: l.littleEndian ? 'little' : 'big',
    magic_bytes: l.littleEndian ? '48434154' : '54414348',
    format_version: l.info.version,
    string_table_offset: l.stringTableOffset,
    frame_table_offset: l.frameTableOffset,
    compression_type: l.info.compressionType,
    profiling_config: l.profilingConfig,
    stats_block_size: l.statsBlockSize,
    footer: { string_count: l.info.stringCount, frame_count: l.info.frameCount, file_size_field: l.fileSize },
  };
  if (stats !== null) {
    out.records = {
      REPEAT: stats.repeatRecords,
      FULL: stats.fullRecords,
      SUFFIX: stats.suffixRecords,
      POP_PUSH: stats.popPushRecords,
      total: stats.totalRecords,
    };
  }
  return out;
}

/** JSON text with bigint written as exact integers; one sample per line like the vectors. */
export function stringifyExact(value: unknown, indent = 1): string {
  const marks: string[] = [];
  const text = JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (typeof v === 'bigint') {
        marks.push(v.toString());
        return `\u0000big${marks.length - 1}\u0000`;
      }
      return v;
    },
    indent,
  );
  return text.replace(/"\\u0000big(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}

/** The dump as text: header fields indented, then one compact line per sample. */
export function dumpToJsonText(dump: Dump): string {
  const parts: string[] = [];
  writeDumpJson(
    dump,
    (emit) => dump.samples.forEach(emit),
    (text) => parts.push(text),
  );
  return parts.join('');
}

/**
 * The same text, written piece by piece: the head of `dump` (its samples
 * ignored), then the samples `forEachSample` produces, one line each. The CLI
 * streams a dump of any size this way.
 */
export function writeDumpJson(
  dump: Dump,
  forEachSample: (emit: (s: DumpSample) => void) => void,
  write: (text: string) => void,
): void {
  const { samples: _held, ...fields } = dump;
  const head = stringifyExact({ ...fields, samples: [] }, 1);
  const open = head.lastIndexOf('"samples": []');
  write(head.slice(0, open) + '"samples": [');
  let first = true;
  // A sample's line is stringifyExact(s, 0), built by hand: its frames' JSON once per stack, not once per sample.
  const framesText = new WeakMap<DumpFrame[], string>();
  forEachSample((s) => {
    let frames = framesText.get(s.frames);
    if (frames === undefined) {
      frames = JSON.stringify(s.frames);
      framesText.set(s.frames, frames);
    }
    const line =
      `{"thread_id":${s.thread_id},"interpreter_id":${s.interpreter_id},"timestamp_us":${s.timestamp_us},` +
      `"status":${s.status},"call":${s.call},"frames":${frames}}`;
    write((first ? '\n' : ',\n') + line);
    first = false;
  });
  write((first ? ']' : '\n ]') + head.slice(open + '"samples": []'.length) + '\n');
}
