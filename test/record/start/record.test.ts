import * as vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { CpuProfile } from '../../../lib/v8/index';
import { NodeStatus } from '../../../lib/profile/index';
import { TickList } from '../../support/model';
import { ChunkIngester } from '../../../lib/record/writer/index';
import { HarvestEncoder } from '../../../lib/record/wire/index';
import { startRecording } from '../../../lib/record/start/index';
import { SLOWDOWN } from '../../support/environment';

function chunk(startTime: number, samples: number[], timeDeltas: number[]): CpuProfile {
  const cf = (functionName: string, url = '', lineNumber = -1, columnNumber = -1) => ({
    functionName,
    scriptId: '1',
    url,
    lineNumber,
    columnNumber,
  });
  return {
    nodes: [
      { id: 1, callFrame: cf('(root)'), children: [2, 3, 4, 5] },
      { id: 2, callFrame: cf('(program)') },
      { id: 3, callFrame: cf('(idle)') },
      { id: 4, callFrame: cf('(garbage collector)') },
      { id: 5, callFrame: cf('main', 'file:///app.js', 0, 0), children: [6] },
      { id: 6, callFrame: cf('work', 'file:///app.js', 9, 17) },
    ],
    startTime,
    endTime: startTime + timeDeltas.reduce((a, b) => a + b, 0),
    samples,
    timeDeltas,
  };
}

/** Harvests into a sink as a recording takes them: one sender's encoder, then the writer's ingester. */
function recorderInto(sink: TickList): (profile: CpuProfile, threadId: number, mainThread: boolean) => number {
  const encoder = new HarvestEncoder();
  const ingester = new ChunkIngester(sink);
  return (profile, threadId, mainThread) => {
    const chunk = encoder.encode(profile, threadId);
    return chunk === undefined ? 0 : ingester.ingest(chunk, BigInt(threadId), mainThread);
  };
}

describe('HarvestEncoder, then ChunkIngester', () => {
  it('drops (root), writes 1-based positions, innermost first, V8 names kept, status per leaf', () => {
    const sink = new TickList();
    recorderInto(sink)(chunk(1000, [6, 2, 3, 4, 1], [10, 10, 10, 10, 10]), 0, true);
    const names = (i: number) => Array.from(sink.sampleList[i]!.stack, (f) => sink.frames[f]!.funcname);
    expect(names(0)).toEqual(['work', 'main']);
    expect(sink.frames[sink.sampleList[0]!.stack[0]!]).toEqual({
      filename: '/app.js', // V8's file:///app.js, as a path
      funcname: 'work',
      lineno: 10,
      endLineno: null,
      column: 18,
      endColumn: null,
      opcode: null,
    });
    expect(names(1)).toEqual(['(program)']);
    expect(names(2)).toEqual(['(idle)']);
    expect(names(3)).toEqual(['(garbage collector)']);
    expect(names(4)).toEqual([]);
    const main = NodeStatus.MainThread;
    expect(sink.sampleList.map((s) => s.status)).toEqual([
      NodeStatus.OnCpu | main,
      NodeStatus.OnCpu | main,
      main,
      NodeStatus.OnCpu | NodeStatus.InGc | main,
      NodeStatus.OnCpu | main,
    ]);
    expect(sink.sampleList.map((s) => s.timestampUs)).toEqual([1010n, 1020n, 1030n, 1040n, 1050n]);
  });

  it('drops the samples two overlapping chunks share, per thread, and interns frames once', () => {
    const sink = new TickList();
    const ingest = recorderInto(sink);
    expect(ingest(chunk(0, [6, 6, 6], [100, 100, 100]), 0, true)).toBe(3);
    // The next chunk began before the previous ended: its first two ticks are the same ticks.
    expect(ingest(chunk(150, [6, 6, 5], [50, 100, 100]), 0, true)).toBe(1);
    expect(ingest(chunk(150, [6], [50]), 7, false)).toBe(1);
    // Nothing new at all: nothing is sent.
    expect(new HarvestEncoder().encode(chunk(0, [], []), 0)).toBeUndefined();
    expect(sink.sampleList.map((s) => `${s.threadId}:${s.timestampUs}`)).toEqual([
      '0:100',
      '0:200',
      '0:300',
      '0:400',
      '7:200',
    ]);
    expect(sink.frames.map((f) => f.funcname)).toEqual(['work', 'main']);
    expect(sink.sampleList[4]!.status & NodeStatus.MainThread).toBe(0);
  });

  it('writes a chunk in time order when V8 recorded a tick before its predecessor', () => {
    const sink = new TickList();
    recorderInto(sink)(chunk(0, [6, 5, 2], [100, -30, 50]), 0, true);
    expect(sink.sampleList.map((s) => `${s.timestampUs}:${sink.frames[s.stack[0]!]!.funcname}`)).toEqual([
      '70:main',
      '100:work',
      '120:(program)',
    ]);
  });
});

describe('startRecording (in this process, V8 sampler)', () => {
  it('streams harvests into the sink: the hot function, with its 1-based position, no duplicate ticks', () => {
    const code = [
      '(function () {',
      '  function profpackHotLoop(ms) {',
      '    const end = Date.now() + ms; let x = 0;',
      '    while (Date.now() < end) x += Math.sqrt(x + 1);',
      '    return x;',
      '  }',
      '  return profpackHotLoop;',
      '})()',
    ].join('\n');
    const hot = vm.runInThisContext(code, { filename: 'profpack-hot-workload.js' }) as (ms: number) => number;
    const sink = new TickList();
    let finalized = 0;
    const recording = startRecording({
      sink: Object.assign(sink, { finalize: () => finalized++ }),
      intervalUs: 500,
      harvestMs: 60_000,
      handleExit: false,
    });
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < 8; i++) {
      hot(40);
      recording.harvest();
    }
    // The CPU this process got, not the wall time: on a loaded machine the loop ran for a fraction of it.
    const { user, system } = process.cpuUsage(cpu0);
    const cpuMs = (user + system) / 1000;
    const summary = recording.stop();
    expect(recording.stop()).toBe(summary);
    expect(finalized).toBe(1);
    expect(summary.samples).toBe(sink.sampleCount);
    // V8 takes a sample when the thread runs: judged against the CPU time it got, a fifth of the ideal
    // count at 500 µs is a safe floor however busy the machine (an emulator slows the sampler more).
    expect(sink.sampleCount).toBeGreaterThan((cpuMs * 1000) / 500 / 5 / SLOWDOWN);
    const times = sink.sampleList.map((s) => s.timestampUs);
    for (let i = 1; i < times.length; i++) expect(times[i]! > times[i - 1]!).toBe(true);
    // The function's frames: at its declaration (line 2, column 27), or, as a leaf, at the hot line V8's positionTicks name (no column).
    const hotFrames = new Set(sink.frames.flatMap((f, k) => (f.funcname === 'profpackHotLoop' ? [k] : [])));
    for (const k of hotFrames) {
      const f = sink.frames[k]!;
      expect(f.filename).toBe('profpack-hot-workload.js');
      expect([f.lineno, f.column], JSON.stringify(f)).toEqual(f.column === null ? [expect.any(Number), null] : [2, 27]);
      if (f.column === null) expect(f.lineno).toBeGreaterThanOrEqual(3);
    }
    expect([...hotFrames].some((k) => sink.frames[k]!.lineno === 4)).toBe(true);
    const hotSamples = sink.sampleList.filter((s) => Array.from(s.stack).some((f) => hotFrames.has(f)));
    expect(hotSamples.length).toBeGreaterThan(sink.sampleCount / 3);
    for (const s of hotSamples) {
      expect(s.threadId).toBe(0n);
      expect(s.status & (NodeStatus.OnCpu | NodeStatus.MainThread)).toBe(NodeStatus.OnCpu | NodeStatus.MainThread);
    }
  });
});
