/**
 * The 'process' writer of startRecording(): spawning it, and the lines it
 * answers on stdout (read synchronously: stop() also runs in 'exit'
 * handlers). The process itself is writer/process-main.ts.
 */
import { RecordEnv, WRITER_PROCESS_PATH } from '../settings/index';
import type * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import { ErrorCode, ProfpackError, type ErrorCodeValue } from '../../errors';
import type { OnFile } from '../settings/index';
import { FdSender, FILE_LINE, encodeWriterSettings, type WriterProcessSettings } from '../wire/index';

export interface WriterProcess {
  sender: FdSender;
  /** A rotating writer's finished files so far ('file' lines), without waiting. */
  pollFiles(onFile: OnFile): void;
  /**
   * After the 'end' message: blocks until the writer has finalized the file (its summary line); returns the last
   * file.
   */
  waitFinal(onFile: OnFile): string | undefined;
}

function fileLine(line: string, onFile: OnFile): boolean {
  if (!line.startsWith(FILE_LINE)) return false;
  const { path: file, stats } = JSON.parse(line.slice(FILE_LINE.length)) as {
    path: string;
    stats: Parameters<OnFile>[1];
  };
  onFile(file, stats);
  return true;
}

/** How long startRecording() waits for the writer process to create the file, and stop() for it to finalize. */
const WRITER_READY_TIMEOUT_MS = 20_000;
const WRITER_FINAL_TIMEOUT_MS = 60_000;

/**
 * The 'process' writer: `node writer/process-main.js` in its own process group (a
 * terminal's Ctrl-C must not kill it before the last harvest arrives),
 * reading the pipe on its stdin. On stdout it says 'ready' once the file is
 * created and answers the 'end' message with one line once the file is
 * final; both are read synchronously (stop() also runs in 'exit' handlers,
 * where nothing asynchronous does).
 */
export function spawnWriterProcess(settings: WriterProcessSettings): WriterProcess {
  const script = WRITER_PROCESS_PATH;
  if (!fs.existsSync(script))
    throw new ProfpackError(`the writer process script is missing (${script}); run "npm run compile"`, {
      code: ErrorCode.RECORD_FAILED,
    });
  // Required here: a program `profpack record` runs (a descriptor) never spawns a writer, and node:child_process
  // costs ~6 ms of CPU to load (bench/RESULTS.md, "Where the heap recording's CPU goes").
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { spawn } = require('node:child_process') as typeof childProcess;
  const child = spawn(process.execPath, [script, encodeWriterSettings(settings)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
    env: { ...process.env, [RecordEnv.children]: '' }, // not a child to record (it would record itself, and so on)
  });
  // The recording must not keep the program alive.
  child.unref();
  const handles = [child.stdin, child.stdout] as unknown as { _handle?: { fd?: number }; unref?: () => void }[];
  for (const h of handles) h.unref?.();
  const inFd = handles[0]!._handle?.fd;
  const outFd = handles[1]!._handle?.fd;
  if (typeof inFd !== 'number' || inFd < 0 || typeof outFd !== 'number' || outFd < 0) {
    child.kill();
    throw new ProfpackError(
      "writer: 'process' needs pipe descriptors, which this platform's Node does not expose; use writer: 'inline'",
      { code: ErrorCode.RECORD_FAILED },
    );
  }
  // Between harvests the event loop runs, and libuv reads the pipe into child.stdout's buffer: take that first.
  const lines = new LineReader(outFd, () => child.stdout?.read() as Buffer | null);
  // It answers 'ready' once the file is created, or why it could not be: a bad path fails here, as inline.
  const ready = lines.next(WRITER_READY_TIMEOUT_MS);
  if (ready !== 'ready') {
    child.stdin?.destroy();
    child.stdout?.destroy();
    if (ready?.startsWith('error: ')) {
      const { code, message } = JSON.parse(ready.slice(7)) as { code?: string; message: string };
      throw new ProfpackError(message, {
        code: (Object.values(ErrorCode) as string[]).includes(code ?? '')
          ? (code as ErrorCodeValue)
          : ErrorCode.RECORD_FAILED,
      });
    }
    throw new ProfpackError(
      `the recording's writer process did not start (no answer in ${WRITER_READY_TIMEOUT_MS} ms)`,
      { code: ErrorCode.RECORD_FAILED },
    );
  }
  const sender = new FdSender(inFd);
  return {
    sender,
    pollFiles(onFile) {
      for (let line = lines.next(0); line !== undefined; line = lines.next(0)) {
        // Anything else (an error) is for waitFinal.
        if (!fileLine(line, onFile)) {
          lines.unread(line);
          return;
        }
      }
    },
    waitFinal(onFile) {
      let line = lines.next(WRITER_FINAL_TIMEOUT_MS);
      let last: string | undefined;
      while (line !== undefined && line.startsWith(FILE_LINE)) {
        last = (JSON.parse(line.slice(FILE_LINE.length)) as { path: string }).path;
        fileLine(line, onFile);
        line = lines.next(WRITER_FINAL_TIMEOUT_MS);
      }
      child.stdin?.destroy();
      child.stdout?.destroy();
      if (!sender.ok || line === undefined || !line.startsWith('{')) {
        const why = line?.startsWith('error: ') ? `: ${line.slice(7)}` : ' (it is gone)';
        throw new ProfpackError(`the recording's writer process did not finalize ${last ?? settings.out}${why}`, {
          code: ErrorCode.RECORD_FAILED,
        });
      }
      return last;
    },
  };
}

/** Lines from a (non-blocking) pipe, read synchronously by polling. */
class LineReader {
  private text = '';
  private readonly chunk = Buffer.alloc(4096);
  private readonly pause = new Int32Array(new SharedArrayBuffer(4));
  private eof = false;

  constructor(
    private readonly fd: number,
    /** Bytes already read from the pipe by someone else (the stream over it), older than anything readSync gets. */
    private readonly buffered: () => Buffer | null = () => null,
  ) {}

  /** The next line; undefined at EOF, on a read error or after `timeoutMs` (0: only what has arrived). */
  next(timeoutMs: number): string | undefined {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.text.indexOf('\n');
      if (nl >= 0) {
        const line = this.text.slice(0, nl);
        this.text = this.text.slice(nl + 1);
        return line;
      }
      if (this.eof) return undefined;
      const early = this.buffered();
      if (early !== null && early.length > 0) {
        this.text += early.toString('utf8');
        continue;
      }
      try {
        const n = fs.readSync(this.fd, this.chunk, 0, this.chunk.length, null);
        if (n === 0) this.eof = true;
        else this.text += this.chunk.toString('utf8', 0, n);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= deadline) return undefined;
        Atomics.wait(this.pause, 0, 0, 2);
      }
    }
  }

  /** Puts a line back: the next next() returns it. */
  unread(line: string): void {
    this.text = `${line}\n${this.text}`;
  }
}
