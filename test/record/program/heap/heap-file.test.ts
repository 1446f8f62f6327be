// test tier: slow (heap recordings of real programs, some out of heap, ~23 s)
/**
 * Heap recordings stored in the file (issue 27): `profpack record --heap`
 * writes format version 2 with a heap section that openHeapTrace reads back
 * (the summary's counts, the program's own allocation sites), also after the
 * target ran out of heap, and a rotating recording carries the objects still
 * live into each next file as its 'live' batch.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HeapEventBatch, HeapTraceSource } from '../../../../lib/memory/index';
import { NO_STACK } from '../../../../lib/record/wire/index';
import { openHeapTrace, ProfileReader } from '../../../../lib/tachyon/index';
import { buildForTests } from '../../../support/build';
import { HandDrivenRecording, mainCalling } from '../../../support/hand-recording';

const { build, dir, cli } = buildForTests('profpack-heapfile-');

function all(trace: HeapTraceSource): HeapEventBatch[] {
  // Copies: a batch's arrays may be reused.
  return [...trace.events()].map((b) => structuredClone(b));
}

/** Sampled bytes still live at the end, by whether `fn` is on the allocation stack. */
function liveBytesOf(trace: HeapTraceSource, fn: string): { fn: number; other: number } {
  const live = new Map<string, { size: number; stack: number }>();
  for (const b of trace.events()) {
    if (b.kind === 'free') for (const o of b.ordinals) live.delete(`${b.thread}:${o}`);
    else
      for (let i = 0; i < b.ordinals.length; i++)
        live.set(`${b.thread}:${b.ordinals[i]}`, { size: b.sizes[i]!, stack: b.stackIds[i]! });
  }
  const on = (stack: number): boolean => {
    for (let s = stack; s !== 0 && s !== NO_STACK; s = trace.stacks.parent(s))
      if (trace.frames[trace.stacks.frame(s)]!.funcname === fn) return true;
    return false;
  };
  const out = { fn: 0, other: 0 };
  for (const o of live.values()) out[on(o.stack) ? 'fn' : 'other'] += o.size;
  return out;
}

describe('profpack record --heap stores the heap events', () => {
  it('a small allocating program: version 2, as many allocations as the summary says, at its own site', () => {
    const program = path.join(dir, 'small.js');
    fs.writeFileSync(
      program,
      'globalThis.kept = [];\n' +
        'function keep() { for (let i = 0; i < 200; i++) kept.push(new Array(1000).fill(i)); }\nkeep();\n',
    );
    const out = path.join(dir, 'small.tach');
    const run = cli(['record', '--heap', '--heap-interval', '32k', '--out', out, '--', process.execPath, program]);
    expect(run.status).toBe(0);
    const said = /profpack: heap: ([\d,]+) sampled allocations, ([\d,]+) frees/.exec(run.stderr);
    expect(said).not.toBeNull();
    const trace = openHeapTrace(out)!;
    expect(trace.meta.intervalBytes).toBe(32 * 1024);
    const batches = all(trace);
    const count = (kind: string): number =>
      batches.filter((b) => b.kind === kind).reduce((n, b) => n + b.ordinals.length, 0);
    expect(count('alloc')).toBe(Number(said![1]!.replace(/,/g, '')));
    expect(count('free')).toBe(Number(said![2]!.replace(/,/g, '')));
    // 200 × 8 KB kept: the program's site holds most sampled bytes.
    const live = liveBytesOf(trace, 'keep');
    expect(live.fn).toBeGreaterThan(live.other);
    expect(ProfileReader.open(out).info.version).toBe(2);
    // `info` says the counts and the interval; `downgrade` keeps the CPU samples and says what it dropped.
    const info = cli(['info', out]);
    expect(info.stdout).toContain(`heap:         ${said![1]} sampled allocations, ${said![2]} frees`);
    expect(info.stdout).toContain('sampling interval 32,768 bytes');
    const v1 = path.join(dir, 'small-v1.tach');
    const down = cli(['downgrade', out, v1]);
    expect(down.status).toBe(0);
    const events = count('alloc') + count('free');
    expect(down.stderr).toContain(`profpack: version 1 does not keep heap events: dropped ${events} (`);
    expect(ProfileReader.open(v1).info.sampleCount).toBe(ProfileReader.open(out).info.sampleCount);
    expect(openHeapTrace(v1)).toBeNull();
  });

  it('a program that runs out of heap: the file is whole after V8 aborts, its live bytes the hoarder', () => {
    const program = path.join(dir, 'oom.js');
    fs.writeFileSync(
      program,
      'globalThis.hoard = [];\n' +
        'function hoardArrays() { for (let i = 0; i < 2; i++) hoard.push(new Array(10000).fill(hoard.length)); }\n' +
        'setInterval(hoardArrays, 20);\n',
    );
    const out = path.join(dir, 'oom.tach');
    const run = cli([
      'record',
      '--heap',
      '--heap-interval',
      '64k',
      '--out',
      out,
      '--',
      process.execPath,
      '--max-old-space-size=64',
      program,
    ]);
    expect(run.stderr).toMatch(/ended without stopping its recording/);
    const trace = openHeapTrace(out)!;
    const live = liveBytesOf(trace, 'hoardArrays');
    // More than a sixth of the 64 MB limit (13-14 MB measured with sizes scaled once; test/record/program/heap/heap-record.test.ts).
    expect(live.fn).toBeGreaterThan((64 / 6) * 1024 * 1024);
    expect(live.fn).toBeGreaterThan(4 * live.other);
  });
});

describe('startRecording({ heap }) into a file', () => {
  const program = (out: string, writer: string): string => `
    const { startRecording } = require(${JSON.stringify(path.join('DIST', 'record', 'index.js'))});
    globalThis.kept = [];
    function keepArrays() { for (let i = 0; i < 50; i++) kept.push(new Array(2000).fill(i)); }
    const recording = startRecording({ out: ${JSON.stringify(out)}, writer: '${writer}',
      heap: { intervalBytes: 16384 }, harvestMs: 3600000, handleExit: false });
    for (let step = 0; step < 6; step++) { keepArrays(); recording.harvest(); }
    const summary = recording.stop();
    console.log(JSON.stringify({ heapEvents: summary.heapEvents }));
  `;
  it.each(['process', 'inline'])('writer %s: the file holds as many heap events as the summary counts', (writer) => {
    const out = path.join(dir, `start-${writer}.tach`);
    const run = spawnSync(process.execPath, ['-e', program(out, writer).replace('DIST', build.dist)], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    const { heapEvents } = JSON.parse(run.stdout.trim()) as { heapEvents: number };
    expect(heapEvents).toBeGreaterThan(0);
    const trace = openHeapTrace(out)!;
    expect(trace.meta.intervalBytes).toBe(16384);
    expect(all(trace).reduce((n, b) => n + b.ordinals.length, 0)).toBe(heapEvents);
    expect(liveBytesOf(trace, 'keepArrays').fn).toBeGreaterThan(0);
  });
});

/** A V8 allocation tree: root → main → (grow, churn). */
const tree = mainCalling('grow', 'churn', 0);

describe('rotation', () => {
  it("objects still live when a file closes are the next file's live batch", () => {
    const recording = new HandDrivenRecording(tree, 7, path.join(dir, 'rot'), 10);
    const host = recording.host;
    const poll = (timeUs: number, ordinals: number[], nodes: number[], freed: number[]): void => {
      recording.heapPoll(timeUs, ordinals, nodes, freed, (o) => 100 * o);
      recording.cpuChunk(timeUs, timeUs + 1000);
    };
    const files: string[] = [host.currentFile];
    poll(2_000, [1, 2, 3], [3, 4, 3], []);
    expect(host.rotate()?.path).toBe(files[0]);
    files.push(host.currentFile);
    poll(3_000, [4], [3], [2]);
    host.rotate();
    files.push(host.currentFile);
    poll(4_000, [], [], [1, 4]);
    host.finish();
    const batches = files.map((f) => all(openHeapTrace(f)!));
    expect(batches[0]!.map((b) => b.kind)).toEqual(['alloc']);
    expect(batches[1]!.map((b) => b.kind)).toEqual(['live', 'alloc', 'free']);
    expect(batches[2]!.map((b) => b.kind)).toEqual(['live', 'free']);
    const live1 = batches[1]![0]! as Extract<HeapEventBatch, { kind: 'live' }>;
    expect([...live1.ordinals]).toEqual([1, 2, 3]);
    expect([...live1.sizes]).toEqual([100, 200, 300]);
    expect([...live1.allocTimesUs]).toEqual([2_000, 2_000, 2_000]);
    // Their stacks are in the file's own tables.
    const trace1 = openHeapTrace(files[1]!)!;
    const again = all(trace1)[0]! as Extract<HeapEventBatch, { kind: 'live' }>;
    expect([0, 1, 2].map((i) => trace1.frames[trace1.stacks.frame(again.stackIds[i]!)]!.funcname)).toEqual([
      'grow',
      'churn',
      'grow',
    ]);
    expect([...(batches[1]![2]! as Extract<HeapEventBatch, { kind: 'free' }>).ordinals]).toEqual([2]);
    const live2 = batches[2]![0]! as Extract<HeapEventBatch, { kind: 'live' }>;
    expect([...live2.ordinals]).toEqual([1, 3, 4]);
    expect([...live2.allocTimesUs]).toEqual([2_000, 2_000, 3_000]);
    expect([...(batches[2]![1]! as Extract<HeapEventBatch, { kind: 'free' }>).ordinals]).toEqual([1, 4]);
  });
});
