import { describe, expect, it } from 'vitest';
import { ConcatenatedHeapTrace, heapProfile, leakSuspects } from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import { handTrace, rotate, type HandPoll } from './hand-trace';

describe('ConcatenatedHeapTrace (rotated files of one process)', () => {
  const polls: HandPoll[] = [];
  let ordinal = 0;
  for (let s = 1; s <= 12; s++)
    polls.push({
      timeUs: s * 1_000_000,
      alloc: [
        [++ordinal, 2000, 'leak'],
        [++ordinal, 9000, 'churn'],
      ],
      free: s > 1 ? [ordinal - 2] : [],
    });

  it('answers as the uncut trace does: inherited objects are neither lost nor counted twice', () => {
    const whole = handTrace(4096, polls, 0).trace;
    const [a, b] = rotate(handTrace(4096, polls, 0).trace, 6_500_000);
    const joined = new ConcatenatedHeapTrace([a, b]);
    for (const type of ['alloc_space', 'inuse_space', 'inuse_objects']) {
      const want = aggregate(heapProfile(whole).profile, { sampleType: type, limit: 0 }).rows.map((r) => [
        r.funcname,
        r.self,
      ]);
      expect(
        aggregate(heapProfile(joined).profile, { sampleType: type, limit: 0 }).rows.map((r) => [r.funcname, r.self]),
      ).toEqual(want);
    }
    expect(leakSuspects(joined).suspects[0]).toMatchObject({
      funcname: 'leak',
      liveBytes: leakSuspects(whole).suspects[0]!.liveBytes,
    });
    // The second file alone: its inherited objects count as live, allocated before it began.
    const alone = aggregate(heapProfile(rotate(handTrace(4096, polls, 0).trace, 6_500_000)[1]).profile, {
      sampleType: 'inuse_space',
      limit: 0,
    });
    expect(alone.rows.find((r) => r.funcname === 'leak')!.self).toBe(
      aggregate(heapProfile(whole).profile, { sampleType: 'inuse_space', limit: 0 }).rows.find(
        (r) => r.funcname === 'leak',
      )!.self,
    );
  });
});
