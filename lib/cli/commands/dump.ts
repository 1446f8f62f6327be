/**
 * `profpack dump FILE [--json]`: every sample of a Tachyon profile. With
 * --json, the shape of the shared vectors' *.expected.json (CPython's own
 * dump, docs/interop.md): schema, file, …, accepted, stage, error ({ code,
 * message } | null), info, replay_count, replay_stats, collect_calls, layout,
 * samples.
 * A file the reader rejects is still printed as its JSON answer, then exits 2;
 * a file that cannot be read at all is a user error with no JSON.
 *
 * Output streams, so memory stays bounded for any file: --json reads the file
 * twice (the verdict and the replay's counts head the JSON, the samples
 * follow), text mode once.
 */
import type { Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { dumpProfile, writeDumpJson, type Dump } from '../../tachyon/index';
import { Output } from '../output';

const UNREADABLE: readonly string[] = [ErrorCode.TACHYON_IO, ErrorCode.NOT_REGULAR_FILE];

function rejected(dump: Dump): ProfpackError {
  const error = dump.error!;
  return new ProfpackError(
    `${error.message} (stage ${dump.stage}` +
      `${dump.samples_before_error !== undefined ? `, after ${dump.samples_before_error} samples` : ''})`,
    {
      code: error.code,
    },
  );
}

export function registerDump(program: Command): void {
  program
    .command('dump')
    .description('print every sample of a Tachyon profile, as CPython 3.15 reads it')
    .argument('<file>', 'a Tachyon .bin file')
    .option('--json', 'the JSON of the shared vectors (*.expected.json)')
    .action((file: string, options: { json?: boolean }) => {
      const out = new Output();
      if (options.json) {
        const verdict = dumpProfile(file, {}, () => {});
        if (verdict.error !== null && UNREADABLE.includes(verdict.error.code))
          throw new ProfpackError(verdict.error.message, { code: verdict.error.code });
        writeDumpJson(
          verdict,
          (emit) => {
            if (!verdict.accepted) return; // the vectors list no samples for a rejected file
            const again = dumpProfile(file, {}, emit);
            if (again.error) throw rejected(again); // the file changed between the two reads
          },
          (text) => out.write(text),
        );
        out.flush();
        if (verdict.error) throw rejected(verdict);
        return;
      }
      const stacks = new WeakMap<object, string>();
      const dump = dumpProfile(file, {}, (s) => {
        let stack = stacks.get(s.frames);
        if (stack === undefined) {
          stack = s.frames.map((f) => `${f.funcname} (${f.filename}:${f.lineno ?? '?'})`).join(' <- ');
          stacks.set(s.frames, stack);
        }
        out.write(
          `${s.timestamp_us} thread ${s.thread_id}/${s.interpreter_id} status 0x${s.status.toString(16)}: ` +
            `${stack || '(empty stack)'}\n`,
        );
      });
      if (dump.error !== null && UNREADABLE.includes(dump.error.code))
        throw new ProfpackError(dump.error.message, { code: dump.error.code });
      out.flush();
      if (dump.error) throw rejected(dump);
    });
}
