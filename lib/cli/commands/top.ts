/** `profpack top FILE`: where the samples are, by function, file, line or thread. */
import { Command, Option } from 'commander';
import { openProfile } from '../../formats/index';
import { listProfileFiles, openProfiles } from '../../fleet/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { inputSize } from '../../input';
import { aggregate, formatTable, STATUS_FILTERS, type AggregateBy } from '../../query/index';
import { progressBar } from '../progress';
import { SourceMapper, withMappedFrames } from '../../sourcemap/index';
import { action } from '../errors';

interface TopFlags {
  by: AggregateBy;
  self?: boolean;
  total?: boolean;
  thread?: string;
  from?: string;
  to?: string;
  status?: string;
  n: string;
  json?: boolean;
  sampleType?: string;
  sourceMaps?: string;
}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ProfpackError(`${flag} must be a number, not "${value}"`, { code: ErrorCode.INVALID_ARGUMENT });
  return n;
}

export function registerTop(program: Command): Command {
  return program
    .command('top')
    .description('the functions, files, lines or threads with the most value (samples, time, bytes…) of a sample type')
    .argument('<files...>', 'profiles (Tachyon, .cpuprofile, pprof, speedscope, collapsed) or directories of them; many are aggregated together')
    .addOption(new Option('--by <key>', 'group samples by').choices(['function', 'file', 'line', 'thread']).default('function'))
    .option('--self', 'sort by self samples (innermost frame) [default]')
    .option('--total', 'sort by total samples (anywhere on the stack)')
    .option('--thread <id>', 'only this thread (ID or ID@INTERPRETER)')
    .option('--from <ms>', 'window start, ms after the profile start')
    .option('--to <ms>', 'window end, ms after the profile start')
    .addOption(new Option('--status <name>', 'only samples with this status: for Node recordings on-cpu, idle, gc, main; for CPython also gil, no-gil, gil-requested, exception, unknown, off-cpu').choices(Object.keys(STATUS_FILTERS)))
    .option('-n <rows>', 'rows to show (0 = all)', '20')
    .option('--json', 'JSON output')
    .option('--source-maps <dir>', 'read frames of compiled scripts at their source (the scripts and their maps are under DIR)')
    .option('--sample-type <name>', 'the sample type to sum (type or type/unit, e.g. alloc_space; default: the profile\'s default type, else the first)')
    .action(
      action((inputs: string[], flags: TopFlags) => {
        if (flags.self === true && flags.total === true) throw new ProfpackError('--self and --total exclude each other', { code: ErrorCode.INVALID_ARGUMENT });
        const files = listProfileFiles(inputs);
        // One file as before; many as one stream (--from/--to then count from the earliest file's start).
        const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
        const source = withMappedFrames(files.length === 1 ? openProfile(files[0]!) : openProfiles(files), maps?.mapFrame);
        try {
          const result = aggregate(source, {
            by: flags.by,
            sort: flags.total === true ? 'total' : 'self',
            thread: flags.thread,
            fromMs: number(flags.from, '--from'),
            toMs: number(flags.to, '--to'),
            status: flags.status,
            limit: number(flags.n, '-n'),
            sampleType: flags.sampleType,
            onProgress: progressBar('reading', files.reduce((sum, f) => sum + inputSize(f), 0)),
          });
          process.stdout.write(flags.json === true ? `${JSON.stringify(result, null, 2)}\n` : `${formatTable(result)}\n`);
          for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
        } finally {
          source.close();
        }
      }),
    );
}
