/**
 * The Buffer and ArrayBuffer sampler (lib/record/program/heap/external.ts) in this process: what it wraps stays what user
 * code expects (instanceof, subclasses, constructor identity, statics), views and small typed arrays allocate nothing
 * it counts, a pooled Buffer is weighed by its own length, frees are seen once the object is collected, and dispose()
 * puts the originals back. The sampling rate is checked against its closed form.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { ExternalSampler } from '../../../../lib/record/program/heap/external';
import { HeapStackNumbers } from '../../../../lib/record/program/heap/stacks';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Every allocation sampled: the countdown is always below one byte (random() = 0 draws the minimum, 1). */
const always = (): number => 0;

let sampler: ExternalSampler | undefined;
afterEach(() => sampler?.dispose());

function start(intervalBytes = 1024, random = always): { s: ExternalSampler; numbers: HeapStackNumbers } {
  const numbers = new HeapStackNumbers();
  sampler = new ExternalSampler(intervalBytes, numbers, random);
  return { s: sampler, numbers };
}

function leafOf(numbers: HeapStackNumbers, stack: number): string[] {
  return numbers.stacks.callFramesOf(stack).map((cf) => cf.functionName);
}

describe('the external sampler', () => {
  it('keeps instanceof, subclasses, constructor identity and statics; dispose() puts the originals back', () => {
    const before = { ArrayBuffer, Float64Array, alloc: Buffer.alloc };
    start();
    expect(ArrayBuffer).not.toBe(before.ArrayBuffer);
    const ab = new ArrayBuffer(100);
    expect(ab instanceof ArrayBuffer).toBe(true);
    expect(ab.constructor).toBe(ArrayBuffer);
    expect(Object.getPrototypeOf(ab)).toBe(before.ArrayBuffer.prototype);
    class Sub extends ArrayBuffer {}
    const sub = new Sub(200);
    expect(sub).toBeInstanceOf(Sub);
    expect(sub).toBeInstanceOf(ArrayBuffer);
    expect(ArrayBuffer.isView(new Float64Array(20))).toBe(true);
    expect(Float64Array.from([1, 2, 3])).toBeInstanceOf(Float64Array);
    expect(Buffer.alloc(10)).toBeInstanceOf(Buffer);
    expect(() => (ArrayBuffer as unknown as () => unknown)()).toThrow(TypeError);
    sampler!.dispose();
    expect(ArrayBuffer).toBe(before.ArrayBuffer);
    expect(Float64Array).toBe(before.Float64Array);
    expect(Buffer.alloc).toBe(before.alloc);
    expect(new ArrayBuffer(8).constructor).toBe(before.ArrayBuffer);
  });

  it('samples with the allocating stack under an (external) frame; views, small arrays and nested calls are not counted', () => {
    const { s, numbers } = start();
    const keep: unknown[] = [];
    function makeStore(): ArrayBuffer {
      return new ArrayBuffer(4096);
    }
    keep.push(makeStore());
    keep.push(new Uint8Array(keep[0] as ArrayBuffer, 16)); // a view: nothing allocated
    keep.push(new Float64Array(4)); // 32 bytes: on V8's heap
    keep.push(Buffer.from(keep[0] as ArrayBuffer)); // a view again
    keep.push(Buffer.concat([Buffer.from('ab'), Buffer.from('cd')])); // pooled parts, then one result
    keep.push(new Float64Array(100));
    const poll = s.take();
    expect([...poll.sizes]).toEqual([4096, 2, 2, 4, 800]);
    expect(leafOf(numbers, poll.stackIds[0]!).slice(0, 2)).toEqual(['(external) new ArrayBuffer', 'makeStore']);
    expect(leafOf(numbers, poll.stackIds[3]!)[0]).toBe('(external) Buffer.concat');
    expect(leafOf(numbers, poll.stackIds[4]!)[0]).toBe('(external) new Float64Array');
    expect([...poll.ordinals]).toEqual([1, 2, 3, 4, 5]);
    expect(s.take().ordinals).toHaveLength(0);
  });

  it('sees a sampled object freed once it is collected, at the poll after its allocation or at the same one', async () => {
    const { s } = start();
    // Dropped at once: garbage from the next task on.
    void new ArrayBuffer(2048);
    const kept = Buffer.alloc(9000);
    const first = s.take();
    expect([...first.ordinals]).toEqual([1, 2]);
    // A WeakRef keeps its target for the rest of the job that made or read it: the next task.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    void new ArrayBuffer(512);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const second = s.take();
    // The test runner's own Buffers between the awaits are sampled too (every allocation is): ordinals 4 on.
    expect([...second.freed]).toEqual([1]);
    expect(second.ordinals[0]).toBe(3);
    expect(second.collected[0]).toBe(3);
    expect(kept.length).toBe(9000);
  });

  it('samples an allocation of s bytes with probability 1 - exp(-s / interval) (a Poisson process over bytes)', () => {
    // A fixed pseudo-random sequence: the test is about the rate, not about Math.random.
    let x = 7;
    const random = (): number => ((x = (x * 48271) % 2147483647) - 1) / 2147483646;
    const interval = 8192;
    const { s } = start(interval, random);
    const size = 1024;
    const n = 4000;
    for (let i = 0; i < n; i++) new Uint8Array(size);
    const sampled = s.take().ordinals.length;
    const expected = n * (1 - Math.exp(-size / interval));
    // Binomial: 4 standard deviations.
    const sd = Math.sqrt(n * (1 - Math.exp(-size / interval)) * Math.exp(-size / interval));
    expect(Math.abs(sampled - expected)).toBeLessThan(4 * sd);
  });

  it("leaves out the recorder's own allocations without numbering their stacks", () => {
    // This file stands for the recorder's code: every frame of its allocations is "own".
    const numbers = new HeapStackNumbers(__dirname);
    sampler = new ExternalSampler(1024, numbers, always);
    const keep = [Buffer.alloc(2048), new ArrayBuffer(4096)];
    const poll = sampler.take();
    expect(keep.length).toBe(2);
    expect(sampler.sampled).toBe(0);
    expect(poll.ordinals.length).toBe(0);
    // Numbered and thrown away before: a stack and its frames per own allocation site, never sent.
    expect(numbers.stacks.size).toBe(0);
    expect(numbers.stacks.callFrames.length).toBe(0);
  });
});
