/**
 * A recording's writer side driven by hand: a RecordingHost fed the CPU chunks and heap polls a worker's harvests
 * would send, over a fixed allocation tree, so that a test decides exactly where its rotations fall.
 */
import * as path from 'node:path';
import { HeapStackNumbers, type SamplingHeapNode } from '../../lib/record/program/heap/index';
import { encodeHeapFrame } from '../../lib/record/wire/index';
import { HarvestEncoder } from '../../lib/record/wire/index';
import { RecordingHost } from '../../lib/record/writer/index';

const appFrame = (id: number, functionName: string, lineNumber: number, columnNumber: number) => ({
  id,
  callFrame: { functionName, scriptId: '1', url: 'file:///app.js', lineNumber, columnNumber },
});

/** V8's allocation tree root (1) → main (2) → first (3), second (4), in file:///app.js. */
export function mainCalling(first: string, second: string, mainColumn = 2): SamplingHeapNode {
  return {
    id: 1,
    callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    children: [
      { ...appFrame(2, 'main', 0, mainColumn), children: [appFrame(3, first, 4, 2), appFrame(4, second, 9, 2)] },
    ],
  };
}

export class HandDrivenRecording {
  readonly host: RecordingHost;
  private readonly encoder = new HarvestEncoder();
  private readonly numbers = new HeapStackNumbers();

  /**
   * A heap recording at 1 ms from 1 ms on, rotated into `rotateDir` (keeping `keep` files) only when the test says;
   * `tree` is mainCalling's shape, `thread` the worker's thread id on every chunk and frame.
   */
  constructor(
    private readonly tree: SamplingHeapNode,
    private readonly thread: number,
    rotateDir: string,
    keep: number,
    flushIntervalMs?: number,
  ) {
    this.host = new RecordingHost({
      flushIntervalMs,
      out: path.join(path.dirname(rotateDir), 'unused.tach'),
      rotate: { everyMs: 3_600_000, dir: rotateDir, keep },
      intervalUs: 1000,
      heap: true,
      startTimeUs: 1_000n,
      epochOffsetUs: 0n,
      sourceMaps: false,
    });
  }

  /** A harvest's CPU chunk: one sample of main, 500 µs after `startUs`, the chunk ending at `endUs`. */
  cpuChunk(startUs: number, endUs: number): void {
    const chunk = {
      nodes: [
        { id: 1, callFrame: this.tree.callFrame, children: [2] },
        { id: 2, callFrame: this.tree.children![0]!.callFrame },
      ],
      startTime: startUs,
      endTime: endUs,
      samples: [2],
      timeDeltas: [500],
    };
    this.host.ingestChunk(this.encoder.encode(chunk, this.thread)!, this.thread, true);
  }

  /**
   * A heap poll at `timeUs` (1 ms after the previous one): `ordinals` allocated at the tree's `nodes`, one node an
   * ordinal, each of `sizeOf(ordinal)` bytes; `freed` the ordinals gone since.
   */
  heapPoll(timeUs: number, ordinals: number[], nodes: number[], freed: number[], sizeOf: (o: number) => number): void {
    const byNode = this.numbers.number(this.tree);
    const frame = encodeHeapFrame(
      {
        intervalBytes: 4096,
        timeUs,
        sinceUs: timeUs - 1000,
        ordinals: Uint32Array.from(ordinals),
        sizes: Uint32Array.from(ordinals, sizeOf),
        stackIds: Uint32Array.from(nodes, (n) => byNode.get(n)!),
        shortLived: 0,
        freed: Uint32Array.from(freed),
      },
      this.thread,
      this.numbers,
    );
    this.host.acceptHeapFrame(frame.subarray(4));
  }
}
