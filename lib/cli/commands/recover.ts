/**
 * `profpack recover IN OUT`: a finalized profile from one whose writer died (lib/tachyon/recover/index.ts says what
 * survives).
 */
import type { Command } from 'commander';
import { outputPath } from '../output-option';
import { recover } from '../../tachyon/index';

export function registerRecover(program: Command): void {
  program
    .command('recover')
    .description(
      'salvage a profile whose writer died before finalize (killed, crashed, disk full): ' +
        'every sample up to its last flush, using IN.journal',
    )
    .argument('<in>', 'the unfinished profile (its 64-byte header is still zero)')
    .argument('[out]', 'the finalized profile to write (or -o)')
    .option('-o, --output <file>', 'the finalized profile to write')
    .option('--journal <path>', 'the recovery journal (default IN.journal)')
    .action((input: string, positional: string | undefined, flags: { journal?: string }, command: Command) => {
      const output = outputPath(command, positional);
      const r = recover(input, output, { journal: flags.journal });
      const how =
        r.source === 'journal'
          ? `up to the last of ${r.checkpoints} flushes`
          : r.source === 'finalized'
            ? 'already finalized, copied'
            : 'no journal: complete records, frames unnamed';
      process.stdout.write(
        `${output}: ${r.samples} samples, ${r.threads} threads, ${r.frames} frames ` +
          `(${how}; ${r.droppedBytes} sample-region bytes dropped)\n`,
      );
    });
}
