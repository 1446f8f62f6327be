/**
 * `profpack dump FILE [--json]`: every sample of a Tachyon profile. With
 * --json, the shape of the shared vectors' *.expected.json (CPython's own
 * dump): { accepted, stage, error: { code, message } | null, info, samples }.
 * A file the reader rejects is still a JSON answer (exit 0); a file that
 * cannot be read at all is a user error.
 */
import type { Command } from 'commander';
import { ErrorCode, ProfpackError } from '../../errors';
import { dumpProfile, dumpToJsonText } from '../../tachyon/index';

export function registerDump(program: Command): void {
  program
    .command('dump')
    .description('print every sample of a Tachyon profile, as CPython 3.15 reads it')
    .argument('<file>', 'a Tachyon .bin file')
    .option('--json', 'the JSON of the shared vectors (*.expected.json)')
    .action((file: string, options: { json?: boolean }) => {
      const dump = dumpProfile(file);
      if (dump.error?.code === ErrorCode.TACHYON_IO) throw new ProfpackError(dump.error.message, { code: dump.error.code });
      if (options.json) {
        process.stdout.write(dumpToJsonText(dump));
        return;
      }
      const lines: string[] = [];
      for (const s of dump.samples) {
        const stack = s.frames.map((f) => `${f.funcname} (${f.filename}:${f.lineno ?? '?'})`).join(' <- ');
        lines.push(`${s.timestamp_us} thread ${s.thread_id}/${s.interpreter_id} status 0x${s.status.toString(16)}: ${stack || '(empty stack)'}`);
      }
      if (lines.length) process.stdout.write(lines.join('\n') + '\n');
      if (dump.error) {
        throw new ProfpackError(`${dump.error.message} (stage ${dump.stage}${dump.samples_before_error !== undefined ? `, after ${dump.samples_before_error} samples` : ''})`, {
          code: dump.error.code,
        });
      }
    });
}
