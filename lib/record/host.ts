/**
 * The writer end of a recording (see wire.ts): owns the Tachyon file,
 * ingests the harvests a recorded process sends, and finalizes the file when
 * the pipe ends — after the recorder's 'end' message, or without one when
 * the recorded process died. The file is then complete up to the last
 * harvest that arrived.
 */
import { rmSync } from 'node:fs';
import { createTachyonSink, type TachyonSink } from '../convert/tachyon';
import { ErrorCode, ProfpackError } from '../errors';
import { ProfilingMode } from '../tachyon/index';
import { ChunkIngester } from './ingest';
import { FrameParser, type WireMessage } from './wire';

export interface RecordingHostOptions {
  out: string;
  intervalUs: number;
  compression?: 'zstd' | 'none';
  /** Header start time, µs on the monotonic clock V8's sample times use (default now). */
  startTimeUs?: bigint;
}

export interface HostSummary {
  out: string;
  samples: number;
  threads: number;
  durationSec: number;
  /** False when the recorded process ended without its recorder's 'end' (it crashed or was killed). */
  complete: boolean;
  /** Bytes of a harvest that was being sent when the process died (dropped). */
  truncatedBytes: number;
  /** Whether any message arrived (false: the recorded command never ran the preload). */
  heard: boolean;
}

export class RecordingHost {
  private readonly sink: TachyonSink;
  private readonly ingester: ChunkIngester;
  private readonly parser = new FrameParser();
  private readonly threads = new Set<number>();
  private end: { durationSec: number; threads: number } | undefined;
  private summary: HostSummary | undefined;
  private failure: ProfpackError | undefined;

  /** Creates the file now, so that a path that cannot be written fails before anything runs. */
  constructor(private readonly options: RecordingHostOptions) {
    this.sink = createTachyonSink(options.out, {
      sampleIntervalUs: BigInt(Math.max(1, Math.round(options.intervalUs))),
      startTimeUs: options.startTimeUs ?? process.hrtime.bigint() / 1000n,
      compression: options.compression ?? 'zstd',
      mode: ProfilingMode.Wall,
    });
    this.ingester = new ChunkIngester(this.sink);
  }

  /** Bytes from the pipe. A stream that is not ours stops ingesting (reported by finish()). */
  accept(bytes: Buffer): void {
    if (this.failure !== undefined || this.summary !== undefined) return;
    try {
      for (const message of this.parser.push(bytes)) this.handle(message);
      this.failure = this.parser.failure;
    } catch (err) {
      this.failure = err instanceof ProfpackError ? err : new ProfpackError(`recording pipe: ${(err as Error).message}`, { code: ErrorCode.RECORD_FAILED, cause: err });
    }
  }

  private handle(message: WireMessage): void {
    if (message.kind === 'chunk') {
      this.threads.add(message.threadId);
      this.ingester.ingest(message.profile, BigInt(message.threadId), message.mainThread);
    } else if (message.kind === 'end') {
      this.end = { durationSec: message.durationSec, threads: message.threads };
    } else {
      throw new ProfpackError(`recording pipe: unknown message kind ${JSON.stringify((message as { kind?: unknown }).kind)}`, { code: ErrorCode.RECORD_FAILED, offset: this.parser.offset, expected: "'chunk' | 'end'" });
    }
  }

  /** Whether the recorder's 'end' message has arrived. */
  get ended(): boolean {
    return this.end !== undefined;
  }

  get samples(): number {
    return this.ingester.samples;
  }

  /**
   * Writes the stats block and finalizes. Without the recorder's 'end' the
   * duration is the span of the samples that arrived. Idempotent. Throws the
   * stream's error, if any, after finalizing what came before it.
   */
  finish(): HostSummary {
    if (this.summary !== undefined) return this.summary;
    const ing = this.ingester;
    const span = ing.firstTimeUs !== undefined && ing.lastTimeUs !== undefined ? Number(ing.lastTimeUs - ing.firstTimeUs) / 1e6 : 0;
    const durationSec = this.end?.durationSec ?? span;
    const threads = Math.max(1, this.end?.threads ?? this.threads.size);
    this.sink.setStats(durationSec, durationSec > 0 ? ing.samples / threads / durationSec : 0);
    this.sink.finalize();
    this.summary = {
      out: this.options.out,
      samples: ing.samples,
      threads: this.end?.threads ?? this.threads.size,
      durationSec,
      complete: this.end !== undefined,
      truncatedBytes: this.parser.leftover,
      heard: this.parser.offset > 0,
    };
    if (this.failure !== undefined) throw this.failure;
    return this.summary;
  }

  /** Discards the file (the command could not even start): closed and removed. */
  abandon(): void {
    if (this.summary !== undefined) return;
    this.sink.close();
    rmSync(this.options.out, { force: true });
  }
}
