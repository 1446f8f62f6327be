/**
 * `downgrade` and `convert --tachyon-version 1` of a version-2 file are one
 * code path: the same bytes, library and CLI. A version-1 REPEAT run read into
 * version 2 is one record counting the run, and comes back as that many ticks:
 * truth is CPython 3.15's reader of the original CPython-written files (its
 * samples per thread, stack by stack) and of the downgraded ones.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backend } from '../../lib/backend';
import { main } from '../../lib/cli/main';
import { ErrorCode } from '../../lib/errors';
import { convert } from '../../lib/formats/convert';
import { ModelWriter, ProfileWriter, downgrade } from '../../lib/tachyon/index';
import { cpythonBeforeTests, cpythonDumps, type CPythonDump } from '../support/cpython-dump';
import { sharedPath } from '../support/environment';
import { thrown } from '../support/refusals';
import { scratchDir } from '../support/scratch-dir';

cpythonBeforeTests();
afterEach(() => vi.restoreAllMocks());
const dir = scratchDir('profpack-downgrade-convert-');
const vectors = sharedPath('vectors', 'tachyon');
const at = (name: string): string => path.join(dir, name);

function cli(...args: string[]): number {
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return main(['node', 'profpack', ...args]);
  } finally {
    vi.restoreAllMocks();
  }
}

/** Each thread's stacks in order, as CPython's reader gives them (times aside). */
function perThread(dump: CPythonDump): Map<string, string[]> {
  expect(dump.stage).toBe('ok');
  const out = new Map<string, string[]>();
  for (const s of dump.samples) {
    const key = `${s.thread_id}@${s.interpreter_id}`;
    if (!out.has(key)) out.set(key, []);
    out.get(key)!.push(JSON.stringify([s.status, s.frames]));
  }
  return out;
}

describe(`downgrade ≡ convert to version 1 (${backend.name} backend)`, () => {
  const names = ['s06_repeat_runs_none', 's20_random_mix_zstd', 's14_empty_stacks_none'];

  it('CPython files through version 2: the same bytes both ways, every tick back, as CPython reads them', () => {
    const files: string[] = [];
    for (const name of names) {
      const v2 = at(`${name}.v2.bin`);
      convert(path.join(vectors, `${name}.bin`), v2, { to: 'tachyon', version: 2 });
      const down = at(`${name}.down.bin`);
      const conv = at(`${name}.conv.bin`);
      const result = downgrade(v2, down);
      const summary = convert(v2, conv, { to: 'tachyon', version: 1 });
      expect(Buffer.compare(readFileSync(down), readFileSync(conv))).toBe(0);
      expect(summary.samples).toBe(result.samples);
      // The CLI's two commands, too.
      const downCli = at(`${name}.down-cli.bin`);
      const convCli = at(`${name}.conv-cli.bin`);
      expect(cli('downgrade', v2, downCli)).toBe(0);
      expect(cli('convert', v2, '-o', convCli, '--to', 'tachyon', '--tachyon-version', '1', '-q')).toBe(0);
      expect(Buffer.compare(readFileSync(downCli), readFileSync(down))).toBe(0);
      expect(Buffer.compare(readFileSync(convCli), readFileSync(down))).toBe(0);
      files.push(path.join(vectors, `${name}.bin`), down);
    }
    const dumps = cpythonDumps(files);
    for (const name of names) {
      const original = dumps.get(`${name}.bin`)!;
      const back = dumps.get(`${name}.down.bin`)!;
      expect(back.info!.sample_count).toBe(original.info!.sample_count);
      expect(back.samples.length).toBe(original.samples.length);
      expect(perThread(back)).toEqual(perThread(original));
    }
  });

  it('a profpack version-2 recording: the same bytes both ways, its samples as CPython reads them', () => {
    const v2 = at('recording.v2.bin');
    const w = new ProfileWriter(v2, { sampleIntervalUs: 1000, startTimeUs: 5, formatVersion: 2, mode: 'wall' });
    const f = w.internFrame({ filename: 'a.js', funcname: 'f', lineno: 1 });
    const g = w.internFrame({ filename: 'a.js', funcname: 'g', lineno: 2 });
    for (let i = 0; i < 500; i++) w.writeStack(BigInt(1 + (i % 3)), 0, 1000 + i * 700, 3, i % 7 < 4 ? [f] : [g, f]);
    w.finalize();
    const down = at('recording.down.bin');
    const conv = at('recording.conv.bin');
    expect(downgrade(v2, down).samples).toBe(500);
    expect(convert(v2, conv, { to: 'tachyon' }).samples).toBe(500);
    expect(Buffer.compare(readFileSync(down), readFileSync(conv))).toBe(0);
    const dump = cpythonDumps([down]).get('recording.down.bin')!;
    expect(dump.samples.length).toBe(500);
    expect(dump.samples.map((s) => Number(s.timestamp_us)).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 500 }, (_, i) => 1000 + i * 700),
    );
  });

  it('a model section with no samples/count column is refused by both, leaving no output', () => {
    const v2 = at('heap.v2.bin');
    const w = new ModelWriter(v2, {
      sampleIntervalUs: 0n,
      startTimeUs: 0n,
      meta: { sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }], defaultSampleType: 0 },
    });
    const f = w.internFrame({ filename: 'a.js', funcname: 'alloc' });
    w.writeSample(1n, 0, 10, 0, Uint32Array.of(f), [Float64Array.of(4096)], 0, 0);
    w.finalize();
    for (const write of [
      () => downgrade(v2, at('heap.down.bin')),
      () => convert(v2, at('heap.conv.bin'), { to: 'tachyon', version: 1 }),
    ])
      expect(thrown(write).code).toBe(ErrorCode.TACHYON_V1_WEIGHTED);
    expect(() => readFileSync(at('heap.down.bin'))).toThrow();
    expect(() => readFileSync(at('heap.conv.bin'))).toThrow();
  });
});
