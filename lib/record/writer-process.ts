/**
 * The writer process of `startRecording({ writer: 'process' })`: reads the
 * recording pipe on stdin (wire.ts) into a RecordingHost and finalizes the
 * file when the pipe ends, whether the recorded process said 'end' or died.
 * Settings come as one JSON argument. SIGINT/SIGTERM sent to this process
 * itself finalize what has arrived and exit.
 */
import { RecordingHost } from './host';
import type { WriterProcessSettings } from './recorder';

function main(): void {
  const raw = JSON.parse(process.argv[2] ?? '{}') as Omit<WriterProcessSettings, 'startTimeUs'> & { startTimeUs: string };
  let host: RecordingHost;
  try {
    host = new RecordingHost({ out: raw.out, intervalUs: raw.intervalUs, compression: raw.compression, startTimeUs: BigInt(raw.startTimeUs) });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    try {
      const summary = host.finish();
      if (!summary.complete) process.stderr.write(`profpack: the recorded process ended without stopping its recording; ${raw.out} holds its ${summary.samples} samples up to the last harvest\n`);
      process.exitCode = 0;
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exitCode = 2;
    }
  };
  process.stdin.on('data', (bytes: Buffer) => host.accept(bytes));
  process.stdin.on('end', finish);
  process.stdin.on('error', finish);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      finish();
      process.exit();
    });
  }
}

main();
