/**
 * The preload `profpack record` passes to the target (`node --require`):
 * settings come in PROFPACK_RECORD_* variables. On the main thread it starts
 * the recording (finalized on exit, signals and fatal exceptions, see
 * startRecording); in a worker thread, with --workers, it starts the worker
 * agent. PROFPACK_RECORD_OUT is removed from the environment at once so that
 * child processes the target spawns do not write into the same file.
 */
import { isMainThread } from 'node:worker_threads';
import { RecordEnv } from './preload-env';
import { startRecording, startWorkerAgent } from './recorder';


function numberFrom(name: string): number | undefined {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? undefined : Number(raw);
}

const env = process.env;
if (isMainThread) {
  const out = env[RecordEnv.out];
  if (out !== undefined && out !== '') {
    delete env[RecordEnv.out];
    const workers = env[RecordEnv.workers] === '1';
    const channel = `profpack-record-${process.pid}`;
    if (workers) env[RecordEnv.channel] = channel;
    try {
      startRecording({
        out,
        intervalUs: numberFrom(RecordEnv.intervalUs),
        harvestMs: numberFrom(RecordEnv.harvestMs),
        compression: env[RecordEnv.compression] === 'none' ? 'none' : 'zstd',
        workers,
        channel,
      });
    } catch (err) {
      // The program runs anyway; only the recording is lost.
      process.stderr.write(`profpack: not recording: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
} else if (env[RecordEnv.workers] === '1' && env[RecordEnv.channel] !== undefined) {
  startWorkerAgent({ intervalUs: numberFrom(RecordEnv.intervalUs), harvestMs: numberFrom(RecordEnv.harvestMs), channel: env[RecordEnv.channel] });
}
