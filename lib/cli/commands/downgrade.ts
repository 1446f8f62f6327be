/** `profpack downgrade IN OUT`: a version-2 profile rewritten as version 1, which CPython 3.15 reads. */
import { compressionOf, compressionOption, type CompressionFlag } from '../compression';
import type { Command } from 'commander';
import { outputPath } from '../output-option';
import { downgrade } from '../../tachyon/index';

export function registerDowngrade(program: Command): void {
  program
    .command('downgrade')
    .description(
      'rewrite a format-version-2 profile as version 1 (same samples, same frame table), which CPython 3.15 reads',
    )
    .argument('<in>', 'a version-2 profile (ProfileWriter with formatVersion: 2)')
    .argument('[out]', 'the version-1 file to write (or -o)')
    .option('-o, --output <file>', 'the version-1 file to write')
    .addOption(compressionOption("version-1 sample region: zstd (level 5, CPython's) or none"))
    .action(
      (input: string, positional: string | undefined, flags: { compression: CompressionFlag }, command: Command) => {
        const output = outputPath(command, positional);
        const result = downgrade(input, output, { compression: compressionOf(flags.compression) });
        process.stdout.write(`${output}: format version 1, ${result.samples} samples, ${result.bytes} bytes\n`);
        // Said on stderr: the file is written, but version 1 could not keep these.
        for (const what of result.lost) process.stderr.write(`profpack: version 1 does not keep ${what}\n`);
      },
    );
}
