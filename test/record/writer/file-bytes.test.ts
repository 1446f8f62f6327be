/**
 * A recording's bytes for a fixed stream of harvests: the sink calls the
 * ingester makes, and the file a RecordingHost writes from the pipe and from
 * inline chunks, pinned by their SHA-256. The pins were taken before
 * lib/record was split by job (issue 30): moving code between the recorded
 * process and the writer must not change one byte of what is written.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CpuProfile, CpuProfileCallFrame, CpuProfileNode } from '../../../lib/v8/index';
import type { Frame } from '../../../lib/profile/index';
import type { RecordedBy } from '../../../lib/recorded-by';
import { openProfile } from '../../../lib/formats/index';
import { ChunkIngester, RecordingHost } from '../../../lib/record/writer/index';
import { encodeFrame, HarvestEncoder, type WireChunk } from '../../../lib/record/wire/index';
import { rng } from '../../support/rng.mjs';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-file-bytes-');

interface Harvest {
  threadId: number;
  mainThread: boolean;
  profile: CpuProfile;
}

const CALL_FRAMES: CpuProfileCallFrame[] = [
  ...['(program)', '(idle)', '(garbage collector)'].map((functionName) => ({
    functionName,
    scriptId: '0',
    url: '',
    lineNumber: -1,
    columnNumber: -1,
  })),
  ...Array.from({ length: 14 }, (_, k) => ({
    functionName: k % 5 === 4 ? '' : `fn${k}`,
    scriptId: String(1 + (k % 3)),
    url: `file:///srv/app/part${k % 3}.js`,
    lineNumber: 10 * k + (k % 2),
    columnNumber: k % 4 === 0 ? -1 : 2 * k,
  })),
];
const ROOT: CpuProfileCallFrame = { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };

/**
 * Harvests as V8's overlapping console profiles give them, for three threads: node ids that change from harvest to
 * harvest, shared ticks where one harvest overlaps the last, a tick now and then before its predecessor, hot lines
 * (positionTicks), samples of a node the tree lacks, and one chain deeper than Tachyon's 256 frames.
 */
function harvests(seed: number): Harvest[] {
  const next = rng(seed);
  const int = (n: number): number => Math.floor(next() * n);
  const clock = new Map<number, number>([
    [0, 1_000_000],
    [2, 1_000_400],
    [5, 999_000],
  ]);
  const out: Harvest[] = [];
  for (let h = 0; h < 36; h++) {
    const threadId = [0, 0, 2, 5][int(4)]!;
    let id = 1 + int(1000);
    const nodes: CpuProfileNode[] = [{ id: id++, callFrame: ROOT, children: [] }];
    const depth = h === 17 ? 300 : 1 + int(7);
    const grow = (parent: CpuProfileNode, level: number): void => {
      const fanout = level >= depth ? 0 : h === 17 ? 1 : 1 + int(3);
      for (let c = 0; c < fanout; c++) {
        const node: CpuProfileNode = { id: id++, callFrame: CALL_FRAMES[int(CALL_FRAMES.length)]! };
        if (int(3) === 0)
          node.positionTicks = [
            { line: 1 + int(40), ticks: 1 + int(3) },
            { line: 50, ticks: int(2) },
          ];
        (parent.children ??= []).push(node.id);
        nodes.push(node);
        grow(node, level + 1);
      }
    };
    grow(nodes[0]!, 0);
    // Half the harvests begin a little before the thread's last tick: those ticks are the previous harvest's too.
    const startTime = clock.get(threadId)! - (int(2) === 0 ? 150 + int(200) : 0);
    const samples: number[] = [];
    const timeDeltas: number[] = [];
    for (let s = 0, n = 5 + int(40); s < n; s++) {
      samples.push(int(25) === 0 ? 999_999 : nodes[int(nodes.length)]!.id);
      timeDeltas.push(int(12) === 0 ? -int(60) : 40 + int(120));
    }
    const endTime = startTime + timeDeltas.reduce((a, b) => a + b, 0);
    clock.set(threadId, Math.max(clock.get(threadId)!, endTime));
    out.push({ threadId, mainThread: threadId === 0, profile: { nodes, startTime, endTime, samples, timeDeltas } });
  }
  return out;
}

const ABOUT: RecordedBy = {
  runtime: 'node',
  version: 'v22.0.0',
  platform: 'linux',
  arch: 'x64',
  hostname: 'pinned',
  pid: 4242,
  ppid: 1,
  processStartUs: 1_700_000_000_000_000,
  argv: ['node', 'app.js'],
  intervalUs: 100,
  mode: 'wall',
  recorder: '0.0.0-test',
};

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** Every sink call, in order, as text (the frames as given, not deduplicated). */
class CallLog {
  readonly lines: string[] = [];
  private frames = 0;
  internFrame(frame: Frame): number {
    this.lines.push(`frame ${JSON.stringify(frame)}`);
    return this.frames++;
  }
  writeStack(threadId: bigint, interpreterId: number, timeUs: bigint, status: number, ids: ArrayLike<number>): void {
    this.lines.push(`stack ${threadId} ${interpreterId} ${timeUs} ${status} ${Array.from(ids).join(',')}`);
  }
}

/** The harvests as one sender encodes them (those with no new sample are not sent). */
function encoded(list: Harvest[]): { threadId: number; mainThread: boolean; chunk: WireChunk }[] {
  const encoder = new HarvestEncoder();
  return list.flatMap(({ threadId, mainThread, profile }) => {
    const chunk = encoder.encode(profile, threadId);
    return chunk === undefined ? [] : [{ threadId, mainThread, chunk }];
  });
}

/** The pipe's bytes as the recorded process sends them: 'about', each harvest with new samples, 'end'. */
function pipeStream(list: Harvest[]): Buffer {
  const frames: Buffer[] = [encodeFrame({ kind: 'about', about: ABOUT })];
  for (const h of encoded(list)) frames.push(encodeFrame({ kind: 'chunk', ...h }));
  frames.push(encodeFrame({ kind: 'end', durationSec: 0.25, threads: 3 }));
  return Buffer.concat(frames);
}

function hostFile(name: string, compression: 'zstd' | 'none', feed: (host: RecordingHost) => void): Buffer {
  const out = path.join(dir, name);
  const host = new RecordingHost({
    out,
    intervalUs: 100,
    compression,
    startTimeUs: 1_700_000_000_000_000n,
    epochOffsetUs: 1_699_999_000_000_000n,
    sourceMaps: false,
  });
  feed(host);
  host.finish();
  return readFileSync(out);
}

/**
 * The pins: the calls taken from the code before the split (with files then spelled as file: URLs); the file
 * re-pinned when frames' files became paths (issue 36), the calls pin showing nothing else changed.
 */
const PINNED = {
  calls: '4e62dc0cd10b4f6e39c3f35babbc69b15ec52efbaab1f1d13a46585d79020bcd',
  none: 'c56e3a349ff9ae27eeb9036ebe637a1197924ae975b5ee36adc02cc87531dab6',
};

describe('a fixed stream of harvests', () => {
  const list = harvests(30);

  it('makes the same sink calls (frames interned, stacks written)', () => {
    const log = new CallLog();
    const ingester = new ChunkIngester(log, 7n);
    let written = 0;
    for (const h of encoded(list)) written += ingester.ingest(h.chunk, BigInt(h.threadId), h.mainThread);
    expect(written).toBeGreaterThan(500);
    // The stream has what the pins are about: shared ticks dropped, stacks at the 256-frame cap.
    expect(written).toBeLessThan(list.reduce((n, h) => n + h.profile.samples.length, 0));
    expect(log.lines.some((l) => l.startsWith('stack ') && l.split(' ')[5]!.split(',').length >= 256)).toBe(true);
    expect(log.lines.filter((l) => l.startsWith('stack ')).length).toBe(written);
    // Frames' files are paths now (issue 36: one spelling per script); spelled back as the file: URLs V8 gave,
    // the calls are still the ones pinned before the split.
    const text = log.lines.join('\n');
    expect(text).not.toContain('file://');
    expect(sha256(text.replaceAll('/srv/app/', 'file:///srv/app/'))).toBe(PINNED.calls);
  });

  it('writes the same file from the pipe and from inline chunks, byte for byte', () => {
    const stream = pipeStream(list);
    for (const compression of ['none', 'zstd'] as const) {
      const piped = hostFile(`piped-${compression}.tach`, compression, (host) => {
        // In uneven pieces, as pipe reads come.
        for (let at = 0, k = 0; at < stream.length; k++) {
          const n = 1 + ((k * 7919) % 6000);
          host.accept(stream.subarray(at, at + n));
          at += n;
        }
      });
      const inline = hostFile(`inline-${compression}.tach`, compression, (host) => {
        host.setRecordedBy(ABOUT);
        for (const h of encoded(list)) host.ingestChunk(h.chunk, h.threadId, h.mainThread);
        host.endRecording(0.25, 3);
      });
      expect(sha256(inline)).toBe(sha256(piped));
      if (compression === 'none') expect(sha256(piped)).toBe(PINNED.none);
      const src = openProfile(path.join(dir, `piped-${compression}.tach`), { format: 'tachyon' });
      expect(src.meta.durationUs).toBe(250_000n);
      src.close();
    }
  });
});
