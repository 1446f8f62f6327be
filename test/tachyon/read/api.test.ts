// ProfileReader's API contract beyond the vectors: error codes, offsets and
// details, the not-finalized header, the decompression cap, close(), and the
// collector's call shape.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { ErrorCode } from '../../../lib/errors';
import * as profpack from '../../../lib/index';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { sharedPath } from '../../support/environment';
import { thrown } from '../../support/refusals';
import { recordCalls } from '../../support/replay-calls';

const vector = (name: string): string => sharedPath('vectors', 'tachyon', name);

describe('ProfileReader API', () => {
  it('is exported from the package', () => {
    expect(profpack.ProfileReader).toBe(ProfileReader);
  });

  it('uses the process backend by default', () => {
    const reader = ProfileReader.open(vector('s01_single_thread_none.bin'));
    expect(reader.backend).toBe(backend.name);
    reader.close();
  });

  it('a header still all zeros (writer never finalized) is ERR_TACHYON_NOT_FINALIZED, not bad magic', () => {
    const err = thrown(() => ProfileReader.fromBuffer(new Uint8Array(64)));
    expect(err.code).toBe(ErrorCode.TACHYON_NOT_FINALIZED);
    expect(err.code).toBe('ERR_TACHYON_NOT_FINALIZED');
    expect(err.offset).toBe(0);
    expect(err.details?.stage).toBe('open');
    const bad = thrown(() => ProfileReader.open(vector('e01_bad_magic.bin')));
    expect(bad.code).toBe('ERR_TACHYON_BAD_MAGIC');
  });

  it('open-stage errors point into the file', () => {
    const err = thrown(() => ProfileReader.open(vector('e08_invalid_mode.bin')));
    expect(err.code).toBe('ERR_TACHYON_BAD_MODE');
    expect(err.offset).toBe(60);
    const tiny = thrown(() => ProfileReader.open(vector('e04_too_small.bin')));
    expect(tiny.code).toBe('ERR_TACHYON_TOO_SMALL');
  });

  it('a replay-stage error keeps what was delivered and says how many', () => {
    const reader = ProfileReader.open(vector('e20_suffix_shares_too_much.bin'));
    const timestamps: bigint[] = [];
    const err = thrown(() => reader.replay({ collect: (_s, ts) => timestamps.push(...ts) }));
    expect(err.code).toBe('ERR_TACHYON_SHARED_COUNT');
    expect(err.details?.stage).toBe('replay');
    expect(err.details?.samplesDelivered).toBe(1);
    expect(timestamps.length).toBe(1);
    // An uncompressed region: the offset is in the file, inside the sample region.
    expect(err.offset).toBeGreaterThanOrEqual(64);
    expect(err.offset).toBeLessThan(reader.layout.stringTableOffset);
    expect(err.details?.sampleDataOffset).toBe(err.offset! - 64);
    reader.close();
  });

  it('the sample-count check comes after every sample was delivered', () => {
    const reader = ProfileReader.open(vector('e11_sample_count_mismatch.bin'));
    let n = 0;
    const err = thrown(() => reader.replay({ collect: (_s, ts) => (n += ts.length) }));
    expect(err.code).toBe('ERR_TACHYON_SAMPLE_COUNT_MISMATCH');
    expect(n).toBe(9);
    expect(err.details?.samplesDelivered).toBe(9);
    reader.close();
  });

  it('caps the decompressed region (CPython: 1 GiB) as an option', () => {
    const bytes = readFileSync(vector('s20_random_mix_zstd.bin'));
    const err = thrown(() => ProfileReader.fromBuffer(bytes, { maxDecompressedSize: 4096 }));
    expect(err.code).toBe('ERR_TACHYON_ZSTD_TOO_LARGE');
    expect(() => ProfileReader.fromBuffer(bytes, { maxDecompressedSize: 1 << 20 }).close()).not.toThrow();
  });

  it('streams a zstd region beyond the keep limit and reads the same samples', () => {
    const bytes = readFileSync(vector('s20_random_mix_zstd.bin'));
    const kept = ProfileReader.fromBuffer(bytes);
    const streamed = ProfileReader.fromBuffer(bytes, { keepDecompressedLimit: 0, tuning: { zstdChunk: 1000 } });
    const a = [...kept.samples()];
    const b = [...streamed.samples()];
    expect(b.length).toBe(a.length);
    expect(b).toEqual(a);
  });

  it('replays again, and refuses after close()', () => {
    const reader = ProfileReader.open(vector('s02_threads_interleaved_zstd.bin'));
    const count = (): number => {
      let n = 0;
      reader.replay({ collect: (_s, ts) => (n += ts.length) });
      return n;
    };
    const first = count();
    expect(count()).toBe(first);
    expect(reader.stats?.totalSamples).toBe(first);
    reader.close();
    expect(thrown(() => count()).code).toBe('ERR_TACHYON_READER_CLOSED');
    expect(thrown(() => [...reader.samples()]).code).toBe('ERR_TACHYON_READER_CLOSED');
  });

  it('close() inside collect() stops the replay at that call with ERR_TACHYON_READER_CLOSED (issue 38)', () => {
    // Was: the native decoder failed at its next batch, the JS one replayed to the end and returned.
    const dir = mkdtempSync(path.join(tmpdir(), 'profpack-close-in-collect-'));
    const files = [vector('s02_threads_interleaved_zstd.bin'), vector('s01_single_thread_none.bin')];
    for (const formatVersion of [1, 2] as const) {
      const file = path.join(dir, `v${formatVersion}.tach`);
      const w = new profpack.ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: 1000n, formatVersion });
      const f = w.internFrame({ filename: 'a.js', funcname: 'f' });
      const g = w.internFrame({ filename: 'a.js', funcname: 'g' });
      for (let i = 0; i < 3000; i++) w.writeStack(1n, 0, BigInt(1001 + i * 1000), 0, i % 3 ? [f] : [f, g]);
      w.finalize();
      files.push(file);
    }
    for (const file of files) {
      for (const timestamps of ['array', 'typed'] as const) {
        const reader = ProfileReader.open(file);
        let calls = 0;
        const collect = (): void => {
          if (++calls === 2) reader.close();
        };
        const err = thrown(() =>
          timestamps === 'typed' ? reader.replay({ collect }, { timestamps }) : reader.replay({ collect }),
        );
        expect(err.code, `${file} ${timestamps}`).toBe('ERR_TACHYON_READER_CLOSED');
        expect(calls, `${file} ${timestamps}`).toBe(2);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("collect() gets CPython's shape: one interpreter, one thread, resolved frames, a list of timestamps", () => {
    const reader = ProfileReader.open(vector('s01_single_thread_none.bin'));
    const { collector, calls } = recordCalls();
    reader.replay(collector);
    expect(calls.length).toBe(8); // 9 samples: the REPEAT of two with one status is one call
    expect(calls[0]).toEqual({ interpreterId: 0, threadId: 4242n, status: 0x23, funcs: ['main'], ts: [1001000n] });
    expect(calls[3]!.ts).toEqual([1004000n, 1005000n]);
    expect(calls[3]!.funcs).toEqual(['parse', 'load', 'main']);
    reader.close();
  });

  it('an unreadable path is ERR_TACHYON_IO', () => {
    expect(thrown(() => ProfileReader.open(sharedPath('no-such-dir', 'x.bin'))).code).toBe('ERR_TACHYON_IO');
  });
});
