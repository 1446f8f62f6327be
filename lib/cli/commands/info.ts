/** `profpack info FILE`: a human summary of a Tachyon profile. */
import type { Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { detectFormat, formatFromPath, formatLabels, type FormatName } from '../../formats/index';
import { readInputHead } from '../../input';
import {
  CAPTURE_FEATURE_NAMES,
  MAX_STACK_DEPTH,
  PROFILING_MODE_NAMES,
  ProfileReader,
  V2_MAX_STACK_DEPTH,
  type ProfileInfo,
} from '../../tachyon/index';
import { profileInfoLines } from '../info-profile';
import { externalMemoryTrends, formatExternalLines } from '../../memory/index';
import { formatValue, NodeStatus, sampleCountColumn } from '../../profile/index';
import { findRecordedBy, platformName, type RecordedBy } from '../../recorded-by';

function seconds(us: bigint): string {
  return `${(Number(us) / 1e6).toFixed(3)} s`;
}

/** The summary as lines; throws the reader's ProfpackError for a file CPython would reject. */
export function infoLines(file: string): string[] {
  // Any other format says what it is and what it measures. A file no format recognises is read as
  // Tachyon only when its name says Tachyon (so the reader names the damage, a bad magic, say); any
  // other is no known profile: the detection's error at byte 0, naming the formats tried.
  let format: FormatName = 'tachyon';
  try {
    format = detectFormat(readInputHead(file));
  } catch (err) {
    if (!(err instanceof ProfpackError && err.code === ErrorCode.CONVERT_UNKNOWN_FORMAT)) throw err;
    if (formatFromPath(file) !== 'tachyon') throw err;
  }
  if (format !== 'tachyon') return profileInfoLines(file, format);
  const reader = ProfileReader.open(file);
  try {
    const i = reader.info;
    const layout = reader.layout;
    const about = findRecordedBy(reader.strings, reader.info.version === 2 ? reader.model?.producer : undefined);
    if (about !== undefined) return nodeInfoLines(file, reader, about);
    let first: bigint | null = null;
    let last: bigint | null = null;
    let count = 0;
    let records = 0;
    const threads = new Set<string>();
    let atCap = 0;
    const cap = i.version === 2 ? V2_MAX_STACK_DEPTH : MAX_STACK_DEPTH;
    const weights = sampleWeights(reader);
    for (const s of reader.samples()) {
      count += weights === undefined ? 1 : weights[records]!;
      records++;
      if (first === null || s.timestampUs < first) first = s.timestampUs;
      if (last === null || s.timestampUs > last) last = s.timestampUs;
      threads.add(`${s.threadId}/${s.interpreterId}`);
      if (s.stack.length >= cap) atCap++;
    }
    const lines = [
      `file:         ${file} (${layout.fileSize} bytes)`,
      `format:       Tachyon version ${i.version}` +
        `${reader.stackCoding === null ? '' : ` (${reader.stackCoding} stacks)`}, ` +
        `Python ${i.pythonVersion.join('.')}, ${layout.littleEndian ? 'little' : 'big'}-endian, ` +
        compressionName(i),
      `start:        ${i.startTimeUs} us`,
      `interval:     ${i.sampleIntervalUs} us`,
      // A version-2 record may stand for many samples (its samples/count value): the header counts records.
      `samples:      ${count}${count === records ? '' : ` (in ${records} records)`}`,
      `threads:      ${i.threadCount}`,
      `strings:      ${i.stringCount}`,
      `frames:       ${i.frameCount}`,
      `mode:         ${i.mode === null ? 'unknown' : (PROFILING_MODE_NAMES[i.mode] ?? String(i.mode))}`,
      `features:     ${
        i.captureFeatures === null
          ? 'unknown'
          : CAPTURE_FEATURE_NAMES.filter((_, k) => i.captureFeatures! & (1 << k)).join(', ') || 'none'
      }`,
    ];
    if (i.durationSec !== null) {
      lines.push(
        `duration:     ${i.durationSec.toFixed(3)} s (stats block), sample rate ${i.sampleRate!.toFixed(1)}/s`,
      );
      if (i.errorRate !== null) lines.push(`error rate:   ${i.errorRate.toFixed(2)} %`);
      // CPython's missed_samples is a percentage of the passes its interval asked for (sample.py), as error_rate is.
      if (i.missedSamples !== null) lines.push(`missed:       ${i.missedSamples.toFixed(2)} %`);
    }
    lines.push(
      `sampled span: ${
        first === null ? 'no samples' : `${seconds(last! - first)} (${count} samples, ${threads.size} threads seen)`
      }`,
    );
    // A writer cuts deeper stacks to the innermost 256 (version 2: 4,096): a stack at the cap may have been cut.
    if (atCap > 0) {
      lines.push(`deep stacks:  ${atCap} samples at ${cap} frames, the cap (deeper stacks are cut to it)`);
    }
    return [...lines, ...heapLines(reader)];
  } finally {
    reader.close();
  }
}

/** A version-2 record may stand for many samples: its samples/count value says how many (undefined: one each). */
function sampleWeights(reader: ProfileReader): ArrayLike<number> | undefined {
  const model = reader.model;
  const countType = model === null || model === undefined ? -1 : sampleCountColumn(model);
  return countType < 0 ? undefined : model!.values[countType];
}

function compressionName(i: ProfileInfo): string {
  return i.compressionType === 1
    ? 'zstd'
    : i.compressionType === 0
      ? 'uncompressed'
      : `compression type ${i.compressionType} (read as uncompressed)`;
}

/** A Node recording: what recorded it, in Node's words, and no CPython field that would not apply. */
function nodeInfoLines(file: string, reader: ProfileReader, about: RecordedBy): string[] {
  const i = reader.info;
  const layout = reader.layout;
  const askedRate = 1e6 / Number(i.sampleIntervalUs);
  const weights = sampleWeights(reader);
  const counts = { onCpu: 0, idle: 0, gc: 0 };
  let first: bigint | null = null;
  let last: bigint | null = null;
  let samples = 0;
  let k = 0;
  for (const s of reader.samples()) {
    const n = weights === undefined ? 1 : weights[k]!;
    k++;
    samples += n;
    if (first === null || s.timestampUs < first) first = s.timestampUs;
    if (last === null || s.timestampUs > last) last = s.timestampUs;
    if (s.status & NodeStatus.InGc) counts.gc += n;
    else if (s.status & NodeStatus.OnCpu) counts.onCpu += n;
    else counts.idle += n;
  }
  const lines = [
    `file:         ${file} (${layout.fileSize} bytes)`,
    `format:       Tachyon version ${i.version}, ` +
      `${layout.littleEndian ? 'little' : 'big'}-endian, ${compressionName(i)}`,
    `recorded by:  Node ${about.version} on ${platformName(about)} (host ${about.hostname}), pid ${about.pid}` +
      `${about.ppid === undefined ? '' : ` (parent ${about.ppid})`}, profpack ${about.recorder}`,
    `command:      ${about.argv.join(' ')}`,
    `start:        ${new Date(Number(i.startTimeUs) / 1000).toISOString()}`,
  ];
  // A heap-only recording: no CPU sampling to describe.
  if (about.cpu === false) {
    lines.push("cpu:          off (record --no-cpu): V8's CPU profiler never ran; the file holds the heap alone");
    lines.push(`frames:       ${i.frameCount}`);
    if (i.durationSec !== null && i.durationSec > 0) lines.push(`duration:     ${i.durationSec.toFixed(3)} s`);
    return [...lines, ...heapLines(reader, about)];
  }
  lines.push(
    `interval:     ${i.sampleIntervalUs} us (asks for ${askedRate.toFixed(0)} samples/s per thread)`,
    "mode:         wall: V8's sampler ticks on wall-clock time; " +
      'a thread waiting on its event loop is sampled as (idle)',
    `samples:      ${samples}${samples === k ? '' : ` (in ${k} records)`}`,
    `threads:      ${i.threadCount}`,
    `frames:       ${i.frameCount}`,
  );
  if (about.sourceMaps !== undefined) {
    const maps = about.sourceMaps
      ? 'frames read at their source while recording'
      : 'off while recording (--no-source-maps)';
    lines.push(`source maps:  ${maps}`);
  }
  if (i.durationSec !== null && i.durationSec > 0) {
    // Version 1's stats block has the recorder's rate; a version-2 file's counts records, so it is counted here.
    const rate =
      i.version === 1 && i.sampleRate !== null ? i.sampleRate : samples / Math.max(1, i.threadCount) / i.durationSec;
    const share = askedRate > 0 ? (100 * rate) / askedRate : 0;
    lines.push(`duration:     ${i.durationSec.toFixed(3)} s`);
    lines.push(
      `sample rate:  ${rate.toFixed(1)}/s per thread, ${share.toFixed(0)}% of what the interval asks: ` +
        "V8's sampler thread waits the interval after each tick, " +
        "so a period is the interval plus the tick's own cost and any wait for a CPU",
    );
  }
  const pct = (n: number) => (samples === 0 ? '0' : ((100 * n) / samples).toFixed(1));
  lines.push(
    `status:       on-cpu ${counts.onCpu} (${pct(counts.onCpu)}%), idle ${counts.idle} (${pct(counts.idle)}%), ` +
      `gc ${counts.gc} (${pct(counts.gc)}%)  (top --status on-cpu|idle|gc|main)`,
  );
  lines.push(`sampled span: ${first === null ? 'no samples' : seconds(last! - first)}`);
  return [...lines, ...heapLines(reader, about)];
}

/**
 * A file with a heap section (docs/format-v2.md §9): its event counts and V8's sampling interval, and for a Node
 * recording that says so, which heap sampler polled (lib/record/program/heap/probe.ts).
 */
function heapLines(reader: ProfileReader, about?: RecordedBy): string[] {
  const h = reader.heap;
  const n = (v: number): string => v.toLocaleString('en');
  const lines: string[] = [];
  if (h !== null) {
    const live = h.live > 0 ? `, ${n(h.live)} live at the start (rotated)` : '';
    const events = `${n(h.allocations)} sampled allocations, ${n(h.frees)} frees, ${n(h.shortLived)} short-lived`;
    lines.push(
      `heap:         ${events}${live}`,
      `              sampling interval ${n(h.intervalBytes)} bytes (V8's mean bytes allocated between samples)`,
    );
    const trace = reader.heapTrace();
    const objects = trace?.externalObjects?.();
    if (objects !== undefined && objects.allocations + objects.live > 0) {
      const inherited = objects.live > 0 ? `, ${n(objects.live)} live at the start` : '';
      lines.push(
        `              of which external: ${n(objects.allocations)} sampled Buffer/ArrayBuffer allocations, ` +
          `${n(objects.frees)} frees${inherited} (their stores, with stacks; leaf "(external) …")`,
      );
    }
    const external = trace === null ? [] : externalMemoryTrends(trace);
    for (const line of formatExternalLines(external, (v) => formatValue(v, 'bytes')))
      lines.push(`              ${line}`);
  } else if (about?.heapIntervalBytes !== undefined) {
    // Recorded with --heap, but V8 sampled nothing: the program allocated less than about one interval.
    lines.push(`heap:         no sampled allocation (sampling interval ${n(about.heapIntervalBytes)} bytes)`);
  }
  if (about?.heapSampler === 'native') lines.push("heap sampler: native (V8's C++ API: a poll forces no GC)");
  else if (about?.heapSampler === 'inspector') {
    const why = about.heapSamplerReason === undefined ? '' : `; ${about.heapSamplerReason}`;
    lines.push(`heap sampler: inspector (node:inspector: every poll is a full GC${why})`);
  }
  return lines;
}

export function registerInfo(program: Command): void {
  program
    .command('info')
    .description(
      'summarise a profile: for Tachyon its header, duration, samples, threads; ' +
        'for other formats what it is and what it measures',
    )
    .argument('<file>', `a profile (${formatLabels()})`)
    .action((file: string) => {
      process.stdout.write(infoLines(file).join('\n') + '\n');
    });
}
