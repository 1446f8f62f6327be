import { describe, expect, it } from 'vitest';
import { embeddedDataset, runDemo } from '../lib/demo';

describe('the demo main job', () => {
  it('round-trips the embedded data set and reports smaller LEB128 sizes', () => {
    const lines: string[] = [];
    runDemo((line) => lines.push(line));
    expect(lines.at(-1)).toBe('all round trips exact');
    const ratios = lines.filter((l) => /LEB128\)/.test(l)).map((l) => Number(l.trim().split(/\s+/).at(-1)));
    expect(ratios).toHaveLength(3);
    for (const r of ratios) expect(r).toBeLessThan(0.5);
  });

  it('the data set is deterministic', () => {
    expect(embeddedDataset(1000)).toEqual(embeddedDataset(1000));
  });
});
