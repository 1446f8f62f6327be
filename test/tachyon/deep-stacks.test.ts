/**
 * Stacks deeper than 256 frames (issue 29): version 1 keeps CPython 3.15's
 * cap (the innermost 256 frames) and now says how many stacks were cut, in
 * WriterStats.stacksCut, through every entry point (writeStack, writeSample,
 * writeStacks). Both backends.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileReader, ProfileWriter } from '../../lib/tachyon/index';
import { testedBackends } from '../support/backends';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-deep-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each(testedBackends)('%s', (which) => {
  it('the innermost 256 frames are kept and every cut stack is counted', () => {
    const file = path.join(dir, `${which}.tach`);
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
    const ids = Array.from({ length: 300 }, (_, i) =>
      w.internFrame({ filename: 'deep.py', funcname: `f${i}`, lineno: i + 1 }),
    );
    w.writeStack(1, 0, 1000, 0, ids); // 300 frames: cut
    w.writeStack(1, 0, 2000, 0, ids.slice(0, 256)); // exactly 256: kept whole
    const frameInfo = ids.map((_, i) => ({ filename: 'deep.py', funcname: `f${i}`, lineno: i + 1 }));
    w.writeSample(
      [
        {
          interpreterId: 0,
          threads: [
            { threadId: 2, status: 0, frameInfo },
            { threadId: 3, status: 0, frameInfo: frameInfo.slice(0, 10) },
          ],
        },
      ],
      3000,
    );
    const frameIds = Uint32Array.from([...ids, ...ids.slice(0, 257)]);
    w.writeStacks(4000, {
      threadIds: [4, 5],
      interpreterIds: 0,
      statuses: [0, 0],
      stackEnds: Uint32Array.of(300, 557),
      frameIds,
    });
    expect(w.stats.stacksCut).toBe(4);
    const stats = w.finalize();
    expect(stats.stacksCut).toBe(4);
    const reader = ProfileReader.open(file, { backend: which });
    const depths = [...reader.samples()].map((s) => s.stack.length);
    reader.close();
    expect(depths.sort((a, b) => a - b)).toEqual([10, 256, 256, 256, 256, 256]);
  });
});
