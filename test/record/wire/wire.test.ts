import { spawn } from 'node:child_process';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { CpuProfile } from '../../../lib/v8/index';
import { openProfile } from '../../../lib/formats/index';
import { samplesOf } from '../../support/model';
import { ProfileReader } from '../../../lib/tachyon/index';
import { ErrorCode, isProfpackError } from '../../../lib/errors';
import { RecordingHost } from '../../../lib/record/writer/index';
import {
  encodeFrame,
  FdSender,
  HarvestEncoder,
  FrameParser,
  MAX_FRAME_BYTES,
  type WireMessage,
} from '../../../lib/record/wire/index';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-wire-');

/** A V8-shaped chunk: (root) → main → one of three leaves, sample i at start + 100·(i+1). */
function chunk(start: number, leaves: number[]): CpuProfile {
  const cf = (functionName: string, lineNumber = 0) => ({
    functionName,
    scriptId: '1',
    url: 'file:///app.js',
    lineNumber,
    columnNumber: 0,
  });
  return {
    nodes: [
      { id: 1, callFrame: cf('(root)'), children: [2] },
      { id: 2, callFrame: cf('main', 1), children: [3, 4, 5] },
      { id: 3, callFrame: cf('alpha', 10) },
      { id: 4, callFrame: cf('beta', 20) },
      { id: 5, callFrame: cf('gamma', 30) },
    ],
    startTime: start,
    endTime: start + 100 * leaves.length,
    samples: leaves.map((l) => 3 + l),
    timeDeltas: leaves.map(() => 100),
  };
}

const messageArb: fc.Arbitrary<WireMessage> = fc.oneof(
  fc.record({
    kind: fc.constant('chunk' as const),
    threadId: fc.nat(8),
    mainThread: fc.boolean(),
    chunk: fc
      .tuple(fc.nat(1e6), fc.array(fc.nat(2), { minLength: 1, maxLength: 20 }))
      .map(([s, l]) => new HarvestEncoder().encode(chunk(s, l), 0)!),
  }),
  fc.record({
    kind: fc.constant('end' as const),
    durationSec: fc.double({ min: 0, max: 1e4, noNaN: true }),
    threads: fc.nat(64),
  }),
);

/** The stats block the writer left in the file. */
function infoOf(file: string): ProfileReader['info'] {
  const reader = ProfileReader.open(file);
  try {
    return reader.info;
  } finally {
    reader.close();
  }
}

describe('recording pipe framing', () => {
  it('any split of a stream of frames gives back the messages in order', () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 10 }), (messages, cuts) => {
        const stream = Buffer.concat(messages.map(encodeFrame));
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const parser = new FrameParser();
        const got: WireMessage[] = [];
        let from = 0;
        for (const p of [...points, stream.length]) {
          got.push(...parser.push(stream.subarray(from, p)));
          from = p;
        }
        expect(got).toEqual(JSON.parse(JSON.stringify(messages)));
        expect(parser.leftover).toBe(0);
        expect(parser.offset).toBe(stream.length);
      }),
    );
  });

  it('a stream cut inside a frame keeps the whole frames and reports the rest as leftover', () => {
    fc.assert(
      fc.property(fc.array(messageArb, { minLength: 1, maxLength: 5 }), fc.nat(), (messages, cut) => {
        const frames = messages.map(encodeFrame);
        const stream = Buffer.concat(frames);
        const at = cut % stream.length;
        const parser = new FrameParser();
        const got = parser.push(stream.subarray(0, at));
        let whole = 0;
        let bytes = 0;
        while (whole < frames.length && bytes + frames[whole]!.length <= at) bytes += frames[whole++]!.length;
        expect(got).toHaveLength(whole);
        expect(parser.leftover).toBe(at - bytes);
      }),
    );
  });

  it('a length over the bound or a body that is not JSON is ERR_RECORD_FAILED at the frame offset; the frames before it count', () => {
    const first = encodeFrame({ kind: 'end', durationSec: 1, threads: 1 });
    const huge = Buffer.alloc(4);
    huge.writeUInt32LE(MAX_FRAME_BYTES + 1);
    const notJson = Buffer.concat([Buffer.from([3, 0, 0, 0]), Buffer.from('{{{')]);
    for (const bad of [huge, notJson]) {
      const parser = new FrameParser();
      expect(parser.push(Buffer.concat([first, bad]))).toEqual([{ kind: 'end', durationSec: 1, threads: 1 }]);
      expect(isProfpackError(parser.failure)).toBe(true);
      expect(parser.failure).toMatchObject({ code: ErrorCode.RECORD_FAILED, offset: first.length });
      // Nothing after a bad frame is trusted.
      expect(parser.push(first)).toEqual([]);
    }
  });
});

describe('RecordingHost', () => {
  it('a sender that died mid-frame: every whole harvest is in the finalized file, marked incomplete', () => {
    const out = path.join(dir, 'partial.tach');
    const host = new RecordingHost({ out, intervalUs: 100, compression: 'zstd', startTimeUs: 0n });
    const numbers = new HarvestEncoder();
    const a = encodeFrame({
      kind: 'chunk',
      threadId: 0,
      mainThread: true,
      chunk: numbers.encode(chunk(0, [0, 1, 2, 0]), 0)!,
    });
    // Overlaps the first harvest by one tick (t = 400), as V8's console profiles do.
    const b = encodeFrame({
      kind: 'chunk',
      threadId: 0,
      mainThread: true,
      chunk: numbers.encode(chunk(300, [0, 2, 2]), 0)!,
    });
    const c = encodeFrame({
      kind: 'chunk',
      threadId: 0,
      mainThread: true,
      chunk: numbers.encode(chunk(1000, [1, 1]), 0)!,
    });
    host.accept(Buffer.concat([a, b.subarray(0, 7)]));
    host.accept(b.subarray(7));
    host.accept(c.subarray(0, c.length - 3));
    const summary = host.finish();
    expect(summary).toMatchObject({
      samples: 6,
      threads: 1,
      complete: false,
      heard: true,
      truncatedBytes: c.length - 3,
    });
    expect(summary.durationSec).toBeCloseTo(0.0005, 9);
    const src = openProfile(out, { format: 'tachyon' });
    // No 'end': the duration is the span of the samples that arrived.
    expect(infoOf(out).durationSec).toBeCloseTo(0.0005, 9);
    const got = [...samplesOf(src)].map((s) => `${s.timestampUs}:${src.frames[s.stack[0]!]!.funcname}`);
    expect(got).toEqual(['100:alpha', '200:beta', '300:gamma', '400:alpha', '500:gamma', '600:gamma']);
    src.close();
  });

  it("with the recorder's 'end' the stats block carries its duration and threads", () => {
    const out = path.join(dir, 'complete.tach');
    const host = new RecordingHost({ out, intervalUs: 100, startTimeUs: 0n });
    const numbers = new HarvestEncoder();
    host.accept(
      encodeFrame({ kind: 'chunk', threadId: 0, mainThread: true, chunk: numbers.encode(chunk(0, [0, 1]), 0)! }),
    );
    host.accept(
      encodeFrame({ kind: 'chunk', threadId: 3, mainThread: false, chunk: numbers.encode(chunk(0, [2, 2]), 3)! }),
    );
    host.accept(encodeFrame({ kind: 'end', durationSec: 2, threads: 2 }));
    expect(host.finish()).toMatchObject({ samples: 4, threads: 2, durationSec: 2, complete: true });
    const src = openProfile(out, { format: 'tachyon' });
    expect(infoOf(out)).toMatchObject({ durationSec: 2, sampleRate: 1 });
    expect(new Set([...samplesOf(src)].map((s) => s.threadId))).toEqual(new Set([0n, 3n]));
    src.close();
  });

  it('garbage on the pipe: what came before it is kept and finish() throws ERR_RECORD_FAILED', () => {
    const out = path.join(dir, 'garbage.tach');
    const host = new RecordingHost({ out, intervalUs: 100, startTimeUs: 0n });
    const numbers = new HarvestEncoder();
    const good = encodeFrame({
      kind: 'chunk',
      threadId: 0,
      mainThread: true,
      chunk: numbers.encode(chunk(0, [0, 1, 2]), 0)!,
    });
    host.accept(Buffer.concat([good, Buffer.from([5, 0, 0, 0]), Buffer.from('nope!')]));
    host.accept(
      encodeFrame({ kind: 'chunk', threadId: 0, mainThread: true, chunk: numbers.encode(chunk(1000, [0]), 0)! }),
    );
    expect(() => host.finish()).toThrow(
      expect.objectContaining({ code: ErrorCode.RECORD_FAILED, offset: good.length }),
    );
    const src = openProfile(out, { format: 'tachyon' });
    expect([...samplesOf(src)]).toHaveLength(3);
    src.close();
  });
});

describe('harvests on the wire (HarvestEncoder)', () => {
  it('each call frame crosses the pipe once; later harvests name it by number and the file is the same', () => {
    const numbers = new HarvestEncoder();
    const first = numbers.encode(chunk(0, [0, 1]), 0)!;
    const second = numbers.encode(chunk(1000, [2, 2, 0]), 0)!;
    expect(first.newFrames.map((f) => f.functionName)).toEqual(['(root)', 'main', 'alpha', 'beta', 'gamma']);
    expect(second.newFrames).toEqual([]);
    expect(second.parents).toEqual([-1, 0, 1, 1, 1]);
    expect(second.samples).toEqual([4, 4, 2]);

    // The same harvests through the pipe and handed over in this process write the same samples.
    const viaPipe = path.join(dir, 'numbered-pipe.tach');
    const viaProfile = path.join(dir, 'numbered-inline.tach');
    const piped = new RecordingHost({ out: viaPipe, intervalUs: 100, startTimeUs: 0n });
    piped.accept(
      Buffer.concat(
        [first, second].map((wire) => encodeFrame({ kind: 'chunk', threadId: 0, mainThread: true, chunk: wire })),
      ),
    );
    piped.finish();
    const inline = new RecordingHost({ out: viaProfile, intervalUs: 100, startTimeUs: 0n });
    inline.ingestChunk(first, 0, true);
    inline.ingestChunk(second, 0, true);
    inline.finish();
    const read = (file: string) => {
      const src = openProfile(file, { format: 'tachyon' });
      const got = [...samplesOf(src)].map(
        (s) => `${s.timestampUs}:${Array.from(s.stack, (i) => src.frames[i]!.funcname).join('<')}`,
      );
      src.close();
      return got;
    };
    expect(read(viaPipe)).toEqual([
      '100:alpha<main',
      '200:beta<main',
      '1100:gamma<main',
      '1200:gamma<main',
      '1300:alpha<main',
    ]);
    expect(read(viaProfile)).toEqual(read(viaPipe));
  });

  it('sends each tick once, in time order per thread, however harvests overlap or V8 misorders ticks', () => {
    const harvestArb = fc.record({
      thread: fc.constantFrom(0, 4),
      start: fc.integer({ min: 0, max: 5000 }),
      deltas: fc.array(fc.integer({ min: -50, max: 300 }), { maxLength: 30 }),
    });
    fc.assert(
      fc.property(fc.array(harvestArb, { maxLength: 12 }), (harvests) => {
        const encoder = new HarvestEncoder();
        const sent = new Map<number, bigint[]>();
        let expected = 0;
        const newest = new Map<number, bigint>();
        for (const h of harvests) {
          const profile = {
            ...chunk(
              h.start,
              h.deltas.map(() => 0),
            ),
            timeDeltas: h.deltas,
          };
          let time = BigInt(h.start);
          const times = h.deltas.map((d) => (time += BigInt(d)));
          const after = newest.get(h.thread);
          const fresh = times.filter((t) => after === undefined || t > after);
          expected += fresh.length;
          if (fresh.length > 0)
            newest.set(
              h.thread,
              fresh.reduce((a, b) => (b > a ? b : a)),
            );
          const wire = encoder.encode(profile, h.thread);
          expect(wire === undefined).toBe(fresh.length === 0);
          if (wire === undefined) continue;
          expect(wire.timeDeltas.every((d) => d >= 0)).toBe(true);
          let t = BigInt(wire.startTime);
          const got = sent.get(h.thread) ?? [];
          for (const d of wire.timeDeltas) got.push((t += BigInt(d)));
          sent.set(h.thread, got);
          expect(wire.samples).toHaveLength(fresh.length);
        }
        for (const times of sent.values())
          for (let i = 1; i < times.length; i++) expect(times[i]! >= times[i - 1]!).toBe(true);
        expect(encoder.samples).toBe(expected);
      }),
    );
  });

  it('a harvest naming a frame that never crossed the pipe is ERR_RECORD_FAILED; what came before it is kept', () => {
    const out = path.join(dir, 'unnumbered.tach');
    const host = new RecordingHost({ out, intervalUs: 100, startTimeUs: 0n });
    const numbers = new HarvestEncoder();
    host.accept(
      encodeFrame({ kind: 'chunk', threadId: 0, mainThread: true, chunk: numbers.encode(chunk(0, [0]), 0)! }),
    );
    // Numbers past the five frames this pipe defined, with no new frames sent.
    const renumbered = numbers.encode(chunk(500, [1]), 0)!;
    const bad = { ...renumbered, frames: renumbered.frames.map((n) => n + 5) };
    host.accept(encodeFrame({ kind: 'chunk', threadId: 0, mainThread: true, chunk: bad }));
    expect(() => host.finish()).toThrow(
      expect.objectContaining({ code: ErrorCode.RECORD_FAILED, message: expect.stringMatching(/never sent/) }),
    );
    const src = openProfile(out, { format: 'tachyon' });
    expect([...samplesOf(src)]).toHaveLength(1);
    src.close();
  });
});

describe('FdSender', () => {
  /** The parent end of a pipe into a child that never reads it (or has exited), as a raw non-blocking descriptor. */
  function pipeInto(command: string[]) {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'ignore', 'ignore'] });
    const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    return { child, fd };
  }
  const big = {
    kind: 'chunk' as const,
    threadId: 0,
    mainThread: true,
    chunk: new HarvestEncoder().encode(
      chunk(
        0,
        Array.from({ length: 400_000 }, (_, i) => i % 3),
      ),
      0,
    )!,
  };

  it('a writer that stops reading: the send gives up after the stall bound, warns once, and the program goes on', () => {
    const { child, fd } = pipeInto(['sleep', '30']);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const sender = new FdSender(fd, 300);
    const t0 = Date.now();
    expect(encodeFrame(big).length).toBeGreaterThan(1 << 20);
    expect(sender.send(big)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(sender.ok).toBe(false);
    expect(sender.send({ kind: 'end', durationSec: 1, threads: 1 })).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/full for 300 ms/);
    warn.mockRestore();
    child.kill();
  });

  it('a writer that is gone (EPIPE): sending stops with one warning, never throws', () => {
    const { fd } = pipeInto(['true']);
    // Wait without turning the event loop: the child is gone, and Node has not closed our end yet.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const sender = new FdSender(fd);
    expect(sender.send(big)).toBe(false);
    expect(sender.send(big)).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/EPIPE/);
    warn.mockRestore();
  });
});
