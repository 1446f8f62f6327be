/**
 * Negative values (a diff profile's shrinkage) are kept by pprof and refused, with a code naming why, by the outputs
 * whose own readers refuse them: speedscope's importer (negative weights), flamegraph.pl (negative counts), DevTools'
 * heap profile (negative selfSize). The oracle for "the format refuses them" is each format's reader refusing the
 * same numbers as input (profpack's readers follow those tools, test/formats/{speedscope,collapsed}.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { collapsedAdapter } from '../../lib/formats/collapsed';
import { heapprofileAdapter } from '../../lib/formats/devtools/heapprofile';
import { pprofAdapter, readPprof } from '../../lib/formats/pprof/index';
import { speedscopeAdapter } from '../../lib/formats/speedscope';
import { ProfileBuilder, makeFrame, type SampleType } from '../../lib/profile/index';
import { expectCoded, read, totals } from './helpers';

function diffProfile(type: SampleType): ProfileBuilder {
  const b = new ProfileBuilder({ sampleTypes: [type], defaultSampleType: 0, startTimeUs: 0n, sampleIntervalUs: 0n });
  const grow = b.stacks.intern([b.internFrame(makeFrame('grow', 'diff.go', 9))]);
  const shrink = b.stacks.intern([b.internFrame(makeFrame('shrink', 'diff.go', 19))]);
  b.add(grow, b.internThread(0n), NaN, 0, [7]);
  b.add(shrink, b.internThread(0n), NaN, 0, [-3]);
  return b;
}

describe('negative values', () => {
  it("the formats' readers refuse a negative weight as input", () => {
    expectCoded(() => read(collapsedAdapter, 'main;grow 7\nmain;shrink -3\n'), 'ERR_CONVERT_BAD_INPUT', /negative/);
    const doc = {
      $schema: 'https://www.speedscope.app/file-format-schema.json',
      shared: { frames: [{ name: 'grow' }] },
      profiles: [
        { type: 'sampled', name: 'p', unit: 'none', startValue: 0, endValue: 4, samples: [[0]], weights: [-3] },
      ],
    };
    expectCoded(() => read(speedscopeAdapter, JSON.stringify(doc)), 'ERR_CONVERT_BAD_INPUT', /negative/);
  });

  it('speedscope, collapsed and .heapprofile outputs refuse them with ERR_CONVERT_NEGATIVE_VALUE, naming why', () => {
    const cases = [
      { adapter: speedscopeAdapter, type: { type: 'cpu', unit: 'nanoseconds' }, by: /speedscope's importer/ },
      { adapter: collapsedAdapter, type: { type: 'samples', unit: 'count' }, by: /flamegraph\.pl/ },
      { adapter: heapprofileAdapter, type: { type: 'inuse_space', unit: 'bytes' }, by: /DevTools/ },
    ];
    for (const { adapter, type, by } of cases) {
      let written = '';
      const err = expectCoded(
        () => adapter.write!(diffProfile(type), { path: '/dev/null', write: (c) => void (written += String(c)) }, {}),
        'ERR_CONVERT_NEGATIVE_VALUE',
        by,
      );
      expect(err.message, adapter.name).toMatch(/weighs -3 /);
      // Refused before anything reaches the output: no half file with the negative weight in it.
      expect(written, adapter.name).not.toContain('-3');
    }
  });

  it('pprof keeps them, exactly', () => {
    const chunks: Uint8Array[] = [];
    pprofAdapter.write!(
      diffProfile({ type: 'alloc_space', unit: 'bytes' }),
      { path: '/dev/null', write: (c) => void chunks.push(typeof c === 'string' ? Buffer.from(c) : c) },
      {},
    );
    const back = totals(readPprof(Buffer.concat(chunks)));
    expect(back.total).toBe(4);
    expect(back.self.get('shrink')).toBe(-3);
  });
});
