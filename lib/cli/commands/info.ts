/** `profpack info FILE`: a human summary of a Tachyon profile. */
import type { Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { detectFormat, type FormatName } from '../../formats/index';
import { readInputHead } from '../../input';
import { ProfileReader } from '../../tachyon/index';
import { profileInfoLines } from '../info-profile';

const MODES = ['wall', 'cpu', 'gil', 'all', 'exception'];
const FEATURES = ['all_threads', 'native', 'gc', 'opcodes', 'blocking'];

function seconds(us: bigint): string {
  return `${(Number(us) / 1e6).toFixed(3)} s`;
}

/** The summary as lines; throws the reader's ProfpackError for a file CPython would reject. */
export function infoLines(file: string): string[] {
  // Any other format says what it is and what it measures.
  // A file no format recognises is read as Tachyon, whose reader says what is wrong with it.
  let format: FormatName = 'tachyon';
  try {
    format = detectFormat(readInputHead(file));
  } catch (err) {
    if (!(err instanceof ProfpackError && err.code === ErrorCode.CONVERT_UNKNOWN_FORMAT)) throw err;
  }
  if (format !== 'tachyon') return profileInfoLines(file, format);
  const reader = ProfileReader.open(file);
  try {
    const i = reader.info;
    const layout = reader.layout;
    const lines = [
      `file:         ${file} (${layout.fileSize} bytes)`,
      `format:       Tachyon version ${i.version}${reader.stackCoding === null ? '' : ` (${reader.stackCoding} stacks)`}, Python ${i.pythonVersion.join('.')}, ${layout.littleEndian ? 'little' : 'big'}-endian, ` +
        `${i.compressionType === 1 ? 'zstd' : i.compressionType === 0 ? 'uncompressed' : `compression type ${i.compressionType} (read as uncompressed)`}`,
      `start:        ${i.startTimeUs} us`,
      `interval:     ${i.sampleIntervalUs} us`,
      `samples:      ${i.sampleCount}`,
      `threads:      ${i.threadCount}`,
      `strings:      ${i.stringCount}`,
      `frames:       ${i.frameCount}`,
      `mode:         ${i.mode === null ? 'unknown' : (MODES[i.mode] ?? String(i.mode))}`,
      `features:     ${i.captureFeatures === null ? 'unknown' : FEATURES.filter((_, k) => i.captureFeatures! & (1 << k)).join(', ') || 'none'}`,
    ];
    if (i.durationSec !== null) {
      lines.push(`duration:     ${i.durationSec.toFixed(3)} s (stats block), sample rate ${i.sampleRate!.toFixed(1)}/s`);
      if (i.errorRate !== null) lines.push(`error rate:   ${i.errorRate.toFixed(2)} %`);
      if (i.missedSamples !== null) lines.push(`missed:       ${i.missedSamples}`);
    }
    let first: bigint | null = null;
    let last: bigint | null = null;
    let count = 0;
    const threads = new Set<string>();
    for (const s of reader.samples()) {
      count++;
      if (first === null || s.timestampUs < first) first = s.timestampUs;
      if (last === null || s.timestampUs > last) last = s.timestampUs;
      threads.add(`${s.threadId}/${s.interpreterId}`);
    }
    lines.push(`sampled span: ${first === null ? 'no samples' : `${seconds(last! - first)} (${count} samples, ${threads.size} threads seen)`}`);
    return lines;
  } finally {
    reader.close();
  }
}

export function registerInfo(program: Command): void {
  program
    .command('info')
    .description('summarise a profile: for Tachyon its header, duration, samples, threads; for other formats what it is and what it measures')
    .argument('<file>', 'a profile (Tachyon, pprof, .cpuprofile, .heapprofile, speedscope, collapsed)')
    .action((file: string) => {
      process.stdout.write(infoLines(file).join('\n') + '\n');
    });
}
