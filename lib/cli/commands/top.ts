/** `profpack top FILE`: where the samples are, by function, file, line or thread. */
import { type Command, Option } from 'commander';
import { formatLabels, openProfile } from '../../formats/index';
import { listProfileFiles, openProfiles } from '../../fleet/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { inputSize } from '../../input';
import { aggregate, formatTable, STATUS_FILTERS, type AggregateBy, type AggregateOptions } from '../../query/index';
import type { AggregateResult } from '../../query/index';
import { formatValue } from '../../profile/index';
import { heapProfile } from '../../memory/index';
import { heapInfoLine, heapMoment, heapSamplerOf, openHeapInputs, peakIncludesGarbage, wantsHeap } from '../heap-input';
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
  at?: string;
  heap?: boolean;
}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n))
    throw new ProfpackError(`${flag} must be a number, not "${value}"`, { code: ErrorCode.INVALID_ARGUMENT });
  return n;
}

export function registerTop(program: Command): Command {
  return program
    .command('top')
    .description(
      'the functions, files, lines or threads with the most value ' + '(samples, time, bytes…) of a sample type',
    )
    .argument('<files...>', `profiles (${formatLabels()}) or directories of them; ` + 'many are aggregated together')
    .addOption(
      new Option('--by <key>', 'group samples by').choices(['function', 'file', 'line', 'thread']).default('function'),
    )
    .option('--self', 'sort by self samples (innermost frame) [default]')
    .option('--total', 'sort by total samples (anywhere on the stack)')
    .option('--thread <id>', 'only this thread (ID or ID@INTERPRETER)')
    .option('--from <ms>', 'window start, ms after the profile start')
    .option('--to <ms>', 'window end, ms after the profile start')
    .addOption(
      new Option(
        '--status <name>',
        'only samples with this status: for Node recordings on-cpu, idle, gc, main; ' +
          'for CPython also gil, no-gil, gil-requested, exception, unknown, off-cpu',
      ).choices(Object.keys(STATUS_FILTERS)),
    )
    .option('-n <rows>', 'rows to show (0 = all)', '20')
    .option('--json', 'JSON output')
    .option(
      '--source-maps <dir>',
      'read frames of compiled scripts at their source (the scripts and their maps are under DIR)',
    )
    .option(
      '--sample-type <name>',
      'the sample type to sum (type or type/unit, e.g. alloc_space; ' +
        "default: the profile's default type, else the first)",
    )
    .option(
      '--heap',
      "a heap recording's allocations (alloc_objects, alloc_space) and what was in use " +
        '(inuse_objects, inuse_space: the default); implied by --at and by those sample types',
    )
    .option(
      '--at <moment>',
      'heap: in use at MS after the start, at the peak of live bytes (estimated), or at the end ' +
        '(peak | end | MS; default end); --from/--to choose the allocations counted',
    )
    .action(
      action((inputs: string[], flags: TopFlags) => {
        if (flags.self === true && flags.total === true)
          throw new ProfpackError('--self and --total exclude each other', { code: ErrorCode.INVALID_ARGUMENT });
        if (wantsHeap(flags, inputs)) return topHeap(inputs, flags);
        const files = listProfileFiles(inputs);
        // One file as before; many as one stream (--from/--to then count from the earliest file's start).
        const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
        const source = withMappedFrames(
          files.length === 1 ? openProfile(files[0]!) : openProfiles(files),
          maps?.mapFrame,
        );
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
            onProgress: progressBar(
              'reading',
              files.reduce((sum, f) => sum + inputSize(f), 0),
            ),
          });
          process.stdout.write(
            flags.json === true ? `${JSON.stringify(result, null, 2)}\n` : `${formatTable(result)}\n`,
          );
          for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
        } finally {
          source.close();
        }
      }),
    );
}

/** `top` of a heap recording: its heap profile for the window and moment asked, through the same aggregate(). */
function topHeap(inputs: string[], flags: TopFlags): void {
  const at = heapMoment(flags.at);
  const sampler = heapSamplerOf(inputs);
  const trace = openHeapInputs(inputs);
  let built: ReturnType<typeof heapProfile>;
  try {
    built = heapProfile(trace, { fromMs: number(flags.from, '--from'), toMs: number(flags.to, '--to'), at });
  } finally {
    trace.close?.();
  }
  const maps = flags.sourceMaps === undefined ? undefined : new SourceMapper(flags.sourceMaps);
  const options: AggregateOptions = {
    by: flags.by,
    sort: flags.total === true ? 'total' : 'self',
    thread: flags.thread,
    status: flags.status,
    limit: number(flags.n, '-n'),
    sampleType: flags.sampleType ?? 'inuse_space',
  };
  if (flags.heap !== true && flags.at === undefined && flags.sampleType === undefined)
    process.stderr.write(
      'profpack: a heap-only recording (record --no-cpu): no CPU samples; showing the heap in use at the end ' +
        '(--sample-type alloc_space for what was allocated)\n',
    );
  const result = aggregate(withMappedFrames(built.profile, maps?.mapFrame), options);
  // A heap profile's records are allocation stacks (one per thread and stack), not samples: say so.
  const { samples: _records, ...counted } = result;
  const heap = { ...built.info, peakIncludesGarbage: peakIncludesGarbage(built.info, sampler) };
  process.stdout.write(
    flags.json === true
      ? `${JSON.stringify({ ...counted, stacks: result.records, heap }, null, 2)}\n`
      : `${heapTable(result)}\n${heapInfoLine(built.info, sampler)}\n`,
  );
  for (const warning of maps?.warnings ?? []) process.stderr.write(`profpack: warning: ${warning}\n`);
}

/** The table with its footer in a heap profile's words: its records are allocation stacks. */
function heapTable(result: AggregateResult): string {
  const lines = formatTable(result).split('\n');
  const what = `${result.sampleType.type}/${result.sampleType.unit}`;
  const of = result.scanned !== result.records ? ` of ${result.scanned}` : '';
  const total = formatValue(result.total, result.sampleType.unit);
  lines[lines.length - 1] = `${result.records}${of} allocation stacks; ${what} total ${total}`;
  return lines.join('\n');
}
