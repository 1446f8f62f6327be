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
 * JSON; a length with bit 31 set is a binary heap frame (heap/wire.ts).
 * Sends are synchronous (fs.writeSync), so the last harvest also goes out
 * from an 'exit' handler, where nothing asynchronous runs any more.
 */
import * as fs from 'node:fs';
import { callFrameKey, type CpuProfile, type CpuProfileCallFrame } from '../../v8/index';
import { ErrorCode, ProfpackError } from '../../errors';
import { HEAP_FRAME_FLAG } from '../heap/index';
import type { RecordedBy } from '../../recorded-by';

/**
 * A harvest as it crosses the pipe: V8's tree as parallel arrays of node
 * indices, each call frame sent once per pipe and named by number after that.
 * V8 sends every node's call frame again in every harvest; a long program's
 * one big harvest was ~5 MB of JSON, mostly repeated call frames, which the
 * writer parsed and keyed again.
 */
export interface WireProfile {
  /** Call frames first seen in this harvest: they take the next numbers, from 0 on each pipe. */
  newFrames: CpuProfileCallFrame[];
  /** Per node: its parent's index (-1: a root). */
  parents: number[];
  /** Per node: its call frame's number. */
  frames: number[];
  /** Per sample: its node's index (-1: a node the tree does not have). */
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
  /** V8's positionTicks of the nodes that have them: node index → [line, ticks, line, ticks, …] (lines 1-based). */
  lineTicks?: Record<number, number[]>;
}

/** Numbers call frames as one sender meets them (the sending side of WireProfile). */
export class FrameNumbers {
  private readonly numbers = new Map<string, number>();

  encode(profile: CpuProfile): WireProfile {
    const nodes = profile.nodes ?? [];
    const index = new Map<number, number>();
    for (let i = 0; i < nodes.length; i++) index.set(nodes[i]!.id, i);
    const parents = new Array<number>(nodes.length).fill(-1);
    const frames = new Array<number>(nodes.length);
    const newFrames: CpuProfileCallFrame[] = [];
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      for (const child of node.children ?? []) {
        const c = index.get(child);
        if (c !== undefined) parents[c] = i;
      }
      const cf = node.callFrame;
      const key = callFrameKey(cf);
      let n = this.numbers.get(key);
      if (n === undefined) {
        n = this.numbers.size;
        this.numbers.set(key, n);
        newFrames.push(cf);
      }
      frames[i] = n;
    }
    const samples = (profile.samples ?? []).map((id) => index.get(id) ?? -1);
    const wire: WireProfile = {
      newFrames,
      parents,
      frames,
      samples,
      timeDeltas: profile.timeDeltas ?? [],
      startTime: profile.startTime,
      endTime: profile.endTime,
    };
    for (let i = 0; i < nodes.length; i++) {
      const ticks = nodes[i]!.positionTicks;
      if (ticks === undefined || ticks.length === 0) continue;
      wire.lineTicks ??= {};
      wire.lineTicks[i] = ticks.flatMap((t) => [t.line, t.ticks]);
    }
    return wire;
  }
}

export type WireMessage =
  | { kind: 'chunk'; threadId: number; mainThread: boolean; profile: WireProfile }
  | { kind: 'end'; durationSec: number; threads: number }
  // First on the pipe: the recorded process (its note goes into every file, recorded-by.ts).
  | { kind: 'about'; about: RecordedBy }
  // A harvest with no new samples: tells the recorded process whether its writer is still there.
  | { kind: 'ping' }
  // A heap poll, binary (heap/wire.ts): the body after the length word, and where the frame began.
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
