/**
 * The profpack command run inside the test process (no Node start per command: the oracle suite runs
 * hundreds): stdout and stderr captured, process.exit turned into a returned status, user errors printed
 * as the CLI prints them (one `profpack: CODE: message` line, status 2).
 */
import { CommanderError } from 'commander';
import { buildProgram } from '../../lib/cli/main';
import { userErrorLine } from '../../lib/cli/errors';

export interface CliRun {
  status: number;
  stdout: string;
  stderr: string;
}

class Exited extends Error {
  constructor(readonly status: number) {
    super(`exit ${status}`);
  }
}

/** One command at a time: each replaces process.stdout.write and process.exit while it runs. */
let queue: Promise<unknown> = Promise.resolve();

/** `profpack ARGS` (absolute paths), in this process, after the commands already asked for. */
export function profpack(args: string[]): Promise<CliRun> {
  const next = queue.then(() => runOne(args));
  queue = next.catch(() => undefined);
  return next;
}

async function runOne(args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { out: process.stdout.write, err: process.stderr.write, exit: process.exit };
  process.stdout.write = (chunk: string | Uint8Array) => out.push(String(chunk)) > 0;
  process.stderr.write = (chunk: string | Uint8Array) => err.push(String(chunk)) > 0;
  process.exit = (code?: number) => {
    throw new Exited(code ?? 0);
  };
  let status = 0;
  try {
    const argv = ['node', 'profpack', ...args];
    await buildProgram(argv).parseAsync(argv);
  } catch (e) {
    if (e instanceof Exited) status = e.status;
    else if (e instanceof CommanderError) {
      err.push(`profpack: ERR_USAGE: ${e.message}\n`);
      status = 2;
    } else {
      const line = userErrorLine(e);
      if (line === null) throw e;
      err.push(line + '\n');
      status = 2;
    }
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exit = saved.exit;
  }
  return { status, stdout: out.join(''), stderr: err.join('') };
}

/** `profpack ARGS`, which must succeed; its stdout. */
export async function profpackOk(args: string[]): Promise<string> {
  const r = await profpack(args);
  if (r.status !== 0) throw new Error(`profpack ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}
