/**
 * Outputs that cannot hold labels (collapsed, speedscope, .cpuprofile,
 * .heapprofile, Tachyon version 1) say once which label keys they dropped,
 * never silently; outputs that keep them, and unlabelled profiles, say nothing.
 * The oracle is the labels the test itself put on the records.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collapsedAdapter } from '../../lib/formats/collapsed';
import { cpuprofileAdapter } from '../../lib/formats/devtools/cpuprofile';
import { heapprofileAdapter } from '../../lib/formats/devtools/heapprofile';
import { pprofAdapter } from '../../lib/formats/pprof/index';
import { speedscopeAdapter } from '../../lib/formats/speedscope';
import { tachyonAdapter } from '../../lib/formats/tachyon/index';
import type { FormatAdapter } from '../../lib/formats/adapter';
import { ProfileBuilder, makeFrame, type Label } from '../../lib/profile/index';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-label-loss-');

/** Three records on one thread: two labelled (keys span id, pid; then pid, route), one not. */
function labelled(sets: Label[][]): ProfileBuilder {
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'wall', unit: 'nanoseconds' },
      { type: 'alloc_space', unit: 'bytes' },
    ],
    defaultSampleType: 0,
    startTimeUs: 1_000_000n,
    sampleIntervalUs: 1000n,
  });
  const thread = b.internThread(7n, 0, 'main');
  const stack = b.stacks.internOutermostFirst([b.internFrame(makeFrame('main', 'm.py', 1))]);
  sets.forEach((set, i) =>
    b.add(stack, thread, 1_000_000 + i * 1000, 0, [1, 1e6, 64], set.length === 0 ? 0 : b.internLabels(set)),
  );
  return b;
}

const SETS: Label[][] = [
  [
    { key: 'span id', num: 12 },
    { key: 'pid', num: 3 },
  ],
  [],
  [
    { key: 'pid', num: 3 },
    { key: 'route', str: '/a' },
  ],
];
const KEYS = '"span id", "pid", "route"';

let fileNo = 0;
function warningsOf(adapter: FormatAdapter, sets: Label[][], options: object = {}): string[] {
  const warnings: string[] = [];
  const out = path.join(dir, `out${fileNo++}`);
  adapter.write!(labelled(sets), { path: out, write: () => {} }, { onWarning: (m) => warnings.push(m), ...options });
  return warnings.filter((w) => /label/i.test(w));
}

describe('outputs without labels say which keys they dropped', () => {
  const lossy: [string, FormatAdapter, object, string][] = [
    ['collapsed', collapsedAdapter, {}, 'collapsed stacks'],
    ['speedscope', speedscopeAdapter, {}, 'speedscope'],
    ['.cpuprofile', cpuprofileAdapter, {}, 'a .cpuprofile'],
    ['.heapprofile', heapprofileAdapter, {}, 'a .heapprofile'],
  ];
  for (const [name, adapter, options, format] of lossy)
    it(`${name}: one warning naming every dropped key and the labelled records`, () => {
      expect(warningsOf(adapter, SETS, options)).toEqual([
        `${format} has no labels: ${KEYS} of 2 records not written (Tachyon version 2 and pprof keep them)`,
      ]);
      expect(warningsOf(adapter, [[], []], options)).toEqual([]);
    });

  it('Tachyon version 1 names the keys; version 2 and pprof keep labels and say nothing', () => {
    expect(warningsOf(tachyonAdapter, SETS, { version: 1 })).toEqual([
      `Tachyon version 1 has no labels: ${KEYS} of 2 records were dropped (version 2 keeps them)`,
    ]);
    expect(warningsOf(tachyonAdapter, SETS, { version: 2 })).toEqual([]);
    expect(warningsOf(pprofAdapter, SETS)).toEqual([]);
  });
});
