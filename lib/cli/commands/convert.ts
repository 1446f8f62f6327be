/** `profpack convert IN --to FORMAT -o OUT` */
import { Command, Option } from 'commander';
import { convert, DEFAULT_MAX_SAMPLES, FORMAT_NAMES, isFormatName, type FormatName } from '../../formats/index';
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
  compression: 'zstd' | 'none';
  tachyonVersion: '1' | '2';
  aggregate?: boolean;
  thread?: string;
  sampleType?: string;
  quiet?: boolean;
  maxSamples?: string;
  sourceMaps?: string;
}

function formatOption(value: string | undefined, flag: string): FormatName | undefined {
  if (value === undefined) return undefined;
  if (!isFormatName(value)) throw new ProfpackError(`${flag} must be one of ${FORMAT_NAMES.join(', ')}, not "${value}"`, { code: ErrorCode.INVALID_ARGUMENT });
  return value;
}

export function registerConvert(program: Command): Command {
  return program
    .command('convert')
    .description('convert a profile between Tachyon, .cpuprofile, pprof, collapsed stacks and speedscope JSON')
    .argument('<in>', 'input profile (format detected from its content)')
    .addOption(new Option('--to <format>', 'output format (default: from the output name)').choices([...FORMAT_NAMES]))
    .addOption(new Option('--from <format>', 'input format (default: detected)').choices([...FORMAT_NAMES]))
    .option('-o, --output <file>', 'output file')
    .addOption(new Option('--compression <kind>', 'Tachyon output compression').choices(['zstd', 'none']).default('zstd'))
    .addOption(new Option('--tachyon-version <n>', 'Tachyon output: 1 (CPython 3.15 reads it: ticks only) or 2 (keeps sample types, values, labels)').choices(['1', '2']).default('1'))
    .option('--aggregate', 'pprof: one sample per distinct stack and thread (no timestamps)')
    .option('--thread <id>', '.cpuprofile/.heapprofile: only this thread (ID or ID@INTERPRETER; default the busiest)')
    .option('--sample-type <name>', 'the sample type written by collapsed, speedscope, .cpuprofile, .heapprofile ' +
'(default: the profile\'s default type), ' +
'or the count column Tachyon version 1 takes as ticks (default samples/count)')
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
          process.stderr.write(`${input} (${summary.from}, ${summary.bytesIn.toLocaleString('en')} bytes) → ${flags.output} ` +
`(${summary.to}, ${summary.bytesOut.toLocaleString('en')} bytes), ` +
`${summary.samples.toLocaleString('en')} samples (${summary.sampleTypes.join(', ')})\n`);
        }
      }),
    );
}
