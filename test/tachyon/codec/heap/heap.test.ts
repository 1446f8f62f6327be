// Version 2's heap section (docs/format-v2.md §9): heap events written through
// ProfileWriter.heapSink() read back by openHeapTrace event by event, beside
// CPU samples that share the frame table; version 1 refuses heap events.
import fc from 'fast-check';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../lib/errors';
import { ProfileReader, downgrade, openHeapTrace } from '../../../../lib/tachyon/index';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../../../lib/index';
import { infoLines } from '../../../../lib/cli/commands/info';
import { readProfileV2 } from '../../../../lib/tachyon/read/v2/file';
import { HeaderFlag } from '../../../../lib/tachyon/codec/format';
import { thrown } from '../../../support/refusals';
import { feedPlan, heapFileWriter, plannedTrace, readBack } from '../../../support/heap-traces';
import { HeapStacks } from '../../../../lib/record/wire/heap-events';
import type { CpuProfileCallFrame } from '../../../../lib/v8/index';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-heap-'));
let n = 0;
const file = (): string => path.join(dir, `h${n++}.tach`);
const START = 1_700_000_000_000_000;

describe('heap section round trip', () => {
  it('reads back every live, alloc and free batch as written (random polls, deep stacks, big sizes)', () => {
    fc.assert(
      fc.property(plannedTrace, fc.constantFrom<'zstd' | 'none'>('zstd', 'none'), (plan, compression) => {
        const out = file();
        const w = heapFileWriter(out, START, { compression });
        const cpu = w.internFrame({ filename: 'cpu.js', funcname: 'spin', lineno: 3 });
        w.writeStack(7n, 0, BigInt(START + 10), 0, [cpu]);
        const expected = feedPlan(plan, w.heapSink(), START);
        w.writeStack(7n, 0, BigInt(START + 20), 0, [cpu]);
        w.finalize();
        const trace = openHeapTrace(out)!;
        expect(trace).not.toBeNull();
        expect(trace.meta.intervalBytes).toBe(4096);
        expect(trace.meta.startTimeUs).toBe(START);
        expect(readBack(trace)).toEqual(expected);
        // A second pass reads the same (the section is decoded again, the tables only grow).
        expect(readBack(trace)).toEqual(expected);
        const reader = ProfileReader.open(out);
        expect([...reader.samples()].length).toBe(2);
        expect(reader.frames.some((f) => f?.funcname === 'spin')).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('flush() ends a chunk: a recording flushed often reads back the same', () => {
    const plan = fc.sample(plannedTrace, { numRuns: 1, seed: 7 })[0]!;
    const out = file();
    const w = heapFileWriter(out, START);
    const sink = w.heapSink();
    const flushing = new Proxy(sink, {
      get(target, key) {
        const value = Reflect.get(target, key) as unknown;
        if (key !== 'frees' && key !== 'allocations')
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return (batch: unknown) => {
          (value as (b: unknown) => void).call(target, batch);
          w.flush();
        };
      },
    });
    const expected = feedPlan(plan, flushing, START);
    w.finalize();
    expect(readBack(openHeapTrace(out)!)).toEqual(expected);
  });

  it('a file without heap events has no heap trace; a version-1 writer refuses them', () => {
    const v2 = file();
    const w2 = new ProfileWriter(v2, { sampleIntervalUs: 1000n, formatVersion: 2 });
    w2.writeStack(1n, 0, 5n, 0, [w2.internFrame({ filename: 'a', funcname: 'b' })]);
    w2.finalize();
    expect(openHeapTrace(v2)).toBeNull();
    expect(readProfileV2(readFileSync(v2)).info.flags & HeaderFlag.HeapSection).toBe(0);
    const v1 = file();
    const w1 = new ProfileWriter(v1, { sampleIntervalUs: 1000n });
    expect(thrown(() => w1.heapSink()).code).toBe(ErrorCode.TACHYON_V1_HEAP);
    w1.finalize();
    expect(openHeapTrace(v1)).toBeNull();
  });

  it('downgrade keeps the CPU samples and counts the heap events it drops; info shows the counts', () => {
    const plan = fc.sample(
      plannedTrace.filter((p) => p.polls.some((q) => q.allocs.length > 0)),
      { numRuns: 1, seed: 3 },
    )[0]!;
    const out = file();
    const w = heapFileWriter(out, START);
    const cpu = w.internFrame({ filename: 'cpu.js', funcname: 'spin', lineno: 3 });
    for (let i = 0; i < 5; i++) w.writeStack(7n, 0, BigInt(START + 10 * i), 0, [cpu]);
    const expected = feedPlan(plan, w.heapSink(), START);
    w.finalize();
    const events = expected.reduce((sum, b) => sum + b.ordinals.length, 0);
    const allocs = expected.filter((b) => b.kind === 'alloc').reduce((sum, b) => sum + b.ordinals.length, 0);
    const v1 = file();
    const result = downgrade(out, v1);
    expect(result.samples).toBe(5);
    expect(result.heapEventsDropped).toBe(events);
    expect(result.lost.join('\n')).toContain(`heap events: dropped ${events} (${allocs} allocations`);
    expect(ProfileReader.open(v1).info.version).toBe(1);
    expect(infoLines(out).join('\n')).toContain(`heap:         ${allocs.toLocaleString('en')} sampled allocations`);
    expect(infoLines(v1).join('\n')).not.toContain('heap:');
  });
});

describe('files without external objects are what they were before them', () => {
  // test/fixtures/heap-v2: trace{0,1}-{none,zstd}.tach were written by the writer of commit 057ccf9 (before
  // external records existed) from the sink calls in sink-calls.json (two random plans of test/support/heap-traces.ts,
  // no external object): replayed here, today's writer must write the same bytes, on either backend.
  const fixtures = path.join(__dirname, '..', '..', '..', 'fixtures', 'heap-v2');
  interface Recorded {
    callFrames: CpuProfileCallFrame[];
    stacks: [number, number][];
    calls: [string, Record<string, unknown>][];
  }
  const traces = JSON.parse(readFileSync(path.join(fixtures, 'sink-calls.json'), 'utf8')) as Recorded[];
  const column = (v: { t: string; v: number[] }): unknown =>
    v.t === 'Float64Array' ? Float64Array.from(v.v) : Uint32Array.from(v.v);

  it.each(traces.flatMap((_, i) => (['none', 'zstd'] as const).map((c) => [i, c] as const)))(
    'trace %i, %s: byte for byte',
    (i, compression) => {
      const trace = traces[i]!;
      const stacks = new HeapStacks();
      for (const cf of trace.callFrames) stacks.callFrames.push(cf);
      for (const [parent, frame] of trace.stacks) stacks.add(parent, frame);
      const out = file();
      const w = heapFileWriter(out, START, { compression });
      const cpu = w.internFrame({ filename: 'cpu.js', funcname: 'spin', lineno: 3 });
      w.writeStack(7n, 0, BigInt(START + 10), 0, [cpu]);
      const sink = w.heapSink() as unknown as Record<string, (batch: unknown) => void>;
      for (const [method, batch] of trace.calls) {
        const b: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(batch))
          b[k] = v === 'STACKS' ? stacks : v !== null && typeof v === 'object' ? column(v as never) : v;
        sink[method]!.call(sink, b);
      }
      w.finalize();
      expect(
        Buffer.compare(readFileSync(out), readFileSync(path.join(fixtures, `trace${i}-${compression}.tach`))),
      ).toBe(0);
      // Read by today's reader: no batch is external.
      expect(readBack(openHeapTrace(out)!).some((b) => b.external === true)).toBe(false);
    },
  );
});
