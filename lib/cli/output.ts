/**
 * Standard output for commands that may print without bound (dump). Text goes
 * out in 64 KiB chunks with a synchronous write(2) on fd 1: a slow reader
 * holds the command back instead of Node queueing the whole dump in memory
 * (process.stdout to a pipe is asynchronous and unbounded), and a closed or
 * failing stdout (`| head -1`: EPIPE; /dev/full: ENOSPC) stops it at the
 * next chunk. main() turns OutputClosed into a quiet exit (EPIPE) or one
 * ERR_IO line. When process.stdout.write has been replaced (an embedding or a
 * test capturing output), that function is used instead.
 */
import { writeSync } from 'node:fs';

const CHUNK = 1 << 16;
const STDOUT_FD = 1;

/** stdout went away or failed; `cause` is the write error. */
export class OutputClosed extends Error {
  constructor(override readonly cause: NodeJS.ErrnoException) {
    super(`cannot write standard output: ${cause.message}`);
    this.name = 'OutputClosed';
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `bytes` to fd 1, waiting while a non-blocking pipe is full. */
function writeAllSync(bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(STDOUT_FD, bytes, done, bytes.length - done);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw new OutputClosed(err as NodeJS.ErrnoException);
      Atomics.wait(pause, 0, 0, 2);
    }
  }
}

export class Output {
  private parts: string[] = [];
  private size = 0;

  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= CHUNK) this.flush();
  }

  flush(): void {
    if (this.size === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.size = 0;
    if (Object.prototype.hasOwnProperty.call(process.stdout, 'write')) process.stdout.write(text);
    else writeAllSync(Buffer.from(text, 'utf8'));
  }
}
