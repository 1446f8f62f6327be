// test tier: slow (the flame and diff commands through the compiled CLI, ~16 s)
/** diffProfiles(), diffTree() and the flame/diff commands' contract on good and bad input. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openProfile } from '../../lib/formats/index';
import { makeFrame, NodeStatus, ProfileBuilder, SampleTypes } from '../../lib/profile/index';
import { TickProfile, copyToBuilder } from '../support/model';
import { aggregate } from '../../lib/query/aggregate';
import { diffProfiles, diffTree, formatDiffTable, type DiffNode } from '../../lib/view/diff';
import { buildForTests } from '../support/build';
import { vectorDir } from '../support/vectors';

function profile(counts: Record<string, number>, thread = 1n): TickProfile {
  const p = new TickProfile({ startTimeUs: 0n, sampleIntervalUs: 1000n });
  const main = p.internFrame(makeFrame('main', 'app.js', 1));
  let t = 0n;
  for (const [name, n] of Object.entries(counts)) {
    const f = p.internFrame(makeFrame(name, 'app.js', 10));
    for (let i = 0; i < n; i++) p.writeStack(thread, 0, (t += 1000n), NodeStatus.OnCpu, [f, main]);
  }
  return p;
}

function walk(n: DiffNode, f: (n: DiffNode) => void): void {
  f(n);
  n.children?.forEach((c) => walk(c, f));
}

describe('diffProfiles', () => {
  it('per-function deltas, raw and normalised, largest change first', () => {
    const base = profile({ parse: 10, render: 10 });
    const next = profile({ parse: 30, render: 10 }, 99n);
    const raw = diffProfiles(base, next);
    expect(raw.rows.map((r) => [r.funcname, r.baseSelf, r.newSelf, r.selfDelta, r.totalDelta])).toEqual([
      ['parse', 10, 30, 20, 20],
      ['main', 0, 0, 0, 20], // ties in the change: by key
      ['render', 10, 10, 0, 0],
    ]);
    const norm = diffProfiles(base, next, { normalize: true });
    expect(norm.scale).toBe(2);
    expect(norm.rows.map((r) => [r.funcname, r.selfDelta])).toEqual([
      ['parse', 10],
      ['render', -10],
      ['main', 0],
    ]);
    expect(diffProfiles(base, next, { sort: 'total' }).rows[0]!.funcname).toBe('main');
    expect(formatDiffTable(norm)).toMatch(/^Δself .*\n\s*\+10\s+20\s+30\s+\+10\s+20\s+30\s+parse {2}app\.js\n/);
  });

  it('a profile against itself changes nothing; against another, row sums are the sample counts', () => {
    const src = openProfile(path.join(vectorDir, 's20_random_mix_zstd.bin'), { format: 'tachyon' });
    const a = copyToBuilder(src);
    src.close();
    const same = diffProfiles(a, a, { limit: 0 });
    expect(same.rows.every((r) => r.selfDelta === 0 && r.totalDelta === 0)).toBe(true);
    const tree = diffTree(a, a);
    walk(tree, (n) => expect(n.delta).toBe(0));
    expect(tree.value).toBe(aggregate(a).total);
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('f', 'g', 'h'), fc.integer({ min: 0, max: 20 })),
        fc.dictionary(fc.constantFrom('f', 'g', 'h'), fc.integer({ min: 0, max: 20 })),
        fc.boolean(),
        (x, y, normalize) => {
          const base = profile(x);
          const next = profile(y, 2n);
          const d = diffProfiles(base, next, { normalize, limit: 0 });
          const agg = aggregate(next, { limit: 0 });
          expect(d.newSamples).toBe(agg.samples);
          expect(d.rows.reduce((s, r) => s + r.newSelf, 0)).toBe(agg.samples);
          expect(d.rows.reduce((s, r) => s + r.baseSelf, 0)).toBeCloseTo(base.sampleCount * d.scale, 6);
          const t = diffTree(base, next, d.scale);
          expect(t.value).toBe(next.sampleCount);
          expect(t.base).toBeCloseTo(base.sampleCount * d.scale, 1);
          walk(t, (n) => expect(n.delta).toBeCloseTo(n.value - n.base, 1));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('diffProfiles in units', () => {
  it('compares the chosen sample type: bytes, normalised by totals, printed in B/KB/MB', () => {
    const make = (kb: Record<string, number>) => {
      const p = new ProfileBuilder({
        sampleTypes: [SampleTypes.samples, { type: 'inuse_space', unit: 'bytes' }],
        defaultSampleType: 1,
        startTimeUs: 0n,
        sampleIntervalUs: 0n,
      });
      const main = p.internFrame(makeFrame('main', 'app.js', 1));
      for (const [name, n] of Object.entries(kb)) {
        const f = p.internFrame(makeFrame(name, 'app.js', 10));
        // One record per site, whatever its bytes: a value is a weight.
        p.add(p.stacks.intern([f, main]), p.internThread(1n), NaN, 0, [1, n * 1024]);
      }
      return p;
    };
    const base = make({ cache: 1024, parse: 10 });
    const next = make({ cache: 3072, parse: 10 });
    const d = diffProfiles(base, next);
    expect(d.sampleType).toEqual({ type: 'inuse_space', unit: 'bytes' });
    expect([d.baseTotal, d.newTotal]).toEqual([1034 * 1024, 3082 * 1024]);
    expect(d.rows[0]).toMatchObject({
      funcname: 'cache',
      baseSelf: 1024 * 1024,
      newSelf: 3072 * 1024,
      selfDelta: 2048 * 1024,
    });
    const text = formatDiffTable(d);
    expect(text).toMatch(/\+2MB\s+1MB\s+3MB\s+\+2MB\s+1MB\s+3MB\s+cache {2}app\.js/);
    expect(text).toContain('inuse_space/bytes: base 1.01MB in 2 samples, new 3.01MB in 2 samples');
    expect(diffProfiles(base, next, { sampleType: 'samples' }).rows.every((r) => r.selfDelta === 0)).toBe(true);
    const tree = diffTree(base, next);
    expect(tree.value).toBe(3082 * 1024);
    expect(tree.base).toBe(1034 * 1024);
  });
});

describe('profpack flame and diff (CLI)', () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8', cwd: work });
  const { build, dir: work } = buildForTests('profpack-view-cli-');

  it('flame writes one self-contained page: no external script, style or link', () => {
    const run = cli('flame', path.join(vectorDir, 's20_random_mix_zstd.bin'), '-o', 'f.html');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^f\.html: 4792 samples, 6 thread\(s\), \d+ stack nodes, \d+ time buckets, \d+ bytes\n$/,
    );
    const html = readFileSync(path.join(work, 'f.html'), 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import|<iframe/i);
    expect(html).toContain('"kind":"flame"');
  });

  it('flame takes many files, or a directory of them, as one profile', () => {
    const names = ['s02_threads_interleaved_none.bin', 's20_random_mix_zstd.bin'];
    mkdirSync(path.join(work, 'fleet'));
    for (const name of names) copyFileSync(path.join(vectorDir, name), path.join(work, 'fleet', name));
    for (const args of [names.map((name) => path.join(vectorDir, name)), ['fleet']]) {
      const run = cli('flame', ...args, '-o', 'many.html');
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      // 668 + 4,792 samples; the two files' threads (4 + 6) kept apart.
      expect(run.stdout).toMatch(
        /^many\.html: 5460 samples, 10 thread\(s\), \d+ stack nodes, \d+ time buckets, \d+ bytes\n$/,
      );
    }
  });

  it('diff prints the table; --json the rows; -o writes the page', () => {
    const a = path.join(vectorDir, 's20_random_mix_zstd.bin');
    const b = path.join(vectorDir, 's02_threads_interleaved_none.bin');
    const table = cli('diff', a, b, '-n', '5');
    expect(table.status).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^Δself\s+base self\s+new self\s+Δtotal\s+base total\s+new total\s+function$/,
    );
    expect(table.stdout).toContain('samples/count: base 4792 in 4792 samples, new 668 in 668 samples');
    const json = cli('diff', a, b, '--json', '--normalize', '-n', '0', '-o', 'd.html');
    expect(json.status).toBe(0);
    const result = JSON.parse(json.stdout);
    expect(result.normalized).toBe(true);
    expect(result.html).toBe('d.html');
    expect(readFileSync(path.join(work, 'd.html'), 'utf8')).toContain('"kind":"diff"');
  });

  it('bad input: one profpack: ERR_… line and exit 2, from both commands', () => {
    writeFileSync(path.join(work, 'junk.bin'), 'not a profile at all');
    for (const args of [
      ['flame', 'junk.bin'],
      ['diff', 'junk.bin', path.join(vectorDir, 's20_random_mix_zstd.bin')],
      [
        'diff',
        path.join(vectorDir, 's20_random_mix_zstd.bin'),
        path.join(vectorDir, 's20_random_mix_zstd.bin'),
        '-n',
        'lots',
      ],
      ['flame', path.join(vectorDir, 'e05_truncated_tables.bin')],
    ]) {
      const run = cli(...args);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^profpack: ERR_[A-Z0-9_]+: [^\n]+\n$/);
    }
  });
});
