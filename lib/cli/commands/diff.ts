/** `profpack diff BASE NEW`: per-function changes, and with --flame a differential flame graph page. */
import { type Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { heapProfile, type HeapMoment } from '../../memory/index';
import { refuseInputAsOutput } from '../../output-file';
import { diff, diffSources, formatDiffTable, type DiffFileOptions } from '../../view/index';
import { heapMoment, openHeapInputs, wantsHeap } from '../heap-input';
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
  heap?: boolean;
  at?: string[];
}

export function registerDiff(program: Command): Command {
  return program
    .command('diff')
    .description(
      'per-function self/total changes from BASE to NEW, largest first; ' +
        '--flame writes a differential flame graph (red grew, blue shrank)',
    )
    .argument('<base>', 'the profile before')
    .argument('[new]', 'the profile after (heap: omit it to compare two moments of BASE, --at A --at B)')
    .option('--flame', 'write the differential flame graph page')
    .option('-o, --output <file>', 'page to write (implies --flame; default diff.html)')
    .option(
      '--sample-type <name>',
      "the value compared (type or type/unit both profiles have; default: NEW's default type)",
    )
    .option('--normalize', "scale BASE to NEW's total before subtracting")
    .option('--total', 'sort by the change of total samples (default: self)')
    .option('-n <rows>', 'rows to show (0 = all)', '20')
    .option('--json', 'JSON output')
    .option('--title <text>', 'page title')
    .option('--heap', 'heap recordings: what was in use (inuse_space by default; any heap sample type), at --at')
    .option(
      '--at <moment>',
      'heap: the moment of BASE, then of NEW (peak | end | MS after the start; default end); ' +
        'given twice with one file, two moments of it',
      (v: string, all: string[] | undefined) => [...(all ?? []), v],
    )
    .action(
      action((basePath: string, newPath: string | undefined, flags: DiffFlags) => {
        const limit = Number(flags.n);
        if (!Number.isInteger(limit) || limit < 0)
          throw new ProfpackError(`-n must be a whole number, not "${flags.n}"`, { code: ErrorCode.INVALID_ARGUMENT });
        const html = flags.output ?? (flags.flame === true ? 'diff.html' : undefined);
        const sort = flags.total === true ? 'total' : 'self';
        const normalize = flags.normalize === true;
        const { sampleType, title } = flags;
        const options: DiffFileOptions = { sampleType, normalize, sort, limit, html, title };
        let result: ReturnType<typeof diff>;
        if (wantsHeap(flags, [basePath])) result = diffHeap(basePath, newPath, flags.at ?? [], options);
        else if (newPath === undefined)
          throw new ProfpackError('diff needs NEW, unless it compares two moments of a heap recording (--at A, B)', {
            code: ErrorCode.INVALID_ARGUMENT,
            expected: 'BASE NEW',
          });
        else result = diff(basePath, newPath, options);
        process.stdout.write(
          flags.json === true ? `${JSON.stringify(result, null, 2)}\n` : `${formatDiffTable(result)}\n`,
        );
        if (html !== undefined && flags.json !== true) process.stderr.write(`wrote ${html} (${result.bytes} bytes)\n`);
      }),
    );
}

/** Heap profiles of two moments of one recording, or of two recordings, diffed in bytes (inuse_space unless asked). */
function diffHeap(basePath: string, newPath: string | undefined, ats: string[], options: DiffFileOptions) {
  const moments: (HeapMoment | undefined)[] = ats.map(heapMoment);
  if (ats.length > 2)
    throw new ProfpackError("--at is given at most twice (BASE's moment, then NEW's)", {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  if (newPath === undefined && ats.length !== 2)
    throw new ProfpackError('two moments of one heap recording: --at A --at B (or give NEW)', {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: '--at A --at B',
    });
  const inputs = newPath === undefined ? [basePath] : [basePath, newPath];
  if (options.html !== undefined) refuseInputAsOutput(options.html, inputs);
  const profileAt = (file: string, at: HeapMoment | undefined) => {
    const trace = openHeapInputs([file]);
    try {
      return heapProfile(trace, { at }).profile;
    } finally {
      trace.close?.();
    }
  };
  const base = profileAt(basePath, moments[0]);
  const next = profileAt(newPath ?? basePath, moments.length === 2 ? moments[1] : moments[0]);
  const from = `${basePath}${ats[0] === undefined ? '' : ` at ${ats[0]}`}`;
  const to = `${newPath ?? basePath}${moments.length === 2 ? ` at ${ats[1]}` : ''}`;
  const title = options.title ?? `${from} → ${to} — profpack heap diff`;
  return diffSources(base, next, { ...options, sampleType: options.sampleType ?? 'inuse_space', title });
}
