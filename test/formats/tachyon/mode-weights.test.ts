// Weights by mode (docs/formats.md): a tick of a CPU- or GIL-mode Tachyon file
// weighs the nominal interval, as CPython 3.15's own collectors count it
// (pstats: samples × sample_interval); a wall-mode tick weighs the real gap to
// its thread's next. Truth: CPython's reader's samples of a real --mode cpu
// recording (a sleeper thread beside a busy one), and of files written here.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { convert } from '../../../lib/formats/convert';
import { tachyonAdapter } from '../../../lib/formats/tachyon/index';
import { ProfileWriter } from '../../../lib/tachyon/index';
import type { ProfileSource } from '../../../lib/profile/index';
import { cpythonBeforeTests, cpythonDumps } from '../../support/cpython-dump';
import { repoRoot } from '../../support/environment';
import { scratchDir } from '../../support/scratch-dir';

cpythonBeforeTests();
const dir = scratchDir('profpack-mode-weights-');
const recording = path.join(repoRoot, 'test', 'fixtures', 'formats', 'cpython-3.15-cpu-sleeper.bin');

/** Per innermost function: [ticks, time column] of profpack's model. */
function byLeaf(source: ProfileSource): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  try {
    for (const b of source.batches()) {
      for (let i = 0; i < b.length; i++) {
        const leaf = source.stacks.toArray(b.stack[i]!)[0];
        const name = leaf === undefined ? '' : source.frames[leaf]!.funcname;
        const got = out.get(name) ?? [0, 0];
        got[0] += b.values[0]![i]!;
        got[1] += b.values[1]![i]!;
        out.set(name, got);
      }
    }
  } finally {
    source.close?.();
  }
  return out;
}

/** CPython's own count per innermost function (its reader's samples), times the interval in ns. */
function cpythonByLeaf(file: string): { ns: Map<string, number>; mode: number | null } {
  const dump = cpythonDumps([file]).get(path.basename(file))!;
  expect(dump.stage).toBe('ok');
  const interval = Number(dump.info!.sample_interval_us);
  const ns = new Map<string, number>();
  for (const s of dump.samples) {
    const leaf = (s.frames as { funcname: string }[])[0];
    const name = leaf === undefined ? '' : leaf.funcname;
    ns.set(name, (ns.get(name) ?? 0) + interval * 1000);
  }
  return { ns, mode: dump.info!.mode };
}

describe(`Tachyon weights by mode (${backend.name} backend)`, () => {
  it('a CPython --mode cpu recording: each tick weighs the interval, findall first as CPython says', () => {
    const truth = cpythonByLeaf(recording);
    expect(truth.mode).toBe(1);
    const source = tachyonAdapter.read({ path: recording }, {});
    expect(source.meta.sampleTypes[1]).toEqual({ type: 'cpu', unit: 'nanoseconds' });
    const got = byLeaf(source);
    expect(new Map([...got].map(([name, [, ns]]) => [name, ns]))).toEqual(truth.ns);
    const ranked = [...got].sort((a, b) => b[1][1] - a[1][1]).map(([name]) => name);
    expect(ranked[0]).toBe('findall');
    // Never more CPU than ticks: the sleeper's wall gaps are not CPU time.
    for (const [, [ticks, ns]] of got) expect(ns).toBe(ticks * 1_000_000);
  });

  for (const mode of ['cpu', 'gil', 'wall'] as const) {
    it(`${mode} mode: REPEAT runs and gaps of 10 intervals weigh ${mode === 'wall' ? 'the real gap' : 'one interval a tick'}`, () => {
      const file = path.join(dir, `${mode}.bin`);
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 0n, compression: 'none', mode });
      const f = w.internFrame({ filename: 'a.py', funcname: 'spin', lineno: 1 });
      const g = w.internFrame({ filename: 'a.py', funcname: 'wait', lineno: 2 });
      const stacks = [[f], [f], [f], [g], [g], [f]];
      // Ticks 10 ms apart on a 1 ms interval: off CPU between them.
      stacks.forEach((s, k) => w.writeStack(1n, 0, 10_000 * (k + 1), 3, Uint32Array.from(s)));
      w.finalize();
      const truth = cpythonByLeaf(file);
      const got = byLeaf(tachyonAdapter.read({ path: file }, {}));
      if (mode === 'wall') {
        // The gap to the next tick; the last tick weighs the interval.
        expect(got.get('spin')![1]).toBe((3 * 10_000 + 1000) * 1000);
        expect(got.get('wait')![1]).toBe(2 * 10_000 * 1000);
      } else {
        expect(new Map([...got].map(([name, [, ns]]) => [name, ns]))).toEqual(truth.ns);
        expect(got.get('spin')![1]).toBe(4 * 1000 * 1000);
      }
    });
  }

  it('.cpuprofile of CPython files: never a negative time delta, every tick of the thread written', () => {
    const files = [recording, path.join(repoRoot, 'bench', 'fixtures', 'real_cpython_13k_none.bin')];
    const dumps = cpythonDumps(files);
    for (const file of files) {
      const out = path.join(dir, `${path.basename(file)}.cpuprofile`);
      convert(file, out, { to: 'cpuprofile' });
      const written = JSON.parse(readFileSync(out, 'utf8')) as {
        nodes: { id: number; callFrame: { functionName: string } }[];
        samples: number[];
        timeDeltas: number[];
      };
      expect(written.timeDeltas.filter((d) => d < 0)).toEqual([]);
      // The busiest thread's ticks, as CPython's reader counts them; a CPU-mode file's time off the CPU between
      // ticks is V8's (idle) node, not a tick.
      const perThread = new Map<string, number>();
      for (const s of dumps.get(path.basename(file))!.samples)
        perThread.set(String(s.thread_id), (perThread.get(String(s.thread_id)) ?? 0) + 1);
      const idle = new Set(written.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
      expect(written.samples.filter((id) => !idle.has(id)).length).toBe(Math.max(...perThread.values()));
      expect(written.samples.length).toBe(written.timeDeltas.length);
    }
  });
});
