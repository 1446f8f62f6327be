/**
 * The heap-only check that convert, top, flame and diff make before their work: only a Tachyon recording
 * says what recorded it, so any other input is answered from its head and never opened (issue 39: a 45 MB
 * .cpuprofile was parsed here and then again by the conversion, half of its CPU).
 */
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type * as formats from '../../lib/formats/index';
import { readFileSync, writeFileSync } from 'node:fs';
import { ProfileReader, ProfileWriter } from '../../lib/index';
import { encodeRecordedBy, type RecordedBy } from '../../lib/recorded-by';
import { HEADER_SIZE } from '../../lib/tachyon/format';
import { isHeapOnly, wantsHeap } from '../../lib/cli/heap-input';
import { repoRoot } from '../support/environment';
import { scratchDir } from '../support/scratch-dir';

const opened: string[] = [];
vi.mock('../../lib/formats/index', async (importOriginal) => {
  const original = await importOriginal<typeof formats>();
  return {
    ...original,
    openProfile: (...args: Parameters<typeof original.openProfile>) => {
      opened.push(args[0]);
      return original.openProfile(...args);
    },
  };
});

const work = scratchDir('profpack-heap-input-');
const about: RecordedBy = {
  runtime: 'node',
  version: 'v20.20.2',
  platform: 'linux',
  hostname: 'h',
  pid: 1,
  processStartUs: 1,
  argv: ['node', 'a.js'],
  intervalUs: 1000,
  mode: 'wall',
  recorder: '0.1.0',
};

describe('isHeapOnly', () => {
  it('answers no for a .cpuprofile without opening it', () => {
    opened.length = 0;
    const file = path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile');
    expect(isHeapOnly([file])).toBe(false);
    expect(opened).toEqual([]);
  });

  /** A zstd Tachyon file whose strings say what recorded it (`cpu: false`: a heap-only recording). */
  function recording(name: string, cpu: boolean): string {
    const file = path.join(work, name);
    const writer = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1n, compression: 'zstd' });
    writer.internString(encodeRecordedBy({ ...about, cpu }));
    const frame = writer.internFrame({ filename: 'a.js', funcname: 'f', lineno: 1 });
    for (let t = 0; t < 200; t++) writer.writeStack(1n, 0, 2n + BigInt(t), 0, [frame]);
    writer.finalize();
    return file;
  }

  it('answers a Tachyon file from its string table, which says whether it sampled CPU', () => {
    opened.length = 0;
    expect(isHeapOnly([recording('cpu.tach', true)])).toBe(false);
    expect(isHeapOnly([recording('heap.tach', false)])).toBe(true);
    // The sample region is the command's to read and check (an open here decompressed a zstd region twice).
    expect(opened).toEqual([]);
  });

  it('reads no sample region: a damaged zstd region does not hide a heap-only recording', () => {
    const file = recording('heap-damaged.tach', false);
    const bytes = readFileSync(file);
    bytes.fill(0xff, HEADER_SIZE + 4, HEADER_SIZE + 12);
    writeFileSync(file, bytes);
    expect(() => ProfileReader.open(file).close()).toThrow(
      expect.objectContaining({ code: expect.stringMatching(/^ERR_TACHYON_ZSTD/) }),
    );
    expect(isHeapOnly([file])).toBe(true);
  });
});

describe('wantsHeap', () => {
  it('a heap type a pprof file lacks is the pprof read (its types refused by name), never a heap recording', () => {
    // Datadog's heap profile has inuse_objects and inuse_space only: no alloc_* and no heap events.
    const file = path.join(repoRoot, 'test', 'fixtures', 'outside', 'datadog', 'datadog.heap.pb.gz');
    expect(wantsHeap({ sampleType: 'alloc_space' }, [file])).toBe(false);
    expect(wantsHeap({ sampleType: 'inuse_space' }, [file])).toBe(false);
  });

  it('a heap type a Tachyon file lacks is its heap events', () => {
    const file = path.join(work, 'cpu-only.tach');
    const writer = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1n, compression: 'none' });
    writer.writeStack(1n, 0, 2n, 0, [writer.internFrame({ filename: 'a.js', funcname: 'f', lineno: 1 })]);
    writer.finalize();
    expect(wantsHeap({ sampleType: 'alloc_space' }, [file])).toBe(true);
    expect(wantsHeap({ sampleType: 'samples' }, [file])).toBe(false);
  });
});
