import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { StackTableDecoder } from '../../../lib/tachyon/codec/stacktable';
import { decodeAll, decodeColumns, decodeError as decodeWith, sinks, type Columns } from './stack-columns';
import { StackTableCoder } from './kind5-coder';

function roundTrip(stacks: number[][]): number[][] {
  const coder = new StackTableCoder();
  const out = sinks();
  for (const s of stacks) coder.encode(s, out);
  return decodeAll(new StackTableDecoder(), out, stacks.length);
}

const decodeError = (columns: Columns, samples = 1) => decodeWith(new StackTableDecoder(), columns, samples);

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
      fc.property(
        fc.array(fc.array(fc.nat({ max: 0xffff_ffff }), { minLength: 200, maxLength: 256 }), {
          minLength: 1,
          maxLength: 5,
        }),
        (stacks) => {
          expect(roundTrip(stacks)).toEqual(stacks);
        },
      ),
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

  it('refuses a stack deeper than 4,096 frames when coding', () => {
    expect(() => new StackTableCoder().encode(new Array(4097).fill(1), sinks())).toThrow(ProfpackError);
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
    const err = decodeError(
      { stacks: [1, 2], stacksHigh: [0, 0], parents: [1, 0], parentsHigh: [0, 0], stackFrames: [9, 8] },
      2,
    );
    expect(err.code).toBe(ErrorCode.V2_STACK_CYCLE);
    expect(err.offset).toBe(2001);
  });

  it('rejects a chain longer than the stack limit (4,096), and reads one of 4,096 frames', () => {
    // Ref 4,097 = 16 × 256 + 1 after one definition: 4,096 new stacks below a 1-frame one.
    const chain = { stacks: [1, 1], stacksHigh: [0, 16], parents: [1, 1], parentsHigh: [0, 0] };
    const err = decodeError({ ...chain, stackFrames: new Array(4098).fill(1) }, 2);
    expect(err.code).toBe(ErrorCode.V2_STACK_TOO_DEEP);
    expect(err.offset).toBe(1);
    const whole = decodeColumns(
      new StackTableDecoder(),
      { ...chain, stacks: [1, 0], stackFrames: new Array(4096).fill(1) },
      2,
    );
    expect(whole.map((s) => s.length)).toEqual([1, 4096]);
  });

  it('rejects a ref whose high plane overflows u32', () => {
    const err = decodeError({
      stacks: [0],
      stacksHigh: [0x80, 0x80, 0x80, 0x80, 0x01],
      parents: [],
      parentsHigh: [],
      stackFrames: [],
    });
    expect(err.code).toBe(ErrorCode.V2_UNDEFINED_STACK);
  });
});
