/**
 * A recording whose file is written in another process: harvests go as frames over a pipe (lib/record/wire), to
 * `profpack record` (the pipe it passed the preload) or to a writer process spawned here. A recorded process that
 * dies any way at all then loses only the harvest it had not sent; the writer sees the pipe close and finalizes.
 */
import * as fs from 'node:fs';
import type { OnFile } from '../settings/index';
import { FdSender, recordingClock, type WriterProcessSettings } from '../wire/index';
import { checkAgentOptions, startAgent, type AgentOptions, type ChunkTarget, type Recording } from './agent';
import { describeThisProcess, type RecordedBy } from './recorded-by';
import { spawnWriterProcess, type WriterProcess } from './spawn-writer';

/** Where the pipe goes: a descriptor `profpack record` passed, or a writer process to spawn with these settings. */
export type PipeEnd =
  | { fd: number }
  | {
      writer: Omit<WriterProcessSettings, 'intervalUs' | 'startTimeUs' | 'epochOffsetUs' | 'heap'>;
      /** Each finished file of a rotating recording, reported by the writer process. */
      onFile: OnFile;
    };

/** Records this process over a pipe; `sourceMaps`: whether the writer maps frames (for the note on what recorded). */
export function recordOverPipe(end: PipeEnd, options: AgentOptions & { sourceMaps?: boolean }): Recording {
  const settings = checkAgentOptions(options);
  const about = describeThisProcess(settings, options.sourceMaps !== false);
  if ('fd' in end) return startAgent(settings, pipeTarget(new FdSender(end.fd), about, { fd: end.fd }), undefined);
  const writer = spawnWriterProcess({
    ...end.writer,
    intervalUs: settings.intervalUs,
    heap: settings.heap !== undefined,
    ...recordingClock(),
  });
  return startAgent(settings, pipeTarget(writer.sender, about, { writer, onFile: end.onFile }), end.writer.out);
}

function pipeTarget(
  sender: FdSender,
  about: RecordedBy,
  end: { fd: number } | { writer: WriterProcess; onFile: OnFile },
): ChunkTarget {
  sender.send({ kind: 'about', about });
  let sent = false;
  return {
    chunk(chunk, threadId, mainThread) {
      sent = true;
      sender.send({ kind: 'chunk', threadId, mainThread, chunk });
    },
    heapFrame(frame) {
      sent = true;
      sender.sendFrame(frame);
    },
    alive() {
      // The writer process reports the files it finished; hand them to onFile here.
      if ('writer' in end) end.writer.pollFiles(end.onFile);
      // An idle harvest still writes (a ping): only a write finds out that the writer has gone.
      if (!sent) sender.send({ kind: 'ping' });
      sent = false;
      return sender.ok;
    },
    end(durationSec, threads) {
      sender.send({ kind: 'end', durationSec, threads });
      if ('writer' in end) return end.writer.waitFinal(end.onFile);
      closeQuietly(end.fd);
      return undefined;
    },
  };
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed by the program, or never ours to close.
  }
}
