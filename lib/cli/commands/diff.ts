/** `profpack diff BASE NEW`: per-function changes, and with --flame a differential flame graph page. */
import { Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { diff, formatDiffTable } from '../../view/index';
import { action } from '../errors';

interface DiffFlags {
  flame?: boolean;
  output?: string;
  normalize?: boolean;
  sampleType?: string;
  total?: boolean;
  n: string;
  json?: boolean;
  title?: string;
}

export function registerDiff(program: Command): Command {
  return program
    .command('diff')
    .description('per-function self/total changes from BASE to NEW, largest first; --flame writes a differential flame graph (red grew, blue shrank)')
    .argument('<base>', 'the profile before')
    .argument('<new>', 'the profile after')
    .option('--flame', 'write the differential flame graph page')
    .option('-o, --output <file>', 'page to write (implies --flame; default diff.html)')
    .option('--sample-type <name>', 'the value compared (type or type/unit both profiles have; default: NEW\'s default type)')
    .option('--normalize', 'scale BASE to NEW\'s total before subtracting')
    .option('--total', 'sort by the change of total samples (default: self)')
    .option('-n <rows>', 'rows to show (0 = all)', '20')
    .option('--json', 'JSON output')
    .option('--title <text>', 'page title')
    .action(
      action((basePath: string, newPath: string, flags: DiffFlags) => {
        const limit = Number(flags.n);
        if (!Number.isInteger(limit) || limit < 0) throw new ProfpackError(`-n must be a whole number, not "${flags.n}"`, { code: ErrorCode.INVALID_ARGUMENT });
        const html = flags.output ?? (flags.flame === true ? 'diff.html' : undefined);
        const result = diff(basePath, newPath, { sampleType: flags.sampleType, normalize: flags.normalize === true, sort: flags.total === true ? 'total' : 'self', limit, html, title: flags.title });
        process.stdout.write(flags.json === true ? `${JSON.stringify(result, null, 2)}\n` : `${formatDiffTable(result)}\n`);
        if (html !== undefined && flags.json !== true) process.stderr.write(`wrote ${html} (${result.bytes} bytes)\n`);
      }),
    );
}
