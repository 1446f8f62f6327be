/** `profpack convert IN --to FORMAT -o OUT` */
import { compressionOf, compressionOption, type CompressionFlag } from '../compression';
import { type Command, Option } from 'commander';
import { statSync } from 'node:fs';
import {
  convert,
  DEFAULT_MAX_SAMPLES,
  FORMAT_NAMES,
  formatLabels,
  formatFromPath,
  isFormatName,
  writeProfile,
  type FormatName,
} from '../../formats/index';
import { heapProfile } from '../../memory/index';
import { refuseInputAsOutput } from '../../output-file';
import { sampleTypeName } from '../../profile/index';
import { withMappedFrames } from '../../sourcemap/index';
import { heapInfoLine, heapMoment, openHeapInputs, wantsHeap } from '../heap-input';
import { ErrorCode, ProfpackError } from '../../errors';
import { inputSize } from '../../input';
import { progressBar } from '../progress';
import { outputPath } from '../output-option';
import { SourceMapper } from '../../sourcemap/index';
import { action } from '../errors';

interface ConvertFlags {
  to?: string;
  from?: string;
  output: string;
  compression: CompressionFlag;
  tachyonVersion: '1' | '2';
  aggregate?: boolean;
  thread?: string;
  sampleType?: string;
  quiet?: boolean;
  maxSamples?: string;
  sourceMaps?: string;
  heap?: boolean;
  at?: string;
}

function formatOption(value: string | undefined, flag: string): FormatName | undefined {
  if (value === undefined) return undefined;
  if (!isFormatName(value))
    throw new ProfpackError(`${flag} must be one of ${FORMAT_NAMES.join(', ')}, not "${value}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  return value;
}

export function registerConvert(program: Command): Command {
  return program
    .command('convert')
    .description(`convert a profile between ${formatLabels(undefined, ' and ')}`)
    .argument('<in>', 'input profile (format detected from its content)')
    .addOption(new Option('--to <format>', 'output format (default: from the output name)').choices([...FORMAT_NAMES]))
    .addOption(new Option('--from <format>', 'input format (default: detected)').choices([...FORMAT_NAMES]))
    .option('-o, --output <file>', 'output file')
    .addOption(compressionOption('Tachyon output compression'))
    .addOption(
      new Option(
        '--tachyon-version <n>',
        'Tachyon output: 1 (CPython 3.15 reads it: ticks only) or 2 (keeps sample types, values, labels)',
      )
        .choices(['1', '2'])
        .default('1'),
    )
    .option('--aggregate', 'pprof: one sample per distinct stack and thread (no timestamps)')
    .option('--thread <id>', '.cpuprofile/.heapprofile: only this thread (ID or ID@INTERPRETER; default the busiest)')
    .option(
      '--sample-type <name>',
      'the sample type written by collapsed, speedscope, .cpuprofile, .heapprofile ' +
        "(default: the profile's default type), " +
        'or the count column Tachyon version 1 takes as ticks (default samples/count)',
    )
    .option('-q, --quiet', 'no summary line')
    .option(
      '--source-maps <dir>',
      'write frames of compiled scripts at their source (the scripts and their maps are under DIR)',
    )
    .option(
      '--max-samples <n>',
      `${formatLabels((a) => a.writesWhole === true)}: refuse a profile with more samples ` +
        `(default ${DEFAULT_MAX_SAMPLES})`,
    )
    .option(
      '--heap',
      'a heap recording as a heap profile: alloc_objects, alloc_space, inuse_objects, inuse_space ' +
        '(pprof: all four; .heapprofile and speedscope: --sample-type, default inuse_space)',
    )
    .option(
      '--at <moment>',
      'heap: in use at MS after the start, at the peak, or at the end (peak | end | MS; default end); implies --heap',
    )
    .action(
      action((input: string, flags: ConvertFlags, command: Command) => {
        flags.output = outputPath(command);
        if (wantsHeap(flags, [input])) return convertHeap(input, flags);
        const size = inputSize(input);
        const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
        const summary = convert(input, flags.output, {
          to: formatOption(flags.to, '--to'),
          from: formatOption(flags.from, '--from'),
          compression: compressionOf(flags.compression),
          version: flags.tachyonVersion === '2' ? 2 : 1,
          aggregate: flags.aggregate === true,
          thread: flags.thread,
          sampleType: flags.sampleType,
          onProgress: progressBar('converting', size),
          onWarning: (message) => process.stderr.write(`profpack: warning: ${message}\n`),
          maxSamples: flags.maxSamples === undefined ? undefined : Number(flags.maxSamples),
          mapFrame: maps?.mapFrame,
        });
        for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
        if (flags.quiet !== true) {
          process.stderr.write(
            `${input} (${summary.from}, ${summary.bytesIn.toLocaleString('en')} bytes) → ${flags.output} ` +
              `(${summary.to}, ${summary.bytesOut.toLocaleString('en')} bytes), ` +
              `${summary.samples.toLocaleString('en')} samples (${summary.sampleTypes.join(', ')})\n`,
          );
        }
      }),
    );
}

/** A heap recording's heap profile (one record per stack: never large) written in any format that writes. */
function convertHeap(input: string, flags: ConvertFlags): void {
  const to = formatOption(flags.to, '--to') ?? formatFromPath(flags.output);
  if (to === undefined)
    throw new ProfpackError(`cannot tell the output format from "${flags.output}"; pass --to`, {
      code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
      expected: FORMAT_NAMES.join(' | '),
    });
  refuseInputAsOutput(flags.output, [input]);
  const trace = openHeapInputs([input]);
  let built: ReturnType<typeof heapProfile>;
  try {
    built = heapProfile(trace, { at: heapMoment(flags.at) });
  } finally {
    trace.close?.();
  }
  const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
  writeProfile(withMappedFrames(built.profile, maps?.mapFrame), flags.output, to, {
    compression: compressionOf(flags.compression),
    version: flags.tachyonVersion === '2' ? 2 : 1,
    aggregate: flags.aggregate === true,
    thread: flags.thread,
    sampleType: flags.sampleType ?? (to === 'tachyon' ? undefined : 'inuse_space'),
    onWarning: (message) => process.stderr.write(`profpack: warning: ${message}\n`),
  });
  for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
  if (flags.quiet !== true) {
    const types = built.profile.meta.sampleTypes.map(sampleTypeName).join(', ');
    const bytes = statSync(flags.output).size.toLocaleString('en');
    const stacks = built.profile.sampleCount;
    const what = `${stacks} stacks (${types}); ${heapInfoLine(built.info)}`;
    process.stderr.write(`${input} (heap) → ${flags.output} (${to}, ${bytes} bytes), ${what}\n`);
  }
}
