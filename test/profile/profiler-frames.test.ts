// CPython's sampling profiler's own frames (`_sync_coordinator.py`): hidden wherever they sit in a stack, as
// CPython 3.15's `filter_internal_frames` drops them, in views, aggregation and non-Tachyon outputs; kept by
// Tachyon rewrites. test/oracle/tachyon.test.ts compares the same with CPython's own collectors on real files.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openProfile, writeProfile } from '../../lib/formats/index';
import {
  ProfileBuilder,
  SampleTypes,
  isProfilerFrame,
  makeFrame,
  mapBatches,
  withoutProfilerFrames,
} from '../../lib/profile/index';
import { aggregate } from '../../lib/query/aggregate';
import { buildViewData } from '../../lib/view/tree';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-profiler-frames-');
const COORDINATOR = '/usr/lib/python3.15/profiling/sampling/_sync_coordinator.py';

/** Frames 0-3 user code, 4-5 the profiler's (as `profiling.sampling run` records them). */
function builder(): { model: ProfileBuilder; ids: number[] } {
  const model = new ProfileBuilder({
    sampleTypes: [SampleTypes.samples],
    defaultSampleType: 0,
    startTimeUs: 1_000_000n,
    sampleIntervalUs: 1000n,
  });
  const ids = [
    makeFrame('main', '/app/a.py', 1),
    makeFrame('work', '/app/a.py', 5),
    makeFrame('leaf', '/app/b.py', 9),
    makeFrame('<module>', '/app/a.py', 20),
    makeFrame('_execute_script', COORDINATOR, 120),
    makeFrame('main', COORDINATOR, 254),
  ].map((f) => model.internFrame(f));
  return { model, ids };
}

/** Stacks (frame indices into `ids`, innermost first), each one record of count 1. */
function stacksOf(model: ProfileBuilder, ids: number[], stacks: number[][]): void {
  const thread = model.internThread(7n);
  stacks.forEach((s, i) => model.add(model.stacks.intern(s.map((k) => ids[k]!)), thread, 1_000_000 + i * 1000, 0, [1]));
}

/** Each record's stack as function names, innermost first. */
function named(source: ReturnType<typeof builder>['model']): string[][] {
  const out: string[][] = [];
  for (const b of source.batches())
    for (let i = 0; i < b.length; i++)
      out.push(source.stacks.toArray(b.stack[i]!).map((f) => source.frames[f]!.funcname));
  return out;
}

describe('withoutProfilerFrames', () => {
  it('drops the profiler’s frames wherever they sit and keeps the rest in order (property)', () => {
    const stack = fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(stack, { minLength: 1, maxLength: 30 }), (stacks) => {
        const { model, ids } = builder();
        stacksOf(model, ids, stacks);
        const names = (k: number): string => model.frames[ids[k]!]!.funcname;
        const want = stacks.map((s) => s.filter((k) => k < 4).map(names));
        expect(named(withoutProfilerFrames(model))).toEqual(want);
        // The source itself is untouched.
        expect(named(model)).toEqual(stacks.map((s) => s.map(names)));
      }),
      { numRuns: 200 },
    );
  });

  it('a source without such frames keeps its stack ids and batches as they are', () => {
    const { model, ids } = builder();
    stacksOf(model, ids, [[2, 1, 0], [1, 0], [3]]);
    const batch = model.all();
    const filtered = withoutProfilerFrames(mapBatches(model, () => [batch]));
    expect([...filtered.batches()]).toEqual([batch]);
    expect([...filtered.batches()][0]).toBe(batch);
    expect(filtered.stacks.size).toBe(model.stacks.size);
    expect(withoutProfilerFrames(filtered)).toBe(filtered);
  });

  it('the rule is CPython’s suffix test on the filename', () => {
    expect(isProfilerFrame(makeFrame('main', COORDINATOR))).toBe(true);
    expect(isProfilerFrame(makeFrame('main', 'my_sync_coordinator.py'))).toBe(true);
    expect(isProfilerFrame(makeFrame('_sync_coordinator.py', '/app/a.py'))).toBe(false);
    expect(isProfilerFrame(makeFrame('main', ''))).toBe(false);
  });
});

describe('views and outputs hide them; Tachyon keeps them', () => {
  // Two ticks under the coordinator, one of the coordinator alone (CPython drops it; profpack keeps it as
  // (no stack)), one plain.
  const stacks = [
    [2, 1, 4, 5, 3],
    [1, 4, 5, 3],
    [4, 5],
    [2, 1, 0],
  ];

  it('top: no profiler rows, their ticks go to the frame below; a stack of them only is (no stack)', () => {
    const { model, ids } = builder();
    stacksOf(model, ids, stacks);
    const rows = aggregate(model, { limit: 0 }).rows.map((r) => [r.funcname, r.filename, r.self, r.total]);
    expect(rows).toEqual([
      ['leaf', '/app/b.py', 2, 2],
      ['work', '/app/a.py', 1, 3],
      ['(no stack)', '', 1, 1],
      ['<module>', '/app/a.py', 0, 2],
      ['main', '/app/a.py', 0, 1],
    ]);
  });

  it('the flame page’s tree has no profiler frame', () => {
    const { model, ids } = builder();
    stacksOf(model, ids, stacks);
    const data = buildViewData(model);
    expect(data.funcs.filter((f) => f.file === COORDINATOR)).toEqual([]);
    expect(data.total).toBe(4);
  });

  it('collapsed output hides them; a Tachyon rewrite keeps every frame', () => {
    const { model, ids } = builder();
    stacksOf(model, ids, stacks);
    const collapsed = path.join(dir, 'out.collapsed');
    writeProfile(model, collapsed, 'collapsed');
    expect(readFileSync(collapsed, 'utf8')).not.toContain('_sync_coordinator.py');
    const tach = path.join(dir, 'out.tach');
    writeProfile(model, tach, 'tachyon');
    const back = openProfile(tach);
    try {
      expect(named(back as unknown as ProfileBuilder)).toEqual(named(model));
    } finally {
      back.close();
    }
  });
});
