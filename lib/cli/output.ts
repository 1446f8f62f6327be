/**
 * Standard output for commands that may print without bound (dump): text is
 * sent in 64 KiB chunks, and a closed or failing stdout (`| head -1`: EPIPE;
 * /dev/full: ENOSPC) stops the command at the next chunk instead of producing
 * the rest for nobody. main() turns OutputClosed into a quiet exit (EPIPE) or
 * one ERR_IO line.
 */
const CHUNK = 1 << 16;

/** stdout went away or failed; `cause` is the write error. */
export class OutputClosed extends Error {
  constructor(override readonly cause: NodeJS.ErrnoException) {
    super(`cannot write standard output: ${cause.message}`);
    this.name = 'OutputClosed';
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
    if (this.size > 0) {
      const text = this.parts.join('');
      this.parts = [];
      this.size = 0;
      process.stdout.write(text);
    }
    // Writes to files and pipes are synchronous on Linux: a failure is recorded by the time write() returns.
    const failed = (process.stdout as { errored?: Error | null }).errored;
    if (failed) throw new OutputClosed(failed as NodeJS.ErrnoException);
  }
}
