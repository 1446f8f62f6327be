/**
 * A recording whose file system fills up (issue 38): the host stops writing at the write error, keeps the file and
 * its journal (abandon() no longer removes them), says the OS's cause and the `profpack recover` command, and
 * recover() gives back exactly what was flushed before: the chunks and heap polls this test fed before it filled the
 * disk (the known truth), nothing after. On a real 1 MB tmpfs (the tests run as root), both backends.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, isProfpackError, type ProfpackError } from '../../../lib/errors';
import type { HeapEventBatch } from '../../../lib/profile/index';
import { encodeFrame, HarvestEncoder } from '../../../lib/record/wire/index';
import { RecordingHost } from '../../../lib/record/writer/index';
import { openHeapTrace, ProfileReader, ProfileWriter, recover } from '../../../lib/tachyon/index';
import type { CpuProfile } from '../../../lib/v8/index';
import { HandDrivenRecording, mainCalling } from '../../support/hand-recording';
import { scratchDir } from '../../support/scratch-dir';

const dir = scratchDir('profpack-write-error-');
const full = path.join(dir, 'full');

beforeAll(() => {
  fs.mkdirSync(full);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', full]);
});
afterEach(() => {
  for (const name of fs.readdirSync(full)) fs.rmSync(path.join(full, name), { recursive: true, force: true });
});
afterAll(() => execFileSync('umount', [full]));

/** Writes a file until the tmpfs refuses one more byte. */
function fillDisk(): void {
  const fd = fs.openSync(path.join(full, 'filler'), 'w');
  const block = Buffer.alloc(4096, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Longer than many 20 ms flush intervals, on a loaded machine too. */
const FLUSHED_MS = 500;

const FUNCTIONS = ['alpha', 'beta', 'gamma'];

/** Numbers in [0, n) that no compressor shrinks much (a fixed LCG): far more bytes than a page's slack. */
function noise(count: number, n: number): number[] {
  let x = 12345;
  return Array.from({ length: count }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  });
}

/** (root) → main → one of FUNCTIONS, sample i at start + 100·(i+1). */
function chunk(start: number, leaves: number[]): CpuProfile {
  const cf = (functionName: string, lineNumber = 0) => ({
    functionName,
    scriptId: '1',
    url: 'file:///app.js',
    lineNumber,
    columnNumber: 0,
  });
  return {
    nodes: [
      { id: 1, callFrame: cf('(root)'), children: [2] },
      { id: 2, callFrame: cf('main', 1), children: [3, 4, 5] },
      ...FUNCTIONS.map((name, i) => ({ id: 3 + i, callFrame: cf(name, 10 * (i + 1)) })),
    ],
    startTime: start,
    endTime: start + 100 * leaves.length,
    samples: leaves.map((l) => 3 + l),
    timeDeltas: leaves.map(() => 100),
  };
}

/** The error finish() throws, checked: ENOSPC named, the recover command given. */
function writeError(finish: () => unknown, file: string): ProfpackError {
  let caught: unknown;
  try {
    finish();
  } catch (err) {
    caught = err;
  }
  expect(isProfpackError(caught)).toBe(true);
  const error = caught as ProfpackError;
  expect(error.code).toBe(ErrorCode.TACHYON_WRITE_IO);
  expect(error.message).toContain('ENOSPC');
  expect(error.message).toContain(`profpack recover ${file}`);
  expect(error.details).toMatchObject({ osCode: 'ENOSPC', path: file });
  return error;
}

describe('a recording on a full disk', () => {
  it('a writer that cannot write its header leaves neither an empty file nor a lock (versions 1 and 2)', () => {
    fillDisk();
    for (const formatVersion of [1, 2] as const) {
      const out = path.join(full, `v${formatVersion}.tach`);
      expect(() => new ProfileWriter(out, { sampleIntervalUs: 1000, formatVersion })).toThrow(
        expect.objectContaining({ code: ErrorCode.TACHYON_WRITE_IO }),
      );
    }
    expect(fs.readdirSync(full)).toEqual(['filler']);
  });

  for (const compression of ['zstd', 'none'] as const)
    it(`keeps the file and its journal; recover gives back every flushed sample (${compression})`, async () => {
      const out = path.join(full, 'cpu.tach');
      const said: ProfpackError[] = [];
      const host = new RecordingHost({
        out,
        intervalUs: 100,
        compression,
        startTimeUs: 0n,
        epochOffsetUs: 0n,
        flushIntervalMs: 20,
        sourceMaps: false,
        onWriteError: (err) => said.push(err),
      });
      const encoder = new HarvestEncoder();
      const before = [0, 1, 2, 0, 0, 1];
      host.ingestChunk(encoder.encode(chunk(0, before), 0)!, 0, true);
      await sleep(FLUSHED_MS);
      fillDisk();
      // Far more than the last page of the file can hold, whatever the compression.
      const after = noise(200_000, 3);
      // Off the pipe, as record's host reads it.
      host.accept(
        encodeFrame({ kind: 'chunk', threadId: 0, mainThread: true, chunk: encoder.encode(chunk(10_000, after), 0)! }),
      );
      await sleep(FLUSHED_MS);
      const error = writeError(() => host.finish(), out);
      expect(said).toEqual([error]);
      // What runRecorded does when finish() throws: the file stays.
      host.abandon();
      expect(fs.existsSync(out)).toBe(true);
      expect(fs.existsSync(`${out}.journal`)).toBe(true);

      const fixed = path.join(dir, `cpu-${compression}.tach`);
      expect(recover(out, fixed).source).toBe('journal');
      const reader = ProfileReader.open(fixed);
      const got = [...reader.samples()].map((s) => [reader.frames[s.stack[0]!]?.funcname, Number(s.timestampUs)]);
      reader.close();
      expect(got).toEqual(before.map((leaf, i) => [FUNCTIONS[leaf], 100 * (i + 1)]));
    });

  it('rotating, with heap events: the finished file is whole, the failing one recovers its flushed polls', async () => {
    const recording = new HandDrivenRecording(mainCalling('grow', 'churn', 0), 7, path.join(full, 'rot'), 10, 20);
    const host = recording.host;
    const poll = (timeUs: number, ordinals: number[], nodes: number[], freed: number[]): void => {
      recording.heapPoll(timeUs, ordinals, nodes, freed, (o) => 100 * o);
      recording.cpuChunk(timeUs, timeUs + 1000);
    };
    poll(2_000, [1, 2, 3], [3, 4, 3], []);
    const first = host.rotate()!.path;
    const failing = host.currentFile;
    poll(3_000, [4, 5], [3, 4], [2]);
    await sleep(FLUSHED_MS);
    fillDisk();
    const many = Array.from({ length: 50_000 }, (_, i) => 6 + i);
    const sizes = noise(many.length, 1 << 20);
    recording.heapPoll(
      4_000,
      many,
      noise(many.length, 2).map((n) => 3 + n),
      [1, 4],
      (o) => 1 + sizes[o - 6]!,
    );
    recording.cpuChunk(4_000, 5_000);
    await sleep(FLUSHED_MS);
    writeError(() => host.finish(), failing);
    host.abandon();
    expect(fs.existsSync(`${failing}.journal`)).toBe(true);

    const kinds = (file: string): [string, number[]][] =>
      [...openHeapTrace(file)!.events()].map((b: HeapEventBatch) => [b.kind, [...b.ordinals]]);
    expect(kinds(first)).toEqual([['alloc', [1, 2, 3]]]);
    const fixed = path.join(dir, 'rot-fixed.tach');
    recover(failing, fixed);
    expect(kinds(fixed)).toEqual([
      ['live', [1, 2, 3]],
      ['alloc', [4, 5]],
      ['free', [2]],
    ]);
    const reader = ProfileReader.open(fixed);
    expect([...reader.samples()].map((s) => Number(s.timestampUs))).toEqual([3_500]);
    reader.close();
  });
});
