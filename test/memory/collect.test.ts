import { describe, expect, it } from 'vitest';
import { HeapTraceCollector, NO_HEAP_STACK, unsampledWeight } from '../../lib/memory/index';
import { HeapStacks } from '../../lib/record/wire/index';

function callFrame(name: string) {
  return { functionName: name, url: 'file:///app.js', lineNumber: 9, columnNumber: 1, scriptId: '1' };
}

describe('HeapTraceCollector', () => {
  it('maps the recorder stack tree onto model stacks, outermost first, and keeps the events in order', () => {
    const stacks = new HeapStacks();
    stacks.callFrames.push(callFrame('main'), callFrame('leak'), callFrame('garbage'));
    const main = stacks.add(-1, 0);
    const leak = stacks.add(main, 1);
    const garbage = stacks.add(main, 2);
    const c = new HeapTraceCollector();
    c.begin({ intervalBytes: 1024 });
    c.allocations({
      threadId: 7,
      timeUs: 2000,
      sinceUs: 1000,
      ordinals: Uint32Array.of(1, 2, 3),
      sizes: Uint32Array.of(100, 200, 300),
      stackIds: Uint32Array.of(leak, garbage, NO_HEAP_STACK),
      shortLived: 4,
      stacks,
    });
    c.frees({ threadId: 7, timeUs: 3000, sinceUs: 2000, ordinals: Uint32Array.of(2) });
    const events = [...c.events()];
    expect(events.map((e) => e.kind)).toEqual(['alloc', 'free']);
    const alloc = events[0]!;
    if (alloc.kind !== 'alloc') throw new Error('not an alloc batch');
    const names = (id: number) => c.stacks.toArray(id).map((f) => c.frames[f]!.funcname);
    expect(names(alloc.stackIds[0]!)).toEqual(['leak', 'main']);
    expect(names(alloc.stackIds[1]!)).toEqual(['garbage', 'main']);
    expect(alloc.stackIds[2]).toBe(NO_HEAP_STACK);
    expect(alloc.shortLived).toBe(4);
    expect(c.frames[c.stacks.frame(alloc.stackIds[0]!)]).toMatchObject({
      filename: '/app.js', // V8's file:///app.js, as a path
      lineno: 10,
      column: 2,
    });
    expect(c.threads[alloc.thread]!.threadId).toBe(7n);
    expect(c.meta).toEqual({ intervalBytes: 1024, startTimeUs: 1000, durationUs: 2000 });
  });

  it('maps a stack 10,000 frames deep without recursion', () => {
    const stacks = new HeapStacks();
    let id = -1;
    for (let i = 0; i < 10_000; i++) {
      stacks.callFrames.push(callFrame(`f${i}`));
      id = stacks.add(id, i);
    }
    const c = new HeapTraceCollector();
    c.allocations({
      threadId: 1,
      timeUs: 2,
      sinceUs: 1,
      ordinals: Uint32Array.of(1),
      sizes: Uint32Array.of(8),
      stackIds: Uint32Array.of(id),
      shortLived: 0,
      stacks,
    });
    const [batch] = [...c.events()];
    if (batch?.kind !== 'alloc') throw new Error('not an alloc batch');
    expect(c.stacks.depth(batch.stackIds[0]!)).toBe(10_000);
  });
});

describe('unsampledWeight', () => {
  it('scales a sampled object by the inverse of its sampling probability', () => {
    const small = unsampledWeight(64, 512 * 1024);
    expect(small.objects).toBeCloseTo(1 / (1 - Math.exp(-64 / (512 * 1024))), 6);
    expect(small.bytes).toBeCloseTo(64 * small.objects, 3);
    // An object far larger than the interval is sampled almost surely: it stands for itself.
    expect(unsampledWeight(100 * 1024 * 1024, 512 * 1024).objects).toBeCloseTo(1, 9);
  });
});
