/**
 * The heap recorder's parts without a live V8 profile: the poll diff against
 * a model, the pipe coding of heap frames (round trip, damaged frames), the
 * frames interleaved with JSON ones, and the options.
 */
import * as v8 from 'node:v8';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isProfpackError } from '../../../../lib/errors';
import {
  diffSamples,
  FASTEST_CLIMB_BYTES_PER_S,
  HeapLimitWatcher,
  HeapStackNumbers,
  LIMIT_CHECK_MS,
  LONGEST_LIMIT_CHECK_MS,
  maxOldSpaceFlagMb,
  NO_SAMPLES,
  type HeapPoll,
  type LiveSamples,
  type SamplingHeapNode,
} from '../../../../lib/record/program/heap/index';
import { encodeHeapFrame, HeapFrameReceiver, NO_STACK } from '../../../../lib/record/wire/index';
import { checkHeapOptions, parseByteSize } from '../../../../lib/record/settings/index';
import {
  INSPECTOR_POLL_SHARES,
  NATIVE_POLL_SHARES,
  POLL_CPU_SHARE,
  POLL_HEADROOM_SHARE,
  POLL_WALL_SHARE,
  timedPollDue,
} from '../../../../lib/record/program/index';
import { startRecording } from '../../../../lib/record/start/index';
import { encodeFrame, FrameParser, type WireMessage } from '../../../../lib/record/wire/index';
import { HeapCollector } from './heap-collector';

/** A run of polls: which objects (by ordinal, allocated in order) are alive at each. */
const pollsArb = fc
  .array(fc.array(fc.boolean(), { maxLength: 30 }), { minLength: 1, maxLength: 6 })
  .chain((births) =>
    fc.tuple(
      fc.constant(births),
      fc.array(fc.nat(8), { minLength: births.flat().length, maxLength: births.flat().length }),
    ),
  );

describe('diffSamples', () => {
  it('allocations, frees and short-lived counts agree with a model of objects and their lifetimes', () => {
    // births[p][k]: the k-th object allocated before poll p is sampled and seen alive at p (else it dies before p);
    // lifetimes: how many polls a seen object stays alive after its first.
    fc.assert(
      fc.property(pollsArb, fc.boolean(), ([births, lifetimes], shuffle) => {
        let ordinal = 0;
        const objects: { ordinal: number; firstPoll: number; lastPoll: number }[] = [];
        const shortLivedByPoll = births.map(() => 0);
        let life = 0;
        births.forEach((poll, p) => {
          for (const seen of poll) {
            ordinal++;
            if (seen) objects.push({ ordinal, firstPoll: p, lastPoll: p + lifetimes[life++]! });
            else shortLivedByPoll[p]!++;
          }
        });
        // Ordinals used up after the newest seen one are only counted once a later one is seen.
        let live: LiveSamples = NO_SAMPLES;
        let countedShortLived = 0;
        births.forEach((_, p) => {
          const alive = objects.filter((o) => o.firstPoll <= p && o.lastPoll >= p).map((o) => o.ordinal);
          if (shuffle) alive.reverse();
          const d = diffSamples(live, Uint32Array.from(alive));
          const sortedAlive = [...alive].sort((a, b) => a - b);
          expect(Array.from(d.born, (i) => alive[i])).toEqual(
            objects.filter((o) => o.firstPoll === p).map((o) => o.ordinal),
          );
          expect(Array.from(d.freed)).toEqual(objects.filter((o) => o.lastPoll === p - 1).map((o) => o.ordinal));
          expect(Array.from(d.live.ordinals)).toEqual(sortedAlive);
          countedShortLived += d.shortLived;
          live = d.live;
        });
        const newest = Math.max(0, ...objects.map((o) => o.ordinal));
        expect(countedShortLived).toBe(newest - objects.length);
        expect(countedShortLived).toBeLessThanOrEqual(shortLivedByPoll.reduce((a, b) => a + b, 0));
      }),
    );
  });
});

function node(id: number, functionName: string, children: SamplingHeapNode[] = []): SamplingHeapNode {
  return {
    id,
    callFrame: { functionName, scriptId: '1', url: 'file:///app.js', lineNumber: id, columnNumber: 0 },
    children,
  };
}

/** (root) → main → [alloc, parse → alloc]: four stacks. */
const tree = node(1, '(root)', [node(2, 'main', [node(3, 'alloc'), node(4, 'parse', [node(5, 'alloc')])])]);

function pollOf(
  numbers: HeapStackNumbers,
  ordinals: number[],
  nodes: number[],
  freed: number[],
  shortLived = 0,
  from: SamplingHeapNode = tree,
): HeapPoll {
  const byNode = numbers.number(from);
  return {
    intervalBytes: 4096,
    timeUs: 2000 + ordinals.length,
    sinceUs: 1000,
    ordinals: Uint32Array.from(ordinals),
    sizes: Uint32Array.from(ordinals, (o) => o * 8),
    stackIds: Uint32Array.from(nodes, (n) => (byNode.has(n) ? byNode.get(n)! : NO_STACK)),
    shortLived,
    freed: Uint32Array.from(freed),
    costMs: 0,
  };
}

describe('heap frames on the recording pipe', () => {
  it('carry allocations with their stacks, frees and counts; stacks cross once', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            allocations: fc.array(fc.tuple(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(2, 3, 4, 5, 99)), {
              maxLength: 20,
            }),
            freed: fc.uniqueArray(fc.nat(5000), { maxLength: 10 }),
            shortLived: fc.nat(50),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        fc.integer({ min: -1e6, max: 1e6 }),
        (polls, clockOffsetUs) => {
          const numbers = new HeapStackNumbers();
          const sink = new HeapCollector();
          const receiver = new HeapFrameReceiver(sink, clockOffsetUs);
          let base = 0;
          const frames: Buffer[] = [];
          for (const p of polls) {
            // V8's ordinals ascend: each allocation `gap` after the one before.
            const ordinals = p.allocations.map(([gap]) => (base += gap));
            const poll = pollOf(
              numbers,
              ordinals,
              p.allocations.map(([, n]) => n),
              [...p.freed].sort((a, b) => a - b),
              p.shortLived,
            );
            // One thread's polls come in time order.
            poll.timeUs += 1000 * frames.length;
            const frame = encodeHeapFrame(poll, 0, numbers);
            frames.push(frame);
            receiver.receive(frame.subarray(4), 0);
            for (const [i, o] of ordinals.entries()) {
              const got = sink.allocated.get(o)!;
              expect(got.size).toBe(o * 8);
              const leaf = p.allocations[i]![1];
              expect(got.functions).toEqual(
                leaf === 99
                  ? []
                  : { 2: ['main'], 3: ['alloc', 'main'], 4: ['parse', 'main'], 5: ['alloc', 'parse', 'main'] }[leaf],
              );
              expect(got.timeUs).toBe(poll.timeUs + clockOffsetUs);
            }
            for (const o of p.freed) expect(sink.freed.has(o)).toBe(true);
          }
          expect(receiver.shortLived).toBe(polls.reduce((a, p) => a + p.shortLived, 0));
          // The tree's four call frames and four stacks are sent in the first frame only.
          expect(receiver.stacks.callFrames).toHaveLength(4);
          expect(receiver.stacks.size).toBe(4);
          expect(sink.info).toEqual({ intervalBytes: 4096 });
        },
      ),
    );
  });

  it('objects collected between two polls: their allocations, then the poll frees (even none), then theirs', () => {
    // The file applies a record's frees before its allocations: the collected objects' frees must come as a second
    // free batch of the same poll, after the one that closes the allocations' record.
    for (const freed of [[], [1, 2]]) {
      const numbers = new HeapStackNumbers();
      const batches: string[] = [];
      const receiver = new HeapFrameReceiver({
        allocations: (b) => batches.push(`alloc ${[...b.ordinals].join(',')} @${b.timeUs}`),
        frees: (b) => batches.push(`free ${[...b.ordinals].join(',')} @${b.timeUs}`),
      });
      const poll = { ...pollOf(numbers, [7, 8, 9], [3, 3, 5], freed), collected: Uint32Array.from([7, 9]) };
      receiver.receive(encodeHeapFrame(poll, 0, numbers).subarray(4), 0);
      expect(batches).toEqual([`alloc 7,8,9 @2003`, `free ${freed.join(',')} @2003`, `free 7,9 @2003`]);
      expect(receiver.frees).toBe(freed.length + 2);
    }
  });

  it("threads numbering their own stacks on one pipe (a worker's frames): each allocation keeps its thread's stack", () => {
    // A worker's sampler numbers its frames and stacks from 0 as the main thread's does; its frames come over the
    // same pipe, interleaved, and one may arrive after a later poll of the main thread.
    const workerTree = node(1, '(root)', [node(2, 'onMessage', [node(3, 'cacheInWorker')])]);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(3)), { minLength: 1, maxLength: 12 }), (order) => {
        const senders = [
          { threadId: 0, numbers: new HeapStackNumbers(), tree, leaf: 5, names: ['alloc', 'parse', 'main'] },
          {
            threadId: 7,
            numbers: new HeapStackNumbers(),
            tree: workerTree,
            leaf: 3,
            names: ['cacheInWorker', 'onMessage'],
          },
        ];
        const got: { threadId: number; ordinal: number; functions: string[]; timeUs: number }[] = [];
        const times: number[] = [];
        const receiver = new HeapFrameReceiver({
          allocations: (b) => {
            times.push(b.timeUs);
            b.ordinals.forEach((o, i) =>
              got.push({
                threadId: b.threadId,
                ordinal: o,
                functions: b.stacks.callFramesOf(b.stackIds[i]!).map((cf) => cf.functionName),
                timeUs: b.timeUs,
              }),
            );
          },
          frees: () => undefined,
        });
        const ordinal = [0, 0];
        for (const [fromWorker, late] of order) {
          const s = senders[fromWorker ? 1 : 0]!;
          const poll = pollOf(s.numbers, [++ordinal[fromWorker ? 1 : 0]!], [s.leaf], [], 0, s.tree);
          // `late`: polled that many µs before the last frame received (a worker's message still on its way).
          poll.timeUs = Math.max(0, ...times) - late;
          poll.sinceUs = poll.timeUs - 10;
          receiver.receive(encodeHeapFrame(poll, s.threadId, s.numbers).subarray(4), 0);
        }
        expect(got).toHaveLength(order.length);
        for (const g of got) expect(g.functions).toEqual(senders[g.threadId === 7 ? 1 : 0]!.names);
        // Batches in time order (as files keep them), each moved up by no more than it was late.
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]!);
        expect(receiver.maxShiftUs).toBeLessThanOrEqual(3);
      }),
    );
  });

  it('a damaged frame is a RECORD_FAILED ProfpackError with an offset, never a crash', () => {
    const numbers = new HeapStackNumbers();
    const frame = encodeHeapFrame(pollOf(numbers, [3, 9, 10], [3, 5, 2], [1, 2]), 0, numbers);
    fc.assert(
      fc.property(fc.nat(frame.length - 5), fc.nat(255), fc.boolean(), (at, byte, truncate) => {
        const body = Buffer.from(frame.subarray(4));
        const damaged = truncate ? body.subarray(0, at) : (body.writeUInt8(byte, at), body);
        try {
          new HeapFrameReceiver(new HeapCollector()).receive(damaged, 100);
        } catch (err) {
          expect(isProfpackError(err)).toBe(true);
          expect((err as { code: string }).code).toMatch(/^ERR_(RECORD_FAILED|VARINT_TRUNCATED|VARINT_OVERFLOW)$/);
        }
      }),
    );
    const err = (() => {
      try {
        new HeapFrameReceiver(undefined).receive(frame.subarray(4, 20), 100);
      } catch (e) {
        return e as { code: string; offset: number };
      }
    })();
    expect(err?.code).toBe(ErrorCode.RECORD_FAILED);
    expect(err?.offset).toBeGreaterThanOrEqual(100);
  });

  it('interleave with JSON frames however the stream is split', () => {
    const numbers = new HeapStackNumbers();
    const heapFrame = encodeHeapFrame(pollOf(numbers, [1, 2], [3, 5], []), 0, numbers);
    const stream = Buffer.concat([
      encodeFrame({ kind: 'ping' }),
      heapFrame,
      encodeFrame({ kind: 'end', durationSec: 1, threads: 1 }),
    ]);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 6 }), (cuts) => {
        const parser = new FrameParser();
        const got: WireMessage[] = [];
        let prev = 0;
        for (const cut of [...cuts.sort((a, b) => a - b), stream.length]) {
          got.push(...parser.push(stream.subarray(prev, cut)));
          prev = cut;
        }
        expect(got.map((m) => m.kind)).toEqual(['ping', 'heap', 'end']);
        const heap = got[1] as Extract<WireMessage, { kind: 'heap' }>;
        expect(Buffer.compare(heap.body, heapFrame.subarray(4))).toBe(0);
        expect(heap.offset).toBe(encodeFrame({ kind: 'ping' }).length);
      }),
    );
  });
});

describe('heap options', () => {
  it('takes byte sizes with k/m suffixes and refuses anything else with a coded error', () => {
    expect(parseByteSize('524288')).toBe(524288);
    expect(parseByteSize('512k')).toBe(524288);
    expect(parseByteSize('512KiB')).toBe(524288);
    expect(parseByteSize('1m')).toBe(1048576);
    for (const bad of ['', '1.5k', '-4', '12x', '1g'])
      expect(() => parseByteSize(bad)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }));
  });

  it('checks interval, ratio and polls, with defaults', () => {
    expect(checkHeapOptions(true)).toEqual({
      intervalBytes: 512 * 1024,
      nearLimitRatio: 0.85,
      polls: 'paced',
      shortLived: 'stacks',
      buffers: true,
    });
    expect(
      checkHeapOptions({
        intervalBytes: 32768,
        nearLimitRatio: 0.5,
        polls: 'harvest',
        shortLived: 'count',
        buffers: false,
      }),
    ).toEqual({
      intervalBytes: 32768,
      nearLimitRatio: 0.5,
      polls: 'harvest',
      shortLived: 'count',
      buffers: false,
    });
    for (const bad of [
      { intervalBytes: 0 },
      { intervalBytes: 1.5e3 + 0.5 },
      { intervalBytes: 2 ** 31 },
      { intervalBytes: NaN },
      { nearLimitRatio: 0 },
      { nearLimitRatio: 1.5 },
      { polls: 'always' },
      { shortLived: 'all' },
      { buffers: 'yes' },
      null,
      7,
    ]) {
      expect(() => checkHeapOptions(bad as never)).toThrow(
        expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, expected: expect.any(String) }),
      );
    }
  });

  it('reads --max-old-space-size from argv or NODE_OPTIONS, argv last', () => {
    expect(maxOldSpaceFlagMb(['--max-old-space-size=64'], '')).toBe(64);
    expect(maxOldSpaceFlagMb([], '--max_old_space_size=128 --inspect')).toBe(128);
    expect(maxOldSpaceFlagMb(['--max-old-space-size=256'], '--max-old-space-size=128')).toBe(256);
    expect(maxOldSpaceFlagMb(['--require', 'x'], '')).toBeUndefined();
  });

  it('spaces the limit checks so that a climb at FASTEST_CLIMB_BYTES_PER_S cannot pass the ratio before the next', () => {
    // This process runs without --max-old-space-size: its limit is V8's heap_size_limit.
    const limitBytes = v8.getHeapStatistics().heap_size_limit;
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1.2, noNaN: true }),
        (ratio, usage) => {
          const watcher = new HeapLimitWatcher(ratio);
          watcher.check();
          const ms = watcher.nextCheckMs(usage);
          expect(ms).toBeGreaterThanOrEqual(LIMIT_CHECK_MS);
          expect(ms).toBeLessThanOrEqual(LONGEST_LIMIT_CHECK_MS);
          const climbed = usage + (FASTEST_CLIMB_BYTES_PER_S * ms) / 1000 / limitBytes;
          if (ms > LIMIT_CHECK_MS) expect(climbed).toBeLessThanOrEqual(ratio);
          // Not sooner than it must: between the shortest and the longest wait, a millisecond more would let it pass.
          if (ms > LIMIT_CHECK_MS && ms < LONGEST_LIMIT_CHECK_MS)
            expect(usage + (FASTEST_CLIMB_BYTES_PER_S * (ms + 1)) / 1000 / limitBytes).toBeGreaterThan(ratio);
        },
      ),
    );
    // A heap of tens of MB under a limit of gigabytes waits the longest; at or past the ratio, the shortest.
    const watcher = new HeapLimitWatcher(0.85);
    const { usage } = watcher.check();
    if ((0.85 - usage) * limitBytes >= FASTEST_CLIMB_BYTES_PER_S) expect(watcher.nextCheckMs(usage)).toBe(1000);
    expect(watcher.nextCheckMs(0.85)).toBe(LIMIT_CHECK_MS);
    expect(watcher.nextCheckMs(1.1)).toBe(LIMIT_CHECK_MS);
  });

  it('startRecording refuses bad heap options and a heapSink it cannot feed, before starting anything', () => {
    const heapSink = { allocations: () => undefined, frees: () => undefined };
    for (const options of [
      { heap: { intervalBytes: 5 } },
      { heap: { nearLimitRatio: 2 } },
      { heapSink },
      { heap: true as const, heapSink, writer: 'process' as const },
    ]) {
      expect(() => startRecording({ ...options, out: '/nonexistent/dir/never.tach' })).toThrow(
        expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }),
      );
    }
  });
});

describe('timedPollDue', () => {
  it("is due once the CPU or wall time since the last poll reaches its multiple of the poll's, or the heap fills", () => {
    const [times, costs] = [fc.nat(1e7), fc.nat(1e5)];
    const usage = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.record({ cpuSinceUs: times, wallSinceUs: times, lastCpuUs: costs, lastWallUs: costs }),
        usage,
        usage,
        fc.constantFrom(undefined, INSPECTOR_POLL_SHARES, NATIVE_POLL_SHARES),
        (times, a, b, shares) => {
          const { cpuSinceUs, wallSinceUs, lastCpuUs, lastWallUs } = times;
          const [heapUsageAtLastPoll, heapUsage] = [Math.min(a, b), Math.max(a, b)];
          const pace = { ...times, heapUsage, heapUsageAtLastPoll };
          // No shares: the inspector's.
          const [cpuShare, wallShare] =
            shares === undefined ? [POLL_CPU_SHARE, POLL_WALL_SHARE] : [shares.cpu, shares.wall];
          const cpuDue = cpuSinceUs >= lastCpuUs * cpuShare;
          const wallDue = wallSinceUs >= lastWallUs * wallShare;
          const heapDue = heapUsage - heapUsageAtLastPoll >= (1 - heapUsageAtLastPoll) * POLL_HEADROOM_SHARE;
          expect(timedPollDue(pace, shares)).toBe(cpuDue || wallDue || heapDue);
          // More time since the last poll never makes a due poll undue.
          const later = { ...pace, cpuSinceUs: cpuSinceUs + 1, wallSinceUs: wallSinceUs + 1 };
          expect(!timedPollDue(pace, shares) || timedPollDue(later, shares)).toBe(true);
        },
      ),
    );
  });

  it('waits for nothing after a free poll, for both times on a busy machine, for no time as the heap fills', () => {
    const steadyHeap = { heapUsage: 0.3, heapUsageAtLastPoll: 0.3 };
    expect(timedPollDue({ cpuSinceUs: 0, wallSinceUs: 0, lastCpuUs: 0, lastWallUs: 0, ...steadyHeap })).toBe(true);
    // 30 ms of CPU, 100 ms of wall: due after 1.5 s of CPU, or 20 s of wall.
    const poll = { lastCpuUs: 30_000, lastWallUs: 100_000, ...steadyHeap };
    expect(timedPollDue({ ...poll, cpuSinceUs: 1_499_999, wallSinceUs: 19_999_999 })).toBe(false);
    expect(timedPollDue({ ...poll, cpuSinceUs: 1_500_000, wallSinceUs: 0 })).toBe(true);
    expect(timedPollDue({ ...poll, cpuSinceUs: 0, wallSinceUs: 20_000_000 })).toBe(true);
    // 20 % of the limit used at the last poll: due at 40 % (a quarter of the 80 % headroom), not at 39 %.
    const quiet = { ...poll, cpuSinceUs: 0, wallSinceUs: 0, heapUsageAtLastPoll: 0.2 };
    expect(timedPollDue({ ...quiet, heapUsage: 0.39 })).toBe(false);
    expect(timedPollDue({ ...quiet, heapUsage: 0.41 })).toBe(true);
    // The native sampler's poll (no GC) of 0.5 ms of CPU, 1 ms of wall: due at every 50-ms harvest of an idle program.
    const native = { lastCpuUs: 500, lastWallUs: 1000, ...steadyHeap };
    expect(timedPollDue({ ...native, cpuSinceUs: 2000, wallSinceUs: 50_000 }, NATIVE_POLL_SHARES)).toBe(true);
    expect(timedPollDue({ ...native, cpuSinceUs: 2000, wallSinceUs: 19_999 }, NATIVE_POLL_SHARES)).toBe(false);
  });
});
