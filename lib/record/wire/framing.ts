/**
 * The pipe between a recorded process and the process that writes its file.
 *
 * `profpack record` (and `startRecording({ writer: 'process' })`) keep the
 * ProfileWriter out of the recorded process: the sampler there sends each
 * harvest over a pipe, and the writer process ingests it. A recorded process
 * that dies any way at all (SIGKILL, abort, out of memory) then loses only
 * the harvest it had not sent yet; the writer sees the pipe close and
 * finalizes the file.
 *
 * Framing: u32 little-endian byte length, then that many bytes of UTF-8
 * JSON; a length with bit 31 set is a binary heap frame (heap.ts).
 * A harvest travels as a WireChunk (cpu.ts); sender.ts writes the frames.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { HEAP_FRAME_FLAG } from './heap';
import type { RecordedBy } from '../../recorded-by';
import type { WireChunk } from './cpu';

export type WireMessage =
  | { kind: 'chunk'; threadId: number; mainThread: boolean; chunk: WireChunk }
  | { kind: 'end'; durationSec: number; threads: number }
  // First on the pipe: the recorded process (its note goes into every file, recorded-by.ts).
  | { kind: 'about'; about: RecordedBy }
  // A harvest with no new samples: tells the recorded process whether its writer is still there.
  | { kind: 'ping' }
  // The recording could not start (e.g. PROFPACK_HEAP_SAMPLER=native without the addon): the error, then nothing.
  | { kind: 'failed'; code: string; message: string }
  // record --inline: the file was written in the program, finalized; what it holds (agent.ts, RecordingSummary).
  | { kind: 'inline-end'; samples: number; threads: number; durationSec: number; heapEvents?: number }
  // A heap poll, binary (heap.ts): the body after the length word, and where the frame began.
  | { kind: 'heap'; body: Buffer; offset: number };

/** A frame larger than this is not one we sent: the stream is not ours, or corrupt. */
export const MAX_FRAME_BYTES = 1 << 30;

export function encodeFrame(message: WireMessage): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32LE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

/**
 * Splits a byte stream into messages; a partial frame at the end waits for
 * more bytes. A frame that is not ours (too long, not JSON) sets `failure`
 * and ends parsing; the messages before it are still returned.
 */
export class FrameParser {
  /**
   * Bytes not yet parsed, as they arrived: joined only once a whole frame is
   * there (a big harvest comes in dozens of pipe reads; joining at every read
   * made parsing quadratic in the frame's size).
   */
  private parts: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes consumed by whole frames so far (for error offsets). */
  offset = 0;
  failure: ProfpackError | undefined;

  push(bytes: Buffer): WireMessage[] {
    const out: WireMessage[] = [];
    if (this.failure !== undefined || bytes.length === 0) return out;
    this.parts.push(bytes);
    this.pendingBytes += bytes.length;
    while (this.pendingBytes >= 4) {
      const head = this.parts[0]!.length >= 4 ? this.parts[0]! : this.join();
      const word = head.readUInt32LE(0);
      const heap = (word & HEAP_FRAME_FLAG) !== 0;
      const size = heap ? word - HEAP_FRAME_FLAG : word;
      if (size > MAX_FRAME_BYTES) {
        this.failure = new ProfpackError(`recording pipe: a frame of ${size} bytes`, {
          code: ErrorCode.RECORD_FAILED,
          offset: this.offset,
          expected: `at most ${MAX_FRAME_BYTES} bytes`,
        });
        break;
      }
      if (this.pendingBytes < 4 + size) break;
      const all = this.join();
      try {
        // A copy: the stream's buffer is reused for what follows.
        if (heap) out.push({ kind: 'heap', body: Buffer.from(all.subarray(4, 4 + size)), offset: this.offset });
        else out.push(JSON.parse(all.toString('utf8', 4, 4 + size)) as WireMessage);
      } catch (err) {
        this.failure = new ProfpackError('recording pipe: a frame is not JSON', {
          code: ErrorCode.RECORD_FAILED,
          offset: this.offset,
          expected: 'a JSON message',
          cause: err,
        });
        break;
      }
      const rest = all.subarray(4 + size);
      this.parts = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
      this.offset += 4 + size;
    }
    return out;
  }

  /** The pending parts as one buffer (kept as the only part). */
  private join(): Buffer {
    if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts, this.pendingBytes)];
    return this.parts[0]!;
  }

  /** Bytes of a frame that never completed (the sender died mid-send). */
  get leftover(): number {
    return this.failure === undefined ? this.pendingBytes : 0;
  }
}
