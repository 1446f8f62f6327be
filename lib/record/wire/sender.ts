/**
 * The sending end of the recording pipe. Sends are synchronous (fs.writeSync), so the last harvest also goes out
 * from an 'exit' handler, where nothing asynchronous runs any more.
 */
import * as fs from 'node:fs';
import { encodeFrame, type WireMessage } from './framing';

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A full pipe that has not moved for this long means the writer is stuck: stop sending rather than hang the
 * program.
 */
export const SEND_STALL_MS = 30_000;

/**
 * Synchronous sends on a pipe descriptor. A pipe end libuv made non-blocking
 * answers EAGAIN when full: wait a millisecond and go on (the writer process
 * drains it). A closed pipe (EPIPE: the writer is gone) or one that stays
 * full for `stallMs` ends sending, once, with a warning: the recorded program
 * is never stopped by its recorder.
 */
export class FdSender {
  private broken = false;
  sentBytes = 0;

  constructor(
    private readonly fd: number,
    private readonly stallMs = SEND_STALL_MS,
  ) {}

  get ok(): boolean {
    return !this.broken;
  }

  send(message: WireMessage): boolean {
    return this.sendFrame(encodeFrame(message));
  }

  /** One whole frame, length word included. */
  sendFrame(frame: Buffer): boolean {
    if (this.broken) return false;
    let done = 0;
    let lastProgress = Date.now();
    while (done < frame.length) {
      try {
        done += fs.writeSync(this.fd, frame, done, frame.length - done);
        lastProgress = Date.now();
      } catch (err) {
        const stalled = Date.now() - lastProgress >= this.stallMs;
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN' && !stalled) {
          Atomics.wait(pause, 0, 0, 1);
          continue;
        }
        this.broken = true;
        const why = stalled ? `its pipe has been full for ${this.stallMs} ms` : (err as Error).message;
        process.emitWarning(`profpack: the recording's writer is gone (${why}); no more samples are sent`);
        return false;
      }
    }
    this.sentBytes += frame.length;
    return true;
  }
}
