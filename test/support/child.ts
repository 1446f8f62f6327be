/** A node child process whose outcome is the JSON line it prints last (the tests' measuring children). */
import { spawnSync } from 'node:child_process';

/** Runs node with these arguments and returns the last line it prints, parsed; a failed child is thrown. */
export function childJson<T>(nodeArgs: string[], timeoutMs = 180_000): T {
  const run = spawnSync(process.execPath, nodeArgs, { encoding: 'utf8', timeout: timeoutMs });
  if (run.status !== 0) throw new Error(`child failed (status ${run.status}, signal ${run.signal}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as T;
}
