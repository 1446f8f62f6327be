/**
 * Renames and removals that Windows may refuse for a moment: a file that
 * another process holds open (an indexer, a virus scanner, a reader that did
 * not share delete access) fails with EBUSY, EPERM or EACCES until it lets
 * go. On Windows those are retried for about a second in all; elsewhere they
 * are final and pass straight through.
 */
import * as fs from 'node:fs';

const TRANSIENT = new Set(['EBUSY', 'EPERM', 'EACCES']);
/** Waits between attempts, in milliseconds (1.03 s in all). */
export const RETRY_WAITS_MS: readonly number[] = [10, 20, 40, 80, 160, 320, 400];

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `op`, again after each wait while it fails with a transient code on Windows. */
export function retryingOnWindows(
  op: () => void,
  platform: NodeJS.Platform = process.platform,
  wait: (ms: number) => void = sleep,
): void {
  for (let attempt = 0; ; attempt++) {
    try {
      op();
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (platform !== 'win32' || attempt >= RETRY_WAITS_MS.length || code === undefined || !TRANSIENT.has(code))
        throw err;
      wait(RETRY_WAITS_MS[attempt]!);
    }
  }
}

/** fs.renameSync(from, to), replacing `to`, retried on Windows. */
export function renameReplacing(from: string, to: string): void {
  retryingOnWindows(() => fs.renameSync(from, to));
}

/**
 * Removes a file, no error when it is gone (fs.rmSync's `force`), retried on Windows. unlink, not rmSync: Node 20's
 * rmSync compiles its rimraf module on first use, ~1 ms of each `profpack record` (the journal's removal).
 */
export function removeFile(file: string): void {
  retryingOnWindows(() => {
    try {
      fs.unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  });
}
