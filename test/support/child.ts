/** The node child processes tests start: measuring children, and long-lived ones watched by their output. */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';

/** Runs node with these arguments and returns the last line it prints, parsed; a failed child is thrown. */
export function childJson<T>(nodeArgs: string[], timeoutMs = 180_000): T {
  const run = spawnSync(process.execPath, nodeArgs, { encoding: 'utf8', timeout: timeoutMs });
  if (run.status !== 0) throw new Error(`child failed (status ${run.status}, signal ${run.signal}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as T;
}

export interface ChildOutput {
  /** The child's stdout and stderr so far, in the order they arrived. */
  text(): string;
  /** Resolves with the first match of `pattern` in the output, rejects when none has come within `ms`. */
  when(pattern: RegExp, ms: number): Promise<RegExpMatchArray>;
}

/** Collects a child's stdout+stderr from now on. */
export function childOutput(child: ChildProcess): ChildOutput {
  let text = '';
  const waiting = new Set<() => void>();
  const look = (b: Buffer): void => {
    text += b.toString();
    for (const check of waiting) check();
  };
  child.stdout?.on('data', look);
  child.stderr?.on('data', look);
  return {
    text: () => text,
    when: (pattern, ms) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const m = text.match(pattern);
          if (m === null) return;
          clearTimeout(timer);
          waiting.delete(check);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`no ${pattern} within ${ms} ms in: ${text}`));
        }, ms);
        waiting.add(check);
        check();
      }),
  };
}

/**
 * Processes a test file's children start outside its control (a recorded target that outlives its recorder):
 * each pid added is sent SIGKILL after the file's tests, whether or not a test got to kill it.
 */
export function strayChildren(): { add(pid: number): void } {
  const pids: number[] = [];
  afterAll(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  return { add: (pid) => pids.push(pid) };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process with this pid is still there (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
