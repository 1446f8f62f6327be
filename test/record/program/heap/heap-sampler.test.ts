/**
 * The heap sampler's two paths (lib/record/program/heap/probe.ts): V8's C++ API
 * (native/heap/, no forced GC) and the inspector, their one flat form and its
 * stack numbering, which keeps V8's node ids across polls.
 */
import * as fs from 'node:fs';
import * as inspector from 'node:inspector';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  flattenHeapTree,
  HeapSampler,
  HeapStackNumbers,
  NO_PARENT,
  probeHeapSampler,
  type HeapSamplerChoice,
  type SamplingHeapNode,
} from '../../../../lib/record/program/heap/index';
import { ErrorCode } from '../../../../lib/errors';
import { postSync } from '../../../../lib/v8/index';

const addonFile = path.join(__dirname, '..', '..', '..', '..', 'build', 'Release', 'profpack_heap.v8heap');

function frameNode(id: number, name: string, children: SamplingHeapNode[] = []): SamplingHeapNode {
  return {
    id,
    callFrame: { functionName: name, scriptId: '7', url: 'file:///app.js', lineNumber: name.length, columnNumber: 2 },
    children,
  };
}

/** The function names of stack `id`, innermost first. */
function functionsOf(numbers: HeapStackNumbers, id: number): string[] {
  const names: string[] = [];
  for (let s = id; s >= 0; s = numbers.stacks.parentOf(s)) {
    names.push(numbers.stacks.callFrames[numbers.stacks.frameOf(s)]!.functionName);
  }
  return names;
}

describe('the flat form and its stack numbers', () => {
  it('a node keeps the stack of its path through polls where V8 drops nodes and numbers new ones', () => {
    // A tree over a few function names; each poll keeps some nodes (same ids) and adds new ones (fresh ids).
    const names = ['main', 'parse', 'alloc', 'emit'];
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.nat(40), fc.nat(3), fc.boolean()), { maxLength: 60 }), {
          minLength: 1,
          maxLength: 40,
        }),
        (polls) => {
          const numbers = new HeapStackNumbers();
          let nextId = 2;
          // Live nodes: id -> [parent id (1 = root), name].
          let live = new Map<number, [number, string]>();
          for (const additions of polls) {
            // V8 drops a node without samples or children: here, every third node of the previous poll's leaves.
            const parents = new Set([...live.values()].map(([p]) => p));
            live = new Map([...live].filter(([id], k) => parents.has(id) || k % 3 !== 0));
            for (const [parentPick, name, underRoot] of additions) {
              const ids = [...live.keys()];
              const parent = underRoot || ids.length === 0 ? 1 : ids[parentPick % ids.length]!;
              live.set(nextId++, [parent, names[name]!]);
            }
            const build = (id: number, name: string): SamplingHeapNode =>
              frameNode(
                id,
                name,
                [...live].filter(([, [p]]) => p === id).map(([child, [, n]]) => build(child, n)),
              );
            const byNode = numbers.number(build(1, '(root)'));
            expect(byNode.get(1)).toBe(-1);
            for (const [id] of live) {
              const path: string[] = [];
              for (let at = id; at !== 1; at = live.get(at)![0]) path.push(live.get(at)![1]);
              expect(functionsOf(numbers, byNode.get(id)!)).toEqual(path);
            }
          }
          // Equal paths share one stack, equal frames one call frame.
          expect(numbers.stacks.callFrames.length).toBeLessThanOrEqual(names.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('flattens a tree in pre-order, a parent before its children, the root without one', () => {
    const tree = frameNode(1, '(root)', [frameNode(2, 'main', [frameNode(3, 'alloc')]), frameNode(4, 'emit')]);
    const flat = flattenHeapTree(tree);
    expect([...flat.nodeIds]).toEqual([1, 2, 3, 4]);
    expect([...flat.parentIds]).toEqual([NO_PARENT, 1, 2, 1]);
    expect(flat.strings[flat.nameIds[2]!]).toBe('alloc');
    expect(flat.strings[flat.urlIds[2]!]).toBe('file:///app.js');
    expect([flat.scriptIds[2], flat.lines[2], flat.columns[2]]).toEqual([7, 5, 2]);
  });

  it('a script V8 no longer names (its functions all collected) keeps the file and line earlier polls gave', () => {
    const numbers = new HeapStackNumbers();
    const leafOf = (byNode: ReadonlyMap<number, number>, node: number) =>
      numbers.stacks.callFrames[numbers.stacks.frameOf(byNode.get(node)!)]!;
    const first = leafOf(numbers.number(frameNode(1, '(root)', [frameNode(2, 'leakMemory')])), 2);
    expect(first).toMatchObject({ url: 'file:///app.js', lineNumber: 10 });
    const gone = frameNode(1, '(root)', [frameNode(3, 'leakMemory'), frameNode(4, 'neverSeen')]);
    for (const child of gone.children ?? [])
      Object.assign(child.callFrame, { url: '', lineNumber: -1, columnNumber: -1 });
    const byNode = numbers.number(gone);
    expect(leafOf(byNode, 3)).toBe(first);
    // Its file is known from the script; a function never met with a line keeps V8's -1.
    expect(leafOf(byNode, 4)).toMatchObject({ url: 'file:///app.js', lineNumber: -1 });
  });

  it('refuses a node whose parent it has not met with a coded error', () => {
    const flat = flattenHeapTree(frameNode(1, '(root)', [frameNode(2, 'main')]));
    flat.parentIds[1] = 99;
    expect(() => new HeapStackNumbers().numberFlat(flat)).toThrow(
      expect.objectContaining({ code: ErrorCode.RECORD_FAILED }),
    );
  });
});

describe('the probe', () => {
  it('chooses by PROFPACK_HEAP_SAMPLER, then PROFPACK_BACKEND, then whether the addon loads', () => {
    expect(probeHeapSampler({ PROFPACK_HEAP_SAMPLER: 'inspector' })).toMatchObject({ kind: 'inspector' });
    expect(probeHeapSampler({ PROFPACK_BACKEND: 'js' })).toMatchObject({
      kind: 'inspector',
      reason: 'forced by PROFPACK_BACKEND=js',
    });
    expect(() => probeHeapSampler({ PROFPACK_HEAP_SAMPLER: 'gc-free' })).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }),
    );
    const auto = probeHeapSampler({});
    // This checkout's build is for the Node that runs the tests (binding.gyp's profpack_heap target).
    expect(auto.kind).toBe(fs.existsSync(addonFile) ? 'native' : 'inspector');
    if (auto.kind === 'inspector') {
      expect(auto.reason).toBeTypeOf('string');
      expect(() => probeHeapSampler({ PROFPACK_HEAP_SAMPLER: 'native' })).toThrow(
        expect.objectContaining({ code: ErrorCode.NATIVE_UNAVAILABLE }),
      );
    }
  });
});

const kept: number[][] = [];

/** ~1 MB kept, one array per 8 KB. */
function keepForBothSamplers(): void {
  for (let i = 0; i < 128; i++) kept.push(new Array<number>(1000).fill(i + 0.5));
}

let dropped: number[][] = [];
function makeDroppedGarbage(): void {
  for (let i = 0; i < 128; i++) dropped.push(new Array<number>(1000).fill(i + 0.25));
}

function siteFrames(sampler: HeapSampler, ordinals: Uint32Array, stackIds: Uint32Array, name: string): string[] {
  const frames = new Set<string>();
  for (let k = 0; k < ordinals.length; k++) {
    const stack = stackIds[k]!;
    const leaf = sampler.numbers.stacks.callFrames[sampler.numbers.stacks.frameOf(stack)]!;
    if (leaf.functionName === name) frames.add(`${leaf.url}:${leaf.lineNumber}:${leaf.columnNumber}`);
  }
  return [...frames];
}

// With no addon for this Node both choices are the inspector's, and these still hold.
describe('both samplers in this process', () => {
  const choices: HeapSamplerChoice[] = [probeHeapSampler({}), probeHeapSampler({ PROFPACK_HEAP_SAMPLER: 'inspector' })];

  it('name the same allocation site, at the same frame', () => {
    const seen = choices.map((choice) => {
      kept.length = 0;
      const sampler = new HeapSampler(4096, choice);
      try {
        keepForBothSamplers();
        const poll = sampler.poll()!;
        expect(sampler.kind).toBe(choice.kind);
        return siteFrames(sampler, poll.ordinals, poll.stackIds, 'keepForBothSamplers');
      } finally {
        sampler.dispose();
      }
    });
    expect(seen[0]!.length).toBeGreaterThan(0);
    expect(seen[0]).toEqual(seen[1]);
    kept.length = 0;
  });

  it("a poll may leave dead objects to V8's own GC (native); one asked to collect sees them all freed", () => {
    const sampler = new HeapSampler(4096, choices[0]);
    try {
      makeDroppedGarbage();
      const born = sampler.poll()!;
      const leafOf = (k: number): string => {
        const { stacks } = sampler.numbers;
        return stacks.callFrames[stacks.frameOf(born.stackIds[k]!)]!.functionName;
      };
      // The arrays' 8 KB element stores (not what V8 keeps for the function itself, e.g. its feedback): over
      // 6 KB as each path records a size (native: V8's raw size; inspector: the size whose 1/p weight is its bytes).
      const garbage = Array.from(born.ordinals).filter(
        (_, k) => leafOf(k) === 'makeDroppedGarbage' && born.sizes[k]! >= 6000,
      );
      // ~1 MB at 4 KiB: ~250 samples.
      expect(garbage.length).toBeGreaterThan(100);
      dropped = [];
      // Dead now: an ordinary poll may still see them (no GC forced), one that collects sees them all gone.
      const plain = sampler.poll()!;
      const collected = sampler.poll(true)!;
      const freed = new Set([...plain.freed, ...collected.freed]);
      expect(garbage.filter((o) => !freed.has(o))).toEqual([]);
    } finally {
      sampler.dispose();
    }
  });
});

describe("another profiler restarting V8's sampling heap profiler", () => {
  it('ends the inspector path with a coded error rather than reading a fresh profile as frees and births', () => {
    const sampler = new HeapSampler(64 * 1024, { kind: 'inspector', reason: 'test', addon: undefined });
    const kept: number[][] = [];
    try {
      // Every other array dies before the poll (which collects first), so the live ordinals have gaps: the
      // restarted profiler's numbers from 1 land in them. (Numbers landing only on live ones, a program that keeps
      // every sampled object, cannot be told from a quiet poll: sampler.ts says so.)
      for (let i = 0; i < 4000; i++) {
        const array = new Array(1250).fill(i + 0.5);
        if (i % 2 === 0) kept.push(array);
      }
      expect(sampler.poll()!.ordinals.length).toBeGreaterThan(50);
      // A second session shares V8's one profiler: its stop ends the sampling for both, its start begins anew.
      const other = new inspector.Session();
      other.connect();
      postSync(other, 'HeapProfiler.enable');
      postSync(other, 'HeapProfiler.stopSampling');
      postSync(other, 'HeapProfiler.startSampling', { samplingInterval: 64 * 1024 });
      for (let i = 0; i < 2000; i++) kept.push(new Array(1250).fill(i + 0.5));
      let failure: { code?: string; message?: string } = {};
      try {
        sampler.poll();
      } catch (err) {
        failure = err as { code?: string; message?: string };
      }
      expect(failure).toMatchObject({ code: ErrorCode.RECORD_FAILED, message: expect.stringContaining('restarted') });
      postSync(other, 'HeapProfiler.stopSampling');
      other.disconnect();
    } finally {
      sampler.dispose();
    }
    expect(kept.length).toBe(4000);
  });
});
