/**
 * A rotated heap recording read over its directory: the end is the end of the last file written. Under load the
 * host's rotation timer can fall between a harvest's CPU chunk and its heap frame, so one file holds a heap poll and
 * no CPU sample, and the next only CPU samples taken during that poll's GC (V8 stamps them before the poll's time).
 * Each file starts where its predecessor's samples end, so such a pair gave the file after them a start before its
 * predecessor's; the directory's reader put the files in start order, read that predecessor's 'live' batch after
 * the last poll, and the garbage the last poll freed came back to life (seen once: test/memory/scenarios.test.ts,
 * the garbage maker in the top three in use).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listProfileFiles } from '../../lib/fleet/index';
import {
  ConcatenatedHeapTrace,
  heapProfile,
  openHeapFiles,
  requireHeapFiles,
  type HeapTraceSource,
} from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import type { RecordedBy } from '../../lib/recorded-by';
import { openHeapTrace } from '../../lib/tachyon/index';
import { HandDrivenRecording, mainCalling } from '../support/hand-recording';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-rotorder-');

/** V8's allocation tree: root → main → (leakMemory, makeGarbage). */
const tree = mainCalling('leakMemory', 'makeGarbage');
/** What recorded the files: one process, so that the directory reads as one recording. */
const ABOUT: RecordedBy = {
  runtime: 'node',
  version: 'v20.0.0',
  platform: 'linux',
  arch: 'x64',
  hostname: 'pinned',
  pid: 4242,
  ppid: 1,
  processStartUs: 500,
  argv: ['node', 'app.js'],
  intervalUs: 1000,
  mode: 'wall',
  recorder: '0.0.0-test',
};
const LEAK = 3;
const GARBAGE = 4;

/**
 * Writes the rotated files of a recording whose host rotated twice between a harvest's chunk and its heap frame;
 * returns them in recording order (their names').
 */
function writeRotated(name: string): string[] {
  const rotated = path.join(dir, name);
  const recording = new HandDrivenRecording(tree, 0, rotated, 100);
  const host = recording.host;
  host.setRecordedBy(ABOUT);
  /** One CPU sample of main at `atUs`. */
  const chunk = (atUs: number): void => recording.cpuChunk(atUs - 500, atUs);
  const poll = (timeUs: number, ordinals: number[], nodes: number[], freed: number[]): void =>
    recording.heapPoll(timeUs, ordinals, nodes, freed, () => 2560);
  // A harvest: its chunk, then its poll (a leak object, two of garbage).
  chunk(2_000);
  poll(2_100, [1, 2, 3], [LEAK, GARBAGE, GARBAGE], []);
  host.rotate();
  // The next harvest's chunk lands in this file; the rotation comes before its poll.
  chunk(3_000);
  host.rotate();
  // A file with the poll alone: the next one starts at the poll's time.
  poll(3_400, [4], [LEAK], []);
  host.rotate();
  // The next chunk holds only samples V8 took during that poll's GC, before its time.
  chunk(3_300);
  host.rotate();
  // The program dropped its garbage: the last poll, at exit, frees it.
  chunk(4_000);
  poll(4_100, [], [], [2, 3]);
  host.finish();
  return fs
    .readdirSync(rotated)
    .sort()
    .map((f) => path.join(rotated, f));
}

/** Scaled bytes in use at the end by function. */
function inUseAtEnd(trace: HeapTraceSource): Map<string, number> {
  const rows = aggregate(heapProfile(trace).profile, { sampleType: 'inuse_space', limit: 0 }).rows;
  return new Map(rows.map((row) => [row.funcname!, row.self]));
}

describe('a rotated heap recording whose rotations fell between a harvest chunk and its heap frame', () => {
  it('read over the directory, the last poll decides what is live at the end', () => {
    const files = writeRotated('in-order');
    expect(files.length).toBe(5);
    // Each file starts no earlier than the one before it.
    const starts = files.map((f) => openHeapTrace(f)!.meta.startTimeUs);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const trace = requireHeapFiles(files);
    expect(heapProfile(trace).info.endSampledBytes).toBe(2 * 2560);
    const inUse = inUseAtEnd(trace);
    expect(inUse.get('makeGarbage') ?? 0).toBe(0);
    expect(inUse.get('leakMemory')).toBeGreaterThan(0);
  });

  it("files read out of their place (written before the fix): a file's inherited objects stay freed", () => {
    const files = writeRotated('out-of-place');
    // The chunk-only file (live at its start: the garbage) read after the last poll, as the reader's sort put it.
    const parts = [0, 1, 2, 4, 3].map((i) => openHeapTrace(files[i]!)!);
    const joined = new ConcatenatedHeapTrace(parts);
    expect(heapProfile(joined).info.endSampledBytes).toBe(2 * 2560);
    expect(inUseAtEnd(joined).get('makeGarbage') ?? 0).toBe(0);
  });

  it('a walked file gone before it is read is skipped as unreadable; a file the caller named is an ERR_IO', () => {
    const files = writeRotated('retention');
    // A rotating recorder's retention deletes old files while a question reads the directory.
    const listed = listProfileFiles([path.dirname(files[0]!)], { unfinished: 'caller' });
    expect([...listed]).toEqual(files);
    fs.rmSync(files[0]!);
    const skipped: [string, readonly string[]][] = [];
    const trace = openHeapFiles(listed, {
      unchecked: listed.unchecked,
      onSkipped: (reason, paths) => skipped.push([reason, paths]),
    });
    expect(skipped).toEqual([['unreadable', [files[0]]]]);
    // The files left read as they would alone: the last poll frees the garbage; the leak stays.
    expect(heapProfile(trace!).info.endSampledBytes).toBe(2 * 2560);
    let code: string | undefined;
    try {
      openHeapFiles(files);
    } catch (err) {
      code = (err as { code?: string }).code;
    }
    expect(code).toBe('ERR_IO');
  });
});
