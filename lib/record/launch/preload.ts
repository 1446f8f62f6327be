/**
 * The preload `profpack record` passes to the target (`node --require`):
 * settings come in PROFPACK_RECORD_* variables. On the main thread it starts
 * the recording (finalized on exit, signals and fatal exceptions, see
 * startRecording); in a worker thread, with --workers, it starts the worker
 * agent (with --heap, recording that worker's heap too). Harvests go over the pipe `profpack record` passed as
 * PROFPACK_RECORD_FD (lib/record/wire), which is removed from the environment at
 * once so that child processes the target spawns do not send into it too.
 */
import { fstatSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { RecordEnv, childFile, type ChildRecording, type InlineRecording } from '../settings/index';
// The agent only: the file is written in another process, and the program loads none of the writer's code.
import {
  announceUnrecordedWorker,
  asRecorderWork,
  defaultChannelName,
  recordOverPipe,
  startWorkerAgent,
} from '../program/index';
import { FdSender } from '../wire/index';
import type * as recordingModule from '../start/index';
import type { HeapOptions } from '../settings/index';
import { isProfpackError, type ProfpackError } from '../../errors';

function numberFrom(name: string): number | undefined {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? undefined : Number(raw);
}

/** libuv's st_mode for a pipe on Windows (_S_IFIFO), where Node defines no S_IFIFO and isFIFO() is false. */
const WINDOWS_PIPE_MODE = 0o010000;

/**
 * The recording pipe is a socket pair (Node's 'pipe' stdio), a FIFO, or a
 * named pipe on Windows; anything else is not ours. The stat is a bigint one
 * on purpose: Node 20's plain stats all land in one shared array, which
 * fs.realpathSync reads back as "the last path was a socket or FIFO" and then
 * stops resolving symlinks — the main script of a symlinked npm bin
 * (node_modules/.bin/tsc) then loads from the link's folder and its relative
 * requires fail. Bigint stats fill another array.
 */
function isPipe(fd: number): boolean {
  if (!Number.isInteger(fd) || fd < 0) return false;
  try {
    const st = fstatSync(fd, { bigint: true });
    return (
      st.isSocket() ||
      st.isFIFO() ||
      (process.platform === 'win32' && (Number(st.mode) & 0o170000) === WINDOWS_PIPE_MODE)
    );
  } catch {
    return false;
  }
}

/** A Node process started below the recorded one: its own file, written by its own writer process. */
function startChildRecording(raw: string): void {
  const settings = JSON.parse(raw) as ChildRecording;
  const workers = env[RecordEnv.workers] === '1';
  const channel = defaultChannelName();
  if (workers) env[RecordEnv.channel] = channel;
  const writer = {
    out: settings.base === undefined ? 'profile.tach' : childFile(settings.base, process.pid),
    rotate: settings.rotate,
    // record passes its choice; without one the writer process picks its default (zstd, or none without it).
    compression: settings.compression,
    flushIntervalMs: settings.flushIntervalMs,
    sourceMaps: settings.sourceMaps,
  };
  recordOverPipe(
    { writer, onFile: () => undefined },
    {
      intervalUs: numberFrom(RecordEnv.intervalUs),
      harvestMs: numberFrom(RecordEnv.harvestMs),
      workers,
      channel,
      sourceMaps: settings.sourceMaps,
    },
  );
}

/**
 * `record --inline`: the file is written here, by startRecording's inline writer (loaded only then), and the pipe
 * says only that the recording started (a 'ping') and, once the file is final, what it holds ('inline-end'). A
 * SIGKILL here leaves the file as last flushed, with its journal (`profpack recover`); record says so.
 */
function recordInline(fd: number, raw: string, agent: Parameters<typeof recordOverPipe>[1]): void {
  const inline = JSON.parse(raw) as InlineRecording;
  const sender = new FdSender(fd);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the writer loads only in this mode
  const { startRecording } = require('../start/index') as typeof recordingModule;
  // The ping goes after the samplers started: the recorder's work, not the program's allocation.
  asRecorderWork(() => {
    startRecording({
      ...agent,
      writer: 'inline',
      out: inline.out,
      compression: inline.compression,
      flushIntervalMs: inline.flushIntervalMs,
      sourceMaps: inline.sourceMaps,
      onStop: ({ samples, threads, durationSec, heapEvents }) =>
        void sender.send({ kind: 'inline-end', samples, threads, durationSec, heapEvents }),
    });
    sender.send({ kind: 'ping' });
  });
}

/** Tells profpack record why the recording could not start, and ends this process before the program runs. */
function failOverPipe(fd: number, err: ProfpackError): never {
  new FdSender(fd).send({ kind: 'failed', code: err.code, message: err.message });
  process.exit(2);
}

const env = process.env;
if (isMainThread) {
  const fd = numberFrom(RecordEnv.fd);
  const children = env[RecordEnv.children];
  if (fd === undefined && children !== undefined && children !== '') {
    try {
      startChildRecording(children);
    } catch (err) {
      process.stderr.write(
        `profpack: not recording child process ${process.pid}: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    }
  } else if (fd !== undefined) {
    delete env[RecordEnv.fd];
    const workers = env[RecordEnv.workers] === '1';
    const heapIntervalBytes = numberFrom(RecordEnv.heapIntervalBytes);
    const nearLimitRatio = numberFrom(RecordEnv.heapNearLimitRatio);
    delete env[RecordEnv.heapIntervalBytes];
    delete env[RecordEnv.heapNearLimitRatio];
    const polls = env[RecordEnv.heapPolls] === 'harvest' ? 'harvest' : 'paced';
    delete env[RecordEnv.heapPolls];
    const shortLived = env[RecordEnv.heapShortLived] === 'count' ? 'count' : 'stacks';
    delete env[RecordEnv.heapShortLived];
    const buffers = env[RecordEnv.heapBuffers] !== '0';
    delete env[RecordEnv.heapBuffers];
    const cpu = env[RecordEnv.cpu] !== '0';
    delete env[RecordEnv.cpu];
    const inline = env[RecordEnv.inline];
    delete env[RecordEnv.inline];
    const channel = defaultChannelName();
    const heap: HeapOptions | undefined =
      heapIntervalBytes === undefined
        ? undefined
        : { intervalBytes: heapIntervalBytes, nearLimitRatio, polls, shortLived, buffers };
    if (workers) env[RecordEnv.channel] = channel;
    // Workers copy this thread's environment when they start: theirs carries the heap settings.
    if (workers && heap !== undefined) env[RecordEnv.workerHeap] = JSON.stringify(heap);
    else delete env[RecordEnv.workerHeap];
    try {
      if (!isPipe(fd)) throw new Error(`descriptor ${fd} is not the recording pipe`);
      const agent = {
        intervalUs: numberFrom(RecordEnv.intervalUs),
        harvestMs: numberFrom(RecordEnv.harvestMs),
        workers,
        channel,
        heap,
        cpu,
      };
      if (inline !== undefined && inline !== '') recordInline(fd, inline, agent);
      else recordOverPipe({ fd }, agent);
    } catch (err) {
      // A setting that cannot be honoured (PROFPACK_HEAP_SAMPLER=native without the addon): profpack record reports
      // it (one line, exit 2) and the program does not run unrecorded.
      if (isProfpackError(err) && isPipe(fd)) failOverPipe(fd, err);
      // Otherwise the program runs anyway; only the recording is lost.
      process.stderr.write(`profpack: not recording: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
} else if (env[RecordEnv.workers] === '1' && env[RecordEnv.channel] !== undefined) {
  const heap = env[RecordEnv.workerHeap];
  startWorkerAgent({
    intervalUs: numberFrom(RecordEnv.intervalUs),
    harvestMs: numberFrom(RecordEnv.harvestMs),
    channel: env[RecordEnv.channel],
    heap: heap === undefined || heap === '' ? undefined : (JSON.parse(heap) as HeapOptions),
  });
} else if (env[RecordEnv.workers] === '0') {
  // A worker of a recorded program that runs unrecorded: the main thread's agent says so, once.
  announceUnrecordedWorker();
}
