/** `profpack leaks FILE|DIR`: allocation sites ranked by what they still hold and how steadily it grew. */
import { type Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import {
  externalMemoryTrends,
  formatExternalLines,
  formatLeakTable,
  leakSuspects,
  type ExternalMemoryTrend,
  type LeakReport,
} from '../../memory/index';
import { formatValue } from '../../profile/index';
import { openHeapInputs } from '../heap-input';
import { action } from '../errors';

export function registerLeaks(program: Command): Command {
  return program
    .command('leaks')
    .description(
      'leak suspects of a heap recording: allocation sites by the sampled bytes they still hold at the end ' +
        'and how steadily those grew (bytes/min, R² of a fitted line), with the evidence per site',
    )
    .argument('<files...>', 'a heap recording (profpack record --heap), or the rotated files of one (a directory)')
    .option('-n <rows>', 'suspects to show (0 = all)', '20')
    .option(
      '--json',
      'JSON output: { suspects: [{ funcname, filename, lineno, liveBytes, growthBytesPerMin, fit, … }], ' +
        'external: [{ threadId, endBytes, growthBytesPerMin, fit, suspect, … }], … }',
    )
    .action(
      action((inputs: string[], flags: { n: string; json?: boolean }) => {
        const limit = Number(flags.n);
        if (!Number.isInteger(limit) || limit < 0)
          throw new ProfpackError(`-n must be a whole number, not "${flags.n}"`, {
            code: ErrorCode.INVALID_ARGUMENT,
            expected: 'a whole number',
          });
        const trace = openHeapInputs(inputs);
        let report: LeakReport;
        let external: ExternalMemoryTrend[];
        try {
          report = leakSuspects(trace, { limit });
          external = externalMemoryTrends(trace);
        } finally {
          trace.close?.();
        }
        const bytes = (v: number): string => formatValue(v, 'bytes');
        // The external line (Buffer/ArrayBuffer backing stores) goes under the sampled heap's table: V8 never saw it.
        process.stdout.write(
          flags.json === true
            ? `${JSON.stringify({ ...report, external }, null, 2)}\n`
            : `${[formatLeakTable(report, bytes), ...formatExternalLines(external, bytes)].join('\n')}\n`,
        );
      }),
    );
}
