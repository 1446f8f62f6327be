/** `profpack convert IN --to FORMAT -o OUT` */
import { Command, Option } from 'commander';
import { convert, DEFAULT_MAX_SAMPLES, isProfileFormat, PROFILE_FORMATS, type ProfileFormat } from '../../convert/convert';
import { ErrorCode, ProfpackError } from '../../errors';
import { inputSize } from '../../input';
import { progressBar } from '../progress';
import { outputPath } from '../output-option';
import { SourceMapper } from '../../sourcemap/index';
import { action } from '../user-error';

interface ConvertFlags {
  to?: string;
  from?: string;
  output: string;
  compression: 'zstd' | 'none';
  aggregate?: boolean;
  thread?: string;
  sampleType?: string;
  quiet?: boolean;
  maxSamples?: string;
  sourceMaps?: string;
}

function formatOption(value: string | undefined, flag: string): ProfileFormat | undefined {
  if (value === undefined) return undefined;
  if (!isProfileFormat(value)) throw new ProfpackError(`${flag} must be one of ${PROFILE_FORMATS.join(', ')}, not "${value}"`, { code: ErrorCode.INVALID_ARGUMENT });
  return value;
}

export function registerConvert(program: Command): Command {
  return program
    .command('convert')
    .description('convert a profile between Tachyon, .cpuprofile, pprof, collapsed stacks and speedscope JSON')
    .argument('<in>', 'input profile (format detected from its content)')
    .addOption(new Option('--to <format>', 'output format (default: from the output name)').choices([...PROFILE_FORMATS]))
    .addOption(new Option('--from <format>', 'input format (default: detected)').choices([...PROFILE_FORMATS]))
    .option('-o, --output <file>', 'output file')
    .addOption(new Option('--compression <kind>', 'Tachyon output compression').choices(['zstd', 'none']).default('zstd'))
    .option('--aggregate', 'pprof: one sample per distinct stack and thread (no timestamps)')
    .option('--thread <id>', '.cpuprofile: only this thread (ID or ID@INTERPRETER)')
    .option('--sample-type <name>', 'pprof input: the sample type to read (default: the CPU/wall one)')
    .option('-q, --quiet', 'no summary line')
    .option('--source-maps <dir>', 'write frames of compiled scripts at their source (the scripts and their maps are under DIR)')
    .option('--max-samples <n>', `pprof, .cpuprofile, speedscope: refuse a profile with more samples (default ${DEFAULT_MAX_SAMPLES})`)
    .action(
      action((input: string, flags: ConvertFlags, command: Command) => {
        flags.output = outputPath(command);
        const size = inputSize(input);
        const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
        const summary = convert(input, flags.output, {
          to: formatOption(flags.to, '--to'),
          from: formatOption(flags.from, '--from'),
          compression: flags.compression,
          aggregate: flags.aggregate === true,
          thread: flags.thread,
          sampleType: flags.sampleType,
          onProgress: progressBar('converting', size),
          maxSamples: flags.maxSamples === undefined ? undefined : Number(flags.maxSamples),
          mapFrame: maps?.mapFrame,
        });
        for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
        if (summary.droppedLabels > 0) {
          process.stderr.write(`profpack: warning: dropped ${summary.droppedLabels.toLocaleString('en')} pprof labels (${summary.droppedLabelKeys.join(', ')}): only thread ids, thread names and times are kept\n`);
        }
        if (flags.quiet !== true) {
          process.stderr.write(`${input} (${summary.from}, ${summary.bytesIn.toLocaleString('en')} bytes) → ${flags.output} (${summary.to}, ${summary.bytesOut.toLocaleString('en')} bytes), ${summary.samples.toLocaleString('en')} samples\n`);
        }
      }),
    );
}
