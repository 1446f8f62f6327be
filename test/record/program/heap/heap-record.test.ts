// test tier: slow (heap recordings end to end, one out of heap, ~22 s)
/**
 * Heap recording end to end: a planted leak and a garbage maker recorded in
 * this process (startRecording, inline sink) and a program that runs out of
 * heap recorded by `profpack record`'s engine (runRecorded), whose events must
 * reach the sink before V8 aborts. Programs run a fixed number of steps, never
 * for a time.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { TickList } from '../../../support/model';
import { heapSamplerChoice } from '../../../../lib/record/program/heap/index';
import { checkHeapOptions } from '../../../../lib/record/settings/index';
import { HeapRecorder } from '../../../../lib/record/program/index';
import { startRecording } from '../../../../lib/record/start/index';
import type { runRecorded as RunRecorded } from '../../../../lib/record/launch/index';
import { buildForTests } from '../../../support/build';
import { HeapCollector } from './heap-collector';

// The preload and the CLI run as plain Node: from a compiled copy of lib/.
const { build, dir, cli } = buildForTests('profpack-heap-');

/** ~10 KB of doubles, one array, nothing else allocated. */
function tenKb(seed: number): number[] {
  const a = new Array<number>(1250);
  for (let i = 0; i < a.length; i++) a[i] = seed + i + 0.5;
  return a;
}

const leaked: number[][] = [];
function leakSome(step: number): void {
  leaked.push(tenKb(step));
}

/** Ten times the leak's bytes, each array kept for two steps (it outlives a poll) and then dropped. */
const passing: number[][][] = [];
function makeGarbage(step: number): void {
  const batch: number[][] = [];
  for (let i = 0; i < 10; i++) batch.push(tenKb(step * 10 + i));
  passing.push(batch);
  if (passing.length > 2) passing.shift();
}

describe('heap recording in this process', () => {
  it('live at the end is the leak, allocations are the garbage maker, and the garbage is freed', () => {
    const heap = new HeapCollector();
    // harvestMs: long enough that only our own harvest() calls poll.
    const recording = startRecording({
      sink: new TickList(),
      heap: { intervalBytes: 16 * 1024 },
      heapSink: heap,
      harvestMs: 3_600_000,
      handleExit: false,
    });
    // 100 steps of 10 KB leaked and 100 KB of garbage: "a second" of the program is ten steps.
    for (let step = 0; step < 100; step++) {
      leakSome(step);
      makeGarbage(step);
      if (step % 2 === 1) recording.harvest();
    }
    const summary = recording.stop();
    expect(heap.info).toEqual({ intervalBytes: 16 * 1024 });
    expect(heap.ordered).toBe(true);
    expect(summary.heapEvents).toBe(heap.allocated.size + heap.freed.size);
    const sites = ['leakSome', 'makeGarbage'];
    const live = heap.bytesBy(sites, true);
    const allocated = heap.bytesBy(sites, false);
    // 1 MB leaked against at most 200 KB of garbage alive at the end (16 KiB sampling: ~60 leak samples).
    expect(live.get('leakSome')!).toBeGreaterThan(2 * live.get('makeGarbage')!);
    expect(live.get('leakSome')!).toBeGreaterThan(live.get('(other)')!);
    // 10 MB of garbage against 1 MB leaked.
    expect(allocated.get('makeGarbage')!).toBeGreaterThan(4 * allocated.get('leakSome')!);
    const garbageFreed = [...heap.freed.keys()].filter((o) =>
      heap.allocated.get(o)?.functions.includes('makeGarbage'),
    ).length;
    const garbageAllocated = [...heap.allocated.values()].filter((a) => a.functions.includes('makeGarbage')).length;
    expect(garbageFreed).toBeGreaterThan(garbageAllocated / 2);
    // A free names an allocation announced before it: at a later poll, or at the same one for an object a GC
    // collected between two polls (V8's API sampler looks before each GC).
    for (const [ordinal, timeUs] of heap.freed) expect(heap.allocated.get(ordinal)!.timeUs).toBeLessThanOrEqual(timeUs);
    // The recorder's own allocations (parsing each poll) are not the program's.
    for (const a of heap.allocated.values()) expect(a.functions).not.toContain('poll');
    leaked.length = 0;
    passing.length = 0;
  });
});

describe('timed heap polls', () => {
  it("wait for the process's CPU or the wall time to pass their share's multiple of a poll's; direct ones run", () => {
    // Timers only: the pacing reads the real clocks.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const frames: Buffer[] = [];
    const recorder = new HeapRecorder(checkHeapOptions({ intervalBytes: 16 * 1024 }), (f) => frames.push(f), 0);
    try {
      const stop = recorder.drive(() => recorder.poll(), 1000);
      const garbage: number[][] = [];
      const tick = (): void => {
        garbage.push(tenKb(garbage.length));
        vi.advanceTimersByTime(1000);
      };
      // The first timed poll has no cost to weigh against yet.
      tick();
      expect([recorder.polls, recorder.skipped]).toEqual([1, 0]);
      if (heapSamplerChoice().kind === 'inspector') {
        // An inspector poll forces a full GC: three timer ticks take far less CPU than 50 polls, and less wall than 200.
        for (let i = 0; i < 3; i++) tick();
        expect([recorder.polls, recorder.skipped]).toEqual([1, 3]);
      }
      const direct = recorder.polls + 1;
      recorder.poll();
      expect(recorder.polls).toBe(direct);
      // Work (a bounded number of steps, not a time) until the pacing lets a timed poll through.
      for (let step = 0; step < 100_000 && recorder.polls === direct; step++) {
        for (let k = 0; k < 20; k++) garbage[k % 8] = tenKb(step + k);
        if (step % 50 === 49) tick();
      }
      expect(recorder.polls).toBe(direct + 1);
      stop();
    } finally {
      recorder.dispose();
      vi.useRealTimers();
    }
  });
});

describe('heap recording of a program that runs out of heap', () => {
  it("delivers the hoarding function's allocations before V8 aborts", async () => {
    const program = path.join(dir, 'oom.js');
    const progress = path.join(dir, 'oom-progress.txt');
    // ~160 KB a step into a global array until the 64 MB old generation is full; after each step the hoard's length
    // goes to a file, synchronously, so that its last line is the hoard V8 aborted on.
    fs.writeFileSync(
      program,
      [
        "const progress = require('node:fs').openSync(process.argv[2], 'w');",
        'globalThis.hoard = [];',
        'function hoardArrays() { for (let i = 0; i < 2; i++) hoard.push(new Array(10000).fill(hoard.length)); }',
        "setInterval(() => { hoardArrays(); require('node:fs').writeSync(progress, `${hoard.length}\\n`); }, 20);",
        '',
      ].join('\n'),
    );
    const heap = new HeapCollector();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build is compiled at run time into a temporary folder
    const { runRecorded } = require(path.join(build.dist, 'record', 'index.js')) as { runRecorded: typeof RunRecorded };
    const { code, signal, summary } = await runRecorded(
      [process.execPath, '--max-old-space-size=64', program, progress],
      { out: path.join(dir, 'oom.tach'), heap: { intervalBytes: 64 * 1024 }, heapSink: heap, stdio: 'pipe' },
    );
    // V8's "JavaScript heap out of memory" aborts.
    expect(signal ?? code).toSatisfy((s: unknown) => s === 'SIGABRT' || s === 134);
    expect(summary.complete).toBe(false);
    expect(summary.heap?.allocations).toBe(heap.allocated.size);
    const hoarded = Number(fs.readFileSync(progress, 'utf8').trim().split('\n').at(-1)) * 10_000 * 8;
    const live = heap.bytesBy(['hoardArrays'], true, true);
    // inuse_space of the hoard against the doubles it held at the abort, as the program itself counted them.
    // Measured (docs/memory.md, ## Near out-of-memory): 0.97-1.04 with V8's API sampler, 0.68-0.71 with the
    // inspector's, whose sizes of these 80 KB arrays carry V8's rounding of 1/p (0.705 at a 64 KiB interval).
    const floor = heapSamplerChoice().kind === 'native' ? 0.8 : 0.55;
    expect(live.get('hoardArrays')! / hoarded, 'share of the hoard in inuse_space').toBeGreaterThan(floor);
    expect(live.get('hoardArrays')!).toBeGreaterThan(4 * live.get('(other)')!);
  });
});

describe('profpack record --heap', () => {
  it('reports the heap events it received', () => {
    const program = path.join(dir, 'small.js');
    // Global: a module's own scope is collected once it has run, before the last poll at exit.
    fs.writeFileSync(
      program,
      'globalThis.kept = [];\nfunction keep() { for (let i = 0; i < 200; i++) kept.push(new Array(1000).fill(i)); }\nkeep();\n',
    );
    const run = cli([
      'record',
      '--heap',
      '--heap-interval',
      '32k',
      '--out',
      path.join(dir, 'small.tach'),
      '--',
      process.execPath,
      program,
    ]);
    expect(run.stderr).toMatch(/profpack: heap: [1-9][\d,]* sampled allocations, \d+ frees, \d+ short-lived/);
    expect(run.status).toBe(0);
  });

  it.each([
    [['--heap', '--heap-interval', '12x'], /ERR_INVALID_ARGUMENT.*not a byte size/],
    [['--heap', '--heap-interval', '10'], /ERR_INVALID_ARGUMENT.*heap.intervalBytes must be an integer in \[1024,/],
    [['--heap-interval', '64k'], /ERR_INVALID_ARGUMENT.*--heap-interval needs --heap/],
  ])('%j is refused with a coded error, exit 2', (flags, message) => {
    const run = cli(['record', ...flags, '--out', path.join(dir, 'bad.tach'), '--', process.execPath, '-e', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
    expect(fs.existsSync(path.join(dir, 'bad.tach'))).toBe(false);
  });
});
