/**
 * heapSink()'s call frames: lib/tachyon knows no V8 frame, so the frame written for a heap stack's call frame is
 * the caller's `frameOf`, or the package entry's default (lib/profile-writer.ts hands over lib/v8's frameFromV8).
 * The oracle is the V8 call frame itself: 0-based positions plus one, a file: URL as its path (node:url).
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, ProfileWriter, type FrameSpec } from '../../../lib/index';
import { ProfileReader } from '../../../lib/tachyon/index';
import { HeapStacks } from '../../../lib/record/wire/index';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-heap-frames-');
const CALL_FRAME = {
  functionName: 'allocate',
  scriptId: '7',
  url: 'file:///srv/app/alloc.js',
  lineNumber: 41,
  columnNumber: 8,
};

/** One poll allocating one object at a one-frame stack over CALL_FRAME; the file's frames read back. */
function framesWritten(writer: ProfileWriter, file: string, frameOf?: (cf: typeof CALL_FRAME) => FrameSpec): unknown[] {
  const sink = frameOf === undefined ? writer.heapSink() : writer.heapSink({ frameOf });
  const stacks = new HeapStacks();
  stacks.callFrames.push(CALL_FRAME);
  const stack = stacks.add(-1, 0);
  sink.begin({ intervalBytes: 4096 });
  const span = { threadId: 1, timeUs: 2_000_000, sinceUs: 1_000_000 };
  const one = (v: number): Uint32Array => Uint32Array.of(v);
  sink.allocations({ ...span, stacks, ordinals: one(1), sizes: one(64), stackIds: one(stack), shortLived: 0 });
  sink.frees({ ...span, ordinals: new Uint32Array(0) });
  writer.finalize();
  return ProfileReader.open(file).frames.filter((f) => f !== null && f.funcname !== '');
}

const writer = (file: string): ProfileWriter =>
  new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1_000_000n, formatVersion: 2 });

describe('heapSink() call frames', () => {
  it("the package's ProfileWriter writes a V8 call frame as its model frame when given no frameOf", () => {
    const file = path.join(dir, 'default.tach');
    expect(framesWritten(writer(file), file)).toEqual([
      expect.objectContaining({
        funcname: CALL_FRAME.functionName,
        filename: fileURLToPath(CALL_FRAME.url),
        lineno: CALL_FRAME.lineNumber + 1,
        column: CALL_FRAME.columnNumber + 1,
      }),
    ]);
  });

  it("writes the caller's frameOf for each call frame instead", () => {
    const file = path.join(dir, 'mapped.tach');
    const mapped = { filename: 'src/alloc.ts', funcname: 'allocate', lineno: 7, column: 3 };
    const frameOf = vi.fn((): FrameSpec => mapped);
    expect(framesWritten(writer(file), file, frameOf)).toEqual([expect.objectContaining(mapped)]);
    expect(frameOf.mock.calls).toEqual([[CALL_FRAME]]);
  });

  it("lib/tachyon's own ProfileWriter, with no entry to give a default, refuses heapSink() without frameOf", async () => {
    vi.resetModules();
    const tachyon = await import('../../../lib/tachyon/index');
    const w = new tachyon.ProfileWriter(path.join(dir, 'bare.tach'), { sampleIntervalUs: 1000n, formatVersion: 2 });
    try {
      expect(() => w.heapSink()).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }));
      expect(w.heapSink({ frameOf: () => ({ filename: 'a.js', funcname: 'f' }) })).toBeDefined();
    } finally {
      w.close();
    }
  });
});
