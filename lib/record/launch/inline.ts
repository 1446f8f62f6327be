/**
 * `record --inline`'s end of the pipe: the preload writes the file in the program (preload.ts, recordInline), so
 * this process loads no writer and only listens: a 'ping' when the recording starts, 'inline-end' once the file is
 * final, 'failed' when it could not start. The same answers as RecordingHost's for runRecorded.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { FrameParser, type WireMessage } from '../wire/index';
import type { HostSummary } from '../writer/index';

export class InlineListener {
  private readonly parser = new FrameParser();
  private heard = false;
  private end: Extract<WireMessage, { kind: 'inline-end' }> | undefined;
  private startFailure: ProfpackError | undefined;

  constructor(private readonly out: string) {}

  /** Bytes from the pipe. */
  accept(bytes: Buffer): void {
    for (const message of this.parser.push(bytes)) {
      this.heard = true;
      if (message.kind === 'inline-end') this.end = message;
      else if (message.kind === 'failed')
        this.startFailure = new ProfpackError(String(message.message), {
          code: typeof message.code === 'string' ? message.code : ErrorCode.RECORD_FAILED,
        });
    }
  }

  /** The last message came: nothing more is waited for. */
  get settled(): boolean {
    return this.end !== undefined || this.startFailure !== undefined || this.parser.failure !== undefined;
  }

  /**
   * What the program's recording said it wrote. Without 'inline-end' the program died before finalizing (SIGKILL,
   * abort): `complete` false, and the file holds what was flushed, with its journal.
   */
  finish(): HostSummary {
    if (this.startFailure !== undefined) throw this.startFailure;
    if (this.parser.failure !== undefined) throw this.parser.failure;
    const end = this.end;
    const summary: HostSummary = {
      out: this.out,
      samples: end?.samples ?? 0,
      threads: end?.threads ?? 0,
      durationSec: end?.durationSec ?? 0,
      complete: end !== undefined,
      truncatedBytes: 0,
      heard: this.heard,
      stacksAtCap: 0,
    };
    if (end?.heapEvents !== undefined) summary.inlineHeapEvents = end.heapEvents;
    return summary;
  }
}
