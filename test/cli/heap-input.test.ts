/**
 * The heap-only check that convert, top, flame and diff make before their work: only a Tachyon recording
 * says what recorded it, so any other input is answered from its head and never opened (issue 39: a 45 MB
 * .cpuprofile was parsed here and then again by the conversion, half of its CPU).
 */
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type * as formats from '../../lib/formats/index';
import { ProfileWriter } from '../../lib/index';
import { isHeapOnly } from '../../lib/cli/heap-input';
import { repoRoot } from '../support/environment';
import { scratchDir } from '../support/scratch-dir';

const opened: string[] = [];
vi.mock('../../lib/formats/index', async (importOriginal) => {
  const original = await importOriginal<typeof formats>();
  return {
    ...original,
    openProfile: (...args: Parameters<typeof original.openProfile>) => {
      opened.push(args[0]);
      return original.openProfile(...args);
    },
  };
});

const work = scratchDir('profpack-heap-input-');

describe('isHeapOnly', () => {
  it('answers no for a .cpuprofile without opening it', () => {
    opened.length = 0;
    const file = path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile');
    expect(isHeapOnly([file])).toBe(false);
    expect(opened).toEqual([]);
  });

  it('opens a Tachyon file, whose recording says whether it sampled CPU', () => {
    opened.length = 0;
    const file = path.join(work, 'cpu.tach');
    const writer = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1n });
    const frame = writer.internFrame({ filename: 'a.js', funcname: 'f', lineno: 1 });
    writer.writeStack(1n, 0, 2n, 0, [frame]);
    writer.finalize();
    expect(isHeapOnly([file])).toBe(false);
    expect(opened).toEqual([file]);
  });
});
