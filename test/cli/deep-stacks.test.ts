// test tier: slow (deep recorded stacks through every command, ~28 s)
/**
 * Stacks deeper than 256 frames through the CLI (issue 29): a Tachyon
 * version-1 file keeps CPython's cap (the innermost 256 frames), and every
 * command that writes one says how many stacks it cut (record, convert,
 * merge); `info` counts the samples at the cap. Version 2 keeps them whole (to 4,096 frames). Both backends.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileReader } from '../../lib/tachyon/index';
import { buildForTests } from '../support/build';
import { testedBackends } from '../support/backends';

const suite = buildForTests('profpack-deep-cli-');
const dir = suite.dir;
const cli = (which: string, args: string[]) => suite.cli(args, { PROFPACK_BACKEND: which });

/** A .cpuprofile of two samples: one `depth` frames deep, one 3 deep. */
function deepCpuprofile(file: string, depth: number): string {
  const frame = (i: number) => ({
    functionName: `f${i}`,
    scriptId: '1',
    url: 'file:///deep.js',
    lineNumber: i,
    columnNumber: 0,
  });
  const nodes = [{ id: 1, callFrame: { ...frame(0), functionName: '(root)', url: '' }, children: [2] }];
  for (let i = 1; i <= depth; i++) nodes.push({ id: i + 1, callFrame: frame(i), children: i < depth ? [i + 2] : [] });
  const doc = { nodes, startTime: 0, endTime: 2000, samples: [depth + 1, 4], timeDeltas: [1000, 1000] };
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}

function depths(file: string): number[] {
  const reader = ProfileReader.open(file);
  try {
    return [...reader.samples()].map((s) => s.stack.length).sort((a, b) => a - b);
  } finally {
    reader.close();
  }
}

describe.each(testedBackends)('%s', (which) => {
  it('convert and merge to version 1 cut a 300-frame stack to 256 and say so; info counts it', () => {
    const input = deepCpuprofile(path.join(dir, `deep-${which}.cpuprofile`), 300);
    const converted = path.join(dir, `deep-${which}.tach`);
    const convert = cli(which, ['convert', input, '-o', converted]);
    expect(convert.status, convert.stderr).toBe(0);
    expect(convert.stderr).toContain("1 stacks are deeper than Tachyon's 256 frames");
    expect(depths(converted)).toEqual([3, 256]);
    const merged = path.join(dir, `merged-${which}.tach`);
    const merge = cli(which, ['merge', input, converted, '-o', merged]);
    expect(merge.status, merge.stderr).toBe(0);
    expect(merge.stderr).toContain("1 stacks are deeper than Tachyon's 256 frames");
    expect(depths(merged)).toEqual([3, 3, 256, 256]);
    const info = cli(which, ['info', merged]);
    expect(info.status, info.stderr).toBe(0);
    expect(info.stdout).toContain('deep stacks:  2 samples at 256 frames, the cap');
    const shallow = cli(which, ['info', path.join(dir, `deep-${which}.tach`)]);
    expect(shallow.stdout).toContain('deep stacks:  1 samples');
  });

  it('convert --tachyon-version 2 keeps a 1,000-frame stack whole from .cpuprofile, pprof and collapsed', () => {
    const cpuprofile = deepCpuprofile(path.join(dir, `whole-${which}.cpuprofile`), 1000);
    // Collapsed lines are outermost first: f0 calls f1 ... calls f999.
    const collapsed = path.join(dir, `whole-${which}.collapsed`);
    const deepLine = Array.from({ length: 1000 }, (_, i) => `f${i}`).join(';');
    fs.writeFileSync(collapsed, `${deepLine} 1\nmain;a;b 1\n`);
    const pprof = path.join(dir, `whole-${which}.pb.gz`);
    const toPprof = cli(which, ['convert', collapsed, '-o', pprof]);
    expect(toPprof.status, toPprof.stderr).toBe(0);
    for (const input of [cpuprofile, collapsed, pprof]) {
      const out = `${input}.v2.tach`;
      const run = cli(which, ['convert', input, '--tachyon-version', '2', '-o', out]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).not.toContain('deeper');
      expect(depths(out)).toEqual([3, 1000]);
      const reader = ProfileReader.open(out);
      const stacks = [...reader.samples()].map((s) => s.stack.map((f) => reader.frames[f]!.funcname));
      reader.close();
      const deep = stacks.find((s) => s.length === 1000)!;
      expect(deep[0]).toBe(input === cpuprofile ? 'f1000' : 'f999');
      expect(deep.at(-1)).toBe(input === cpuprofile ? 'f1' : 'f0');
      const info = cli(which, ['info', out]);
      expect(info.status, info.stderr).toBe(0);
      expect(info.stdout).not.toContain('deep stacks');
    }
    // Version 1 from the same pprof still keeps CPython's 256 and says so.
    const v1 = cli(which, ['convert', pprof, '-o', `${pprof}.v1.tach`]);
    expect(v1.stderr).toContain("1 stacks are deeper than Tachyon's 256 frames");
    expect(depths(`${pprof}.v1.tach`)).toEqual([3, 256]);
  });

  it('record says how many samples reached the cap (V8 or the writer cut them)', () => {
    const script = path.join(dir, `recurse-${which}.js`);
    // 300 nested calls spinning until 300 ms of CPU have passed: every sample is over 256 frames deep.
    fs.writeFileSync(
      script,
      [
        'function down(n) {',
        '  if (n === 0) { const t = process.cpuUsage(); while (process.cpuUsage(t).user < 300000); return 0; }',
        '  return down(n - 1) + 1;',
        '}',
        'down(300);',
      ].join('\n'),
    );
    const out = path.join(dir, `recurse-${which}.tach`);
    const run = cli(which, ['record', '-o', out, '--interval-us', '1000', '--', process.execPath, script]);
    expect(run.status, run.stderr).toBe(0);
    const cut = /profpack: ([\d,]+) samples? reached Tachyon's 256-frame cap/.exec(run.stderr);
    expect(cut, run.stderr).not.toBeNull();
    const atCap = depths(out).filter((d) => d === 256).length;
    expect(atCap).toBeGreaterThan(0);
    expect(Number(cut![1]!.replace(/,/g, ''))).toBe(atCap);
  });
});
