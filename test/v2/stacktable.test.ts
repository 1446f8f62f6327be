import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../lib/errors';
import { ByteSink, ByteSource } from '../../lib/tachyon/v2/bytes';
import { StackTableDecoder, type StackTableSinks, type StackTableSources } from '../../lib/tachyon/v2/stacktable';
import { StackTableCoder } from './kind5-coder';

function sinks(): StackTableSinks {
  return { stacks: new ByteSink(), stacksHigh: new ByteSink(), parents: new ByteSink(), parentsHigh: new ByteSink(), stackFrames: new ByteSink() };
}

function sources(columns: { [K in keyof StackTableSinks]: number[] | Uint8Array }): StackTableSources {
  let base = 0;
  const make = (bytes: number[] | Uint8Array) => {
    const b = Uint8Array.from(bytes);
    const src = new ByteSource(b, 0, b.length, base);
    base += 1000;
    return src;
  };
  // Each column gets its own base (0, 1000, 2000, ...) so an error offset names its column.
  return { stacks: make(columns.stacks), stacksHigh: make(columns.stacksHigh), parents: make(columns.parents), parentsHigh: make(columns.parentsHigh), stackFrames: make(columns.stackFrames) };
}

function roundTrip(stacks: number[][]): number[][] {
  const coder = new StackTableCoder();
  const out = sinks();
  for (const s of stacks) coder.encode(s, out);
  const src = sources({ stacks: out.stacks.view(), stacksHigh: out.stacksHigh.view(), parents: out.parents.view(), parentsHigh: out.parentsHigh.view(), stackFrames: out.stackFrames.view() });
  const decoder = new StackTableDecoder();
  const buffer = new Uint32Array(256);
  const decoded = stacks.map(() => Array.from(buffer.subarray(0, decoder.decode(src, buffer))));
  for (const column of Object.values(src)) expect(column.remaining()).toBe(0);
  return decoded;
}

function decodeError(columns: { [K in keyof StackTableSinks]: number[] }, samples = 1): ProfpackError {
  const src = sources(columns);
  const decoder = new StackTableDecoder();
  const buffer = new Uint32Array(256);
  try {
    for (let i = 0; i < samples; i++) decoder.decode(src, buffer);
  } catch (err) {
    expect(err).toBeInstanceOf(ProfpackError);
    return err as ProfpackError;
  }
  throw new Error('decode did not fail');
}

describe('stack-table coding of block kind 5 (read only since issue 19)', () => {
  it('round-trips random stacks, with stacks shared and revisited', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat({ max: 20 }), { maxLength: 30 }), { maxLength: 80 }), (stacks) => {
        const doubled = [...stacks, ...stacks.slice().reverse()];
        expect(roundTrip(doubled)).toEqual(doubled);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips deep stacks and large frame indices, across more than 65,536 stacks', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat({ max: 0xffff_ffff }), { minLength: 200, maxLength: 256 }), { minLength: 1, maxLength: 5 }), (stacks) => {
        expect(roundTrip(stacks)).toEqual(stacks);
      }),
      { numRuns: 20 },
    );
    // Ids beyond 2^16 need the high planes of the ref and the parent distance.
    const churn = Array.from({ length: 3000 }, (_, i) => Array.from({ length: 30 }, (_, j) => (i * 31 + j * 7) % 5000));
    expect(roundTrip(churn)).toEqual(churn);
  });

  it('names a known stack with its id alone and defines a new one once', () => {
    const coder = new StackTableCoder();
    const out = sinks();
    expect(coder.encode([3, 2, 1], out)).toBe(3);
    expect(coder.encode([4, 2, 1], out)).toBe(4);
    expect(coder.encode([3, 2, 1], out)).toBe(3);
    expect(coder.encode([], out)).toBe(0);
    expect(Array.from(out.stacks.view())).toEqual([3, 4, 3, 0]);
    // Stack 4 hangs off stack 2 ([2, 1]): distance = 3 + 1 − 2.
    expect(Array.from(out.parents.view())).toEqual([1, 2]);
    expect(Array.from(out.stackFrames.view())).toEqual([1, 2, 3, 4]);
  });

  it('refuses a stack deeper than 256 frames when coding', () => {
    expect(() => new StackTableCoder().encode(new Array(257).fill(1), sinks())).toThrow(ProfpackError);
  });

  it('rejects a reference to a stack that was never defined, with its offset', () => {
    // Ref 5 with no definitions: the frames column cannot hold 5 new stacks.
    const err = decodeError({ stacks: [5], stacksHigh: [0], parents: [], parentsHigh: [], stackFrames: [] });
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_STACK);
    expect(err.offset).toBe(0);
  });

  it('rejects a definition whose parent does not exist', () => {
    const err = decodeError({ stacks: [1], stacksHigh: [0], parents: [2], parentsHigh: [0], stackFrames: [9] });
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_STACK);
    expect(err.offset).toBe(2000);
  });

  it('rejects a definition that is its own parent (a cycle)', () => {
    const err = decodeError({ stacks: [1, 2], stacksHigh: [0, 0], parents: [1, 0], parentsHigh: [0, 0], stackFrames: [9, 8] }, 2);
    expect(err.code).toBe(ErrorCode.V2_STACK_CYCLE);
    expect(err.offset).toBe(2001);
  });

  it('rejects a chain longer than the stack limit', () => {
    const err = decodeError({ stacks: [1, 1], stacksHigh: [0, 1], parents: [1, 1], parentsHigh: [0, 0], stackFrames: new Array(258).fill(1) }, 2);
    expect(err.code).toBe(ErrorCode.V2_STACK_TOO_DEEP);
    expect(err.offset).toBe(1);
  });

  it('rejects a ref whose high plane overflows u32', () => {
    const err = decodeError({ stacks: [0], stacksHigh: [0x80, 0x80, 0x80, 0x80, 0x01], parents: [], parentsHigh: [], stackFrames: [] });
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_STACK);
  });
});
