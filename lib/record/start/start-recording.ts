/**
 * `startRecording()`: sample this process's JS stacks with V8's sampler (the agent, lib/record/program) and stream
 * them, one harvest at a time, into a Tachyon file or any sink: written here ('inline', a sink) or by a writer
 * process over a pipe (the default, and what `profpack record`'s preload does through `fd`).
 */
import { defaultCompression } from '../../tachyon/index';
import type { Frame } from '../../profile/index';
import { SourceMapper } from '../../sourcemap/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { ProfilingMode } from '../../tachyon/index';
// The flush default comes from settings/, not writer/host.ts: the inline writer loads no RecordingHost.
import { checkRange, checkRotate, DEFAULT_FLUSH_INTERVAL_MS, MAX_TIMER_MS, safeOnFile } from '../settings/index';
import type { OnFile, RotateOptions } from '../settings/index';
import { HeapFrameReceiver, recordingClock, type HeapEventSink } from '../wire/index';
import {
  checkAgentOptions,
  describeThisProcess,
  encodeRecordedBy,
  recordOverPipe,
  startAgent,
  type AgentOptions,
  type ChunkTarget,
  type Recording,
} from '../program/index';
import { ChunkIngester, createTachyonSink, RecordingHost, type TickSink, type TachyonSink } from '../writer/index';

export type { Recording, RecordingSummary } from '../program/index';

export interface RecordingOptions extends AgentOptions {
  /** Tachyon file to write (ignored when `sink` or `fd` is given). */
  out?: string;
  /** Where samples go instead of a file (e.g. a MemoryProfile). */
  sink?: TickSink & Partial<Pick<TachyonSink, 'finalize' | 'setStats' | 'close'>>;
  /**
   * Who writes `out`. 'process' (default): a small writer process fed over a
   * pipe (lib/record/wire), so that a hard crash of this process (SIGKILL, abort, out
   * of memory) loses at most the last harvest interval. 'inline': a
   * ProfileWriter in this process (no extra process; a hard crash loses the
   * recording). Either way the file is finalized on exit, SIGINT/SIGTERM and
   * fatal exceptions, and is final when stop() returns.
   */
  writer?: 'inline' | 'process';
  /** Send harvests over this pipe descriptor to a RecordingHost instead (what `profpack record`'s preload uses). */
  fd?: number;
  /**
   * How often the file is flushed with its recovery journal, in ms (default
   * 1000): what a SIGKILL of the writing process loses (`profpack recover`).
   */
  flushIntervalMs?: number;
  compression?: 'zstd' | 'none';
  /**
   * Rotate: finalize a file every `everyMs` and go on in the next one in
   * `dir` (named PREFIX-<start>-<pid>-NNNNN.tach), `keep` finished files at
   * most left on disk. `out` is then not used. Works with both writers.
   */
  rotate?: RotateOptions;
  /** Each finished file of a rotating recording (the last one at stop()), e.g. to ship it. */
  onFile?: OnFile;
  /** Where heap events go with `sink` or the inline writer (the writer process has its own). */
  heapSink?: HeapEventSink;
  /** Frames of compiled scripts written at their source-mapped position (default true; files only, not `sink`). */
  sourceMaps?: boolean;
}

export function startRecording(options: RecordingOptions = {}): Recording {
  const settings = checkAgentOptions(options);
  const writerMode = options.writer ?? 'process';
  if (writerMode !== 'inline' && writerMode !== 'process')
    throw new ProfpackError(`writer must be 'inline' or 'process', not ${String(writerMode)}`, {
      code: ErrorCode.INVALID_ARGUMENT,
    });
  const rotate = options.rotate === undefined ? undefined : checkRotate(options.rotate);
  if (rotate !== undefined && (options.sink !== undefined || options.fd !== undefined))
    throw new ProfpackError('rotate writes files: it excludes sink and fd', { code: ErrorCode.INVALID_ARGUMENT });
  const onFile = safeOnFile(options.onFile);
  const heap = settings.heap !== undefined;
  if (
    options.heapSink !== undefined &&
    (!heap ||
      (options.sink === undefined && writerMode === 'process') ||
      options.fd !== undefined ||
      rotate !== undefined)
  ) {
    throw new ProfpackError(
      'heapSink takes the heap events of a heap recording with sink or the inline writer ' +
        '(the writer process and fd have their own)',
      { code: ErrorCode.INVALID_ARGUMENT },
    );
  }
  if (options.sink !== undefined)
    return startAgent(settings, sinkTarget(options.sink, 0n, options.heapSink), undefined);
  if (options.fd !== undefined) return recordOverPipe({ fd: options.fd }, options);
  const out = options.out ?? 'profile.tach';
  const compression = options.compression ?? defaultCompression();
  const { flushIntervalMs, sourceMaps } = options;
  // Checked here: the inline writer's flushes run on the agent's timer, not the writer's (which checked it before),
  // and as the writer checks it (whole milliseconds) for both writers, before anything starts.
  if (flushIntervalMs !== undefined) {
    checkRange('flushIntervalMs', flushIntervalMs, 1, MAX_TIMER_MS, 'ms');
    if (!Number.isInteger(flushIntervalMs))
      throw new ProfpackError(`flushIntervalMs must be a whole number of milliseconds, not ${flushIntervalMs}`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `an integer in 1..${MAX_TIMER_MS}`,
      });
  }
  if (writerMode === 'process')
    return recordOverPipe({ writer: { out, compression, rotate, flushIntervalMs, sourceMaps }, onFile }, options);
  // Inline: the writer in this process. A file recording is on the Unix epoch (V8's own sample times are monotonic).
  const { startTimeUs, epochOffsetUs } = recordingClock();
  // The writer's flushes and rotations run on the agent's timers (ChunkTarget.timed says why), not the writer's own.
  const flushEveryMs = flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
  const about = describeThisProcess(settings, sourceMaps !== false);
  if (rotate !== undefined) {
    const host = new RecordingHost({
      out,
      intervalUs: settings.intervalUs,
      compression,
      startTimeUs,
      epochOffsetUs,
      rotate,
      flushIntervalMs,
      sourceMaps,
      heap,
      timers: 'caller',
    });
    host.setRecordedBy(about);
    const timed = [
      { everyMs: flushEveryMs, run: () => host.flush() },
      { everyMs: rotate.everyMs, run: () => host.rotateAndReport(onFile) },
    ];
    return startAgent(settings, { ...hostTarget(host, onFile), timed }, out);
  }
  const mapFrame = sourceMaps === false ? undefined : new SourceMapper().mapFrame;
  const sink = createTachyonSink(out, {
    sampleIntervalUs: BigInt(Math.round(settings.intervalUs)),
    startTimeUs,
    compression,
    mode: ProfilingMode.Wall,
    heap: heap && options.heapSink === undefined,
    mapFrame,
  });
  sink.note(encodeRecordedBy(about));
  return startAgent(
    settings,
    {
      ...sinkTarget(sink, epochOffsetUs, options.heapSink ?? sink.heap ?? undefined, mapFrame),
      timed: [{ everyMs: flushEveryMs, run: () => sink.flush() }],
    },
    out,
  );
}

/** Harvests written in this process: into a sink (a file's, or the caller's). */
function sinkTarget(
  sink: NonNullable<RecordingOptions['sink']>,
  clockOffsetUs: bigint,
  heapSink?: HeapEventSink,
  mapFrame?: (frame: Frame) => Frame,
): ChunkTarget {
  // Made at the first chunk: a heap-only recording never loads the CPU ingester (writer/cpu-ingest.ts).
  let ingester: ChunkIngester | undefined;
  // Heap polls take the pipe's coding here too: one path from poll to sink.
  const heap = new HeapFrameReceiver(heapSink, Number(clockOffsetUs));
  return {
    heapFrame: (frame) => heap.receive(frame.subarray(4), 0),
    chunk: (chunk, threadId, mainThread) =>
      void (ingester ??= new ChunkIngester(sink, clockOffsetUs, mapFrame)).ingest(chunk, BigInt(threadId), mainThread),
    end(durationSec, threads) {
      // The stats block: measured duration and the rate of samples actually taken.
      sink.setStats?.(
        durationSec,
        durationSec > 0 && ingester !== undefined ? ingester.samples / threads / durationSec : 0,
      );
      sink.finalize?.();
      return undefined;
    },
    alive: () => true,
  };
}

/**
 * The inline writer of a rotating recording: a RecordingHost in this process (the writer process runs the same
 * host).
 */
function hostTarget(host: RecordingHost, onFile: OnFile): ChunkTarget {
  return {
    heapFrame: (frame) => host.acceptHeapFrame(frame.subarray(4)),
    chunk: (chunk, threadId, mainThread) => host.ingestChunk(chunk, threadId, mainThread),
    end(durationSec, threads) {
      host.endRecording(durationSec, threads);
      host.finish();
      if (host.lastFile !== undefined) onFile(host.lastFile.path, host.lastFile.stats);
      return host.currentFile;
    },
    alive: () => true,
  };
}
