/**
 * A rotated heap recording read over its directory: the end is the end of the last file written. Under load the
 * host's rotation timer can fall between a harvest's CPU chunk and its heap frame, so one file holds a heap poll and
 * no CPU sample, and the next only CPU samples taken during that poll's GC (V8 stamps them before the poll's time).
 * Each file starts where its predecessor's samples end, so such a pair gave the file after them a start before its
 * predecessor's; the directory's reader put the files in start order, read that predecessor's 'live' batch after
 * the last poll, and the garbage the last poll freed came back to life (seen once: test/memory/scenarios.test.ts,
 * the garbage maker in the top three in use).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CpuProfile } from '../../lib/v8/index';
import { ConcatenatedHeapTrace, heapProfile, requireHeapFiles, type HeapTraceSource } from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import type { RecordedBy } from '../../lib/recorded-by';
import { encodeHeapFrame, HeapStackNumbers, type SamplingHeapNode } from '../../lib/record/heap/index';
import { RecordingHost } from '../../lib/record/writer/index';
import { HarvestEncoder } from '../../lib/record/wire/index';
import { openHeapTrace } from '../../lib/tachyon/index';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-rotorder-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const frame = (id: number, functionName: string, lineNumber: number) => ({
  id,
  callFrame: { functionName, scriptId: '1', url: 'file:///app.js', lineNumber, columnNumber: 2 },
});
/** V8's allocation tree: root → main → (leakMemory, makeGarbage). */
const tree: SamplingHeapNode = {
  id: 1,
  callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
  children: [{ ...frame(2, 'main', 0), children: [frame(3, 'leakMemory', 4), frame(4, 'makeGarbage', 9)] }],
};
/** What recorded the files: one process, so that the directory reads as one recording. */
const ABOUT: RecordedBy = {
  runtime: 'node',
  version: 'v20.0.0',
  platform: 'linux',
  arch: 'x64',
  hostname: 'pinned',
  pid: 4242,
  ppid: 1,
  processStartUs: 500,
  argv: ['node', 'app.js'],
  intervalUs: 1000,
  mode: 'wall',
  recorder: '0.0.0-test',
};
const LEAK = 3;
const GARBAGE = 4;

/** One CPU sample of main at `atUs`. */
function cpuChunk(atUs: number): CpuProfile {
  return {
    nodes: [
      { id: 1, callFrame: tree.callFrame, children: [2] },
      { id: 2, callFrame: tree.children![0]!.callFrame },
    ],
    startTime: atUs - 500,
    endTime: atUs,
    samples: [2],
    timeDeltas: [500],
  };
}

/**
 * Writes the rotated files of a recording whose host rotated twice between a harvest's chunk and its heap frame;
 * returns them in recording order (their names').
 */
function writeRotated(name: string): string[] {
  const rotated = path.join(dir, name);
  const host = new RecordingHost({
    out: path.join(dir, 'unused.tach'),
    rotate: { everyMs: 3_600_000, dir: rotated, keep: 100 },
    intervalUs: 1000,
    heap: true,
    startTimeUs: 1_000n,
    epochOffsetUs: 0n,
    sourceMaps: false,
  });
  host.setRecordedBy(ABOUT);
  const encoder = new HarvestEncoder();
  const numbers = new HeapStackNumbers();
  const chunk = (atUs: number): void => host.ingestChunk(encoder.encode(cpuChunk(atUs), 0)!, 0, true);
  const poll = (timeUs: number, ordinals: number[], nodes: number[], freed: number[]): void => {
    const byNode = numbers.number(tree);
    const heapFrame = encodeHeapFrame(
      {
        intervalBytes: 4096,
        timeUs,
        sinceUs: timeUs - 1000,
        ordinals: Uint32Array.from(ordinals),
        sizes: Uint32Array.from(ordinals, () => 2560),
        stackIds: Uint32Array.from(nodes, (n) => byNode.get(n)!),
        shortLived: 0,
        freed: Uint32Array.from(freed),
        costMs: 0,
      },
      0,
      numbers,
    );
    host.acceptHeapFrame(heapFrame.subarray(4));
  };
  // A harvest: its chunk, then its poll (a leak object, two of garbage).
  chunk(2_000);
  poll(2_100, [1, 2, 3], [LEAK, GARBAGE, GARBAGE], []);
  host.rotate();
  // The next harvest's chunk lands in this file; the rotation comes before its poll.
  chunk(3_000);
  host.rotate();
  // A file with the poll alone: the next one starts at the poll's time.
  poll(3_400, [4], [LEAK], []);
  host.rotate();
  // The next chunk holds only samples V8 took during that poll's GC, before its time.
  chunk(3_300);
  host.rotate();
  // The program dropped its garbage: the last poll, at exit, frees it.
  chunk(4_000);
  poll(4_100, [], [], [2, 3]);
  host.finish();
  return fs
    .readdirSync(rotated)
    .sort()
    .map((f) => path.join(rotated, f));
}

/** Scaled bytes in use at the end by function. */
function inUseAtEnd(trace: HeapTraceSource): Map<string, number> {
  const rows = aggregate(heapProfile(trace).profile, { sampleType: 'inuse_space', limit: 0 }).rows;
  return new Map(rows.map((row) => [row.funcname!, row.self]));
}

describe('a rotated heap recording whose rotations fell between a harvest chunk and its heap frame', () => {
  it('read over the directory, the last poll decides what is live at the end', () => {
    const files = writeRotated('in-order');
    expect(files.length).toBe(5);
    // Each file starts no earlier than the one before it.
    const starts = files.map((f) => openHeapTrace(f)!.meta.startTimeUs);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const trace = requireHeapFiles(files);
    expect(heapProfile(trace).info.endSampledBytes).toBe(2 * 2560);
    const inUse = inUseAtEnd(trace);
    expect(inUse.get('makeGarbage') ?? 0).toBe(0);
    expect(inUse.get('leakMemory')).toBeGreaterThan(0);
  });

  it("files read out of their place (written before the fix): a file's inherited objects stay freed", () => {
    const files = writeRotated('out-of-place');
    // The chunk-only file (live at its start: the garbage) read after the last poll, as the reader's sort put it.
    const parts = [0, 1, 2, 4, 3].map((i) => openHeapTrace(files[i]!)!);
    const joined = new ConcatenatedHeapTrace(parts);
    expect(heapProfile(joined).info.endSampledBytes).toBe(2 * 2560);
    expect(inUseAtEnd(joined).get('makeGarbage') ?? 0).toBe(0);
  });
});
