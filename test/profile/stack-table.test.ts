/**
 * StackTable, the one (parent, frame) → stack table of the profile model and the JS Tachyon record decoder,
 * against a Map keyed by `${parent},${frame}`: ids dense in the order first met and stable, parent, frame and
 * depth of every id, `created` on the first push of a pair only, and clear() back to the empty stack alone.
 * Runs long enough to grow the entry arrays (1024) and the hash (2048 slots) several times over.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StackTable } from '../../lib/profile/stack-table';

/** The table as a Map and three plain arrays, id 0 the empty stack. */
class Oracle {
  ids = new Map<string, number>();
  parent = [0];
  frame = [0];
  depth = [0];

  push(parent: number, frame: number): { id: number; created: boolean } {
    const key = `${parent},${frame}`;
    const known = this.ids.get(key);
    if (known !== undefined) return { id: known, created: false };
    const id = this.parent.length;
    this.ids.set(key, id);
    this.parent.push(parent);
    this.frame.push(frame);
    this.depth.push(this.depth[parent]! + 1);
    return { id, created: true };
  }

  clear(): void {
    this.ids.clear();
    this.parent.length = this.frame.length = this.depth.length = 1;
  }

  /** Frames innermost first, by walking parents. */
  frames(id: number): number[] {
    const out: number[] = [];
    for (let s = id; s !== 0; s = this.parent[s]!) out.push(this.frame[s]!);
    return out;
  }
}

type Op =
  | { kind: 'push'; parentPick: number; frame: number }
  | { kind: 'intern'; frames: number[]; outermostFirst: boolean }
  | { kind: 'clear' };

// Few frames make pairs recur (the last-child shortcut and hash hits); the full uint32 range reaches the mixer's edges.
const frameArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffffffff }) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('push' as const), parentPick: fc.nat(), frame: frameArb }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('intern' as const),
      frames: fc.array(frameArb, { maxLength: 40 }),
      outermostFirst: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
);

function check(table: StackTable, oracle: Oracle): void {
  expect(table.size).toBe(oracle.parent.length);
  const buffer = { buffer: new Uint32Array(2) };
  for (let id = 0; id < oracle.parent.length; id++) {
    expect([table.parent(id), table.frame(id), table.depth(id)]).toEqual([
      oracle.parent[id],
      oracle.frame[id],
      oracle.depth[id],
    ]);
    expect([table.parents[id], table.frameIds[id]]).toEqual([oracle.parent[id], oracle.frame[id]]);
    const frames = oracle.frames(id);
    expect(table.toArray(id)).toEqual(frames);
    expect(table.frames(id, buffer)).toBe(frames.length);
    expect(Array.from(buffer.buffer.subarray(0, frames.length))).toEqual(frames);
  }
  // Stable: every pair known gives its id again, and creates nothing.
  for (const [key, id] of oracle.ids) {
    const [parent, frame] = key.split(',').map(Number) as [number, number];
    expect(table.push(parent, frame)).toBe(id);
    expect(table.created).toBe(false);
  }
  expect(table.size).toBe(oracle.parent.length);
}

describe('StackTable against a Map of (parent, frame) pairs', () => {
  it('gives the same dense ids, parents, frames and depths, through growth and clear()', () => {
    fc.assert(
      fc.property(fc.nat(3000), fc.array(opArb, { minLength: 1, maxLength: 1500 }), (prefill, ops) => {
        const table = new StackTable();
        const oracle = new Oracle();
        // Up to 3000 stacks first (a tree ~7 deep), so later pushes land in grown arrays and a rehashed table.
        for (let i = 1; i <= prefill; i++) {
          const want = oracle.push(Math.floor(i / 3), i % 5);
          expect(table.push(Math.floor(i / 3), i % 5)).toBe(want.id);
        }
        for (const op of ops) {
          if (op.kind === 'push') {
            const parent = op.parentPick % oracle.parent.length;
            const want = oracle.push(parent, op.frame);
            expect(table.push(parent, op.frame)).toBe(want.id);
            expect(table.created).toBe(want.created);
          } else if (op.kind === 'intern') {
            const outermost = op.outermostFirst ? op.frames : [...op.frames].reverse();
            let want = 0;
            for (const f of outermost) want = oracle.push(want, f).id;
            const got = op.outermostFirst ? table.internOutermostFirst(op.frames) : table.intern(op.frames);
            expect(got).toBe(want);
          } else {
            table.clear();
            oracle.clear();
            expect(table.size).toBe(1);
          }
        }
        check(table, oracle);
      }),
      { numRuns: 30 },
    );
  });

  it('after clear() gives ids from 1 again, none of the old pairs known', () => {
    const table = new StackTable();
    const pairs: [number, number][] = [];
    // 4000 stacks in chains from the root: the entries and the hash have grown before the clear.
    let parent = 0;
    for (let i = 1; i <= 4000; i++) {
      pairs.push([parent, 100 + i]);
      const id = table.push(parent, 100 + i);
      parent = i % 97 === 0 ? 0 : id;
    }
    expect(table.size).toBe(4001);
    table.clear();
    expect(table.size).toBe(1);
    // The same pairs again, last first (the root's last child first: no shortcut may survive the clear), each
    // numbered as a fresh table would number it; pairs under a parent not yet known are left out.
    const oracle = new Oracle();
    for (const [parent, frame] of [...pairs].reverse()) {
      if (parent >= oracle.parent.length) continue;
      const want = oracle.push(parent, frame);
      expect(table.push(parent, frame)).toBe(want.id);
      expect(table.created).toBe(want.created);
    }
    expect(oracle.parent.length).toBeGreaterThan(40);
    check(table, oracle);
  });
});
