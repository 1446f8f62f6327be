/**
 * The writer process of `startRecording({ writer: 'process' })`: reads the
 * recording pipe on stdin (lib/record/wire) into a RecordingHost. The recorder's
 * 'end' message finalizes the file and is answered with the summary as one
 * JSON line on stdout (stop() waits for it); a pipe that ends without it (the
 * recorded process died) finalizes what arrived. Settings come as one JSON
 * argument. SIGINT/SIGTERM sent to this process itself finalize and exit.
 */
import { RecordingHost } from './host';
import type { OnFile } from '../settings/index';
import { decodeWriterSettings, encodeFileLine } from '../wire/index';

function main(): void {
  const settings = decodeWriterSettings(process.argv[2] ?? '{}');
  let host: RecordingHost;
  try {
    // With `heap` the file stores the heap frames' events (its heap section); the summary's `heap` counts them.
    host = new RecordingHost({
      out: settings.out,
      intervalUs: settings.intervalUs,
      compression: settings.compression,
      startTimeUs: settings.startTimeUs,
      epochOffsetUs: settings.epochOffsetUs,
      rotate: settings.rotate,
      flushIntervalMs: settings.flushIntervalMs,
      sourceMaps: settings.sourceMaps,
      heap: settings.heap === true,
    });
  } catch (err) {
    // The recorder rethrows it with the same code (e.g. ERR_TACHYON_WRITE_IO for a bad path).
    process.stdout.write(
      `error: ${JSON.stringify({ code: (err as { code?: unknown }).code, message: (err as Error).message })}\n`,
    );
    process.exit(2);
  }
  process.stdout.write('ready\n');
  // A rotating recording: each finished file is one 'file' line; the recorder calls onFile with it.
  const reportFile: OnFile = (file, stats) => void process.stdout.write(encodeFileLine(file, stats));
  host.startRotating(reportFile);
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    try {
      const summary = host.finish();
      if (host.lastFile !== undefined) reportFile(host.lastFile.path, host.lastFile.stats);
      if (summary.complete) process.stdout.write(`${JSON.stringify(summary)}\n`);
      else
        process.stderr.write(
          'profpack: the recorded process ended without stopping its recording; ' +
            `${summary.out} holds its ${summary.samples} samples up to the last harvest\n`,
        );
      process.exitCode = 0;
    } catch (err) {
      process.stderr.write(`profpack: ${(err as Error).message}\n`);
      process.stdout.write(`error: ${(err as Error).message}\n`);
      process.exitCode = 2;
    }
  };
  process.stdin.on('data', (bytes: Buffer) => {
    host.accept(bytes);
    if (host.ended) {
      finish();
      process.stdin.destroy();
    }
  });
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
