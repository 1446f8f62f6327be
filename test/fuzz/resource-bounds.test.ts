/**
 * Resource bounds of the Tachyon reader: a zstd bomb is refused without
 * exhausting memory (peak RSS of a child process, which owns nothing else),
 * the decompressed-size cap is an option, no count from the file drives an
 * allocation beyond what the file's size allows, and inputs that would loop a
 * naive reader end promptly. Every case runs on both backends where the
 * process has them.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { SLOWDOWN } from '../support/environment';
import { readHere, readInChild } from '../support/read-bounds';
import { craftTachyon, fullRecord, recordPrefix, STATUS, zstdEmptyFrame, zstdRleBomb } from './craft';
import { testedBackends } from '../support/backends';
import { uleb128 } from '../support/reference-leb128';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-bounds-');

const MiB = 1024 * 1024;
// Growth of peak RSS allowed while refusing a bomb: the reader streams zstd
// in 1 MiB chunks, so anything near the bomb's size means it buffered it.
const BOMB_RSS_BOUND_KB = 160 * 1024;

describe('zstd bomb', () => {
  // 9000 RLE blocks of 128 KiB: 1.1 GiB of zeros from 36 KB, past CPython's 1 GiB cap.
  const bomb = craftTachyon({ region: zstdRleBomb(9000), compression: 1 });
  const declared = craftTachyon({ region: zstdRleBomb(9000, 1n << 40n), compression: 1 });
  const bombFile = path.join(dir, 'bomb.bin');
  const declaredFile = path.join(dir, 'bomb-declared.bin');
  writeFileSync(bombFile, bomb);
  writeFileSync(declaredFile, declared);

  for (const which of testedBackends) {
    it(`${which}: refused at the 1 GiB default cap, peak RSS grows < ${BOMB_RSS_BOUND_KB / 1024} MiB`, () => {
      const r = readInChild(bombFile, which);
      expect(r).toMatchObject({ ok: false, name: 'ProfpackError', code: 'ERR_TACHYON_ZSTD_TOO_LARGE' });
      expect(r.peakRssKb - r.rssBeforeKb).toBeLessThan(BOMB_RSS_BOUND_KB);
    });
    it(`${which}: maxDecompressedSize caps the region`, () => {
      expect(readHere(bomb, which, { maxDecompressedSize: 64 * MiB }).code).toBe('ERR_TACHYON_ZSTD_TOO_LARGE');
      // 14 RLE blocks of 128 KiB of zeros: 1.75 MiB = 131 072 empty REPEAT
      // records (13-byte prefix of zeros, count 0), a valid region.
      const zeros = craftTachyon({ region: zstdRleBomb(14), compression: 1 });
      expect(readHere(zeros, which, { maxDecompressedSize: 1 * MiB }).code).toBe('ERR_TACHYON_ZSTD_TOO_LARGE');
      expect(readHere(zeros, which, { maxDecompressedSize: 4 * MiB })).toMatchObject({ code: 'ok', samples: 0 });
      expect(readHere(zeros, which)).toMatchObject({ code: 'ok', samples: 0 });
    });
  }
  it(`${backend.name}: a frame declaring 1 TiB of content is not trusted for an allocation`, () => {
    const r = readInChild(declaredFile, backend.name, 64 * MiB);
    expect(r).toMatchObject({ ok: false, name: 'ProfpackError', code: 'ERR_TACHYON_ZSTD_TOO_LARGE' });
    expect(r.peakRssKb - r.rssBeforeKb).toBeLessThan(BOMB_RSS_BOUND_KB);
  });
});

describe('counts from the file do not drive allocations or loops', () => {
  const oneSample = fullRecord(7n, [0, 1]);
  const cases: { name: string; bytes: Uint8Array; code: string }[] = [
    {
      name: 'REPEAT count 2^32-1 with two entries',
      bytes: craftTachyon({
        region: Uint8Array.from([
          ...oneSample,
          ...recordPrefix(7n, 0, 0),
          ...uleb128(0xffffffff),
          0x01,
          STATUS,
          0x01,
          STATUS,
        ]),
        sampleCount: 3n,
      }),
      code: 'ERR_TACHYON_RLE_COUNT',
    },
    {
      name: 'REPEAT count 2^64-1',
      bytes: craftTachyon({
        region: Uint8Array.from([...oneSample, ...recordPrefix(7n, 0, 0), ...uleb128((1n << 64n) - 1n), 0x01, STATUS]),
        sampleCount: 2n,
      }),
      // CPython reads the count as a u32 varint: a 10-byte one is malformed.
      code: 'ERR_TACHYON_RLE_COUNT_VARINT',
    },
    {
      name: 'FULL depth 2^32-1',
      bytes: craftTachyon({
        region: Uint8Array.from([...recordPrefix(7n, 0, 1), 0x01, STATUS, ...uleb128(0xffffffff), 0, 1]),
        sampleCount: 1n,
      }),
      code: 'ERR_TACHYON_STACK_DEPTH',
    },
    {
      name: 'POP_PUSH pop 2^32-1 (clamped), push 0',
      bytes: craftTachyon({
        region: Uint8Array.from([...oneSample, ...recordPrefix(7n, 0, 3), 0x01, STATUS, ...uleb128(0xffffffff), 0x00]),
        sampleCount: 2n,
      }),
      code: 'ok',
    },
    {
      name: 'thread count 2^32-1 in the header',
      bytes: craftTachyon({ region: Uint8Array.from(oneSample), threadCount: 0xffffffff, sampleCount: 1n }),
      code: 'ok',
    },
    {
      name: 'sample count 2^64-1 in the header',
      bytes: craftTachyon({ region: Uint8Array.from(oneSample), sampleCount: (1n << 64n) - 1n }),
      code: 'ERR_TACHYON_SAMPLE_COUNT_MISMATCH',
    },
    {
      name: 'string count 2^32-1 in the footer',
      bytes: craftTachyon({ region: Uint8Array.from(oneSample), sampleCount: 1n, stringCount: 0xffffffff }),
      code: 'ERR_TACHYON_STRING_COUNT',
    },
    {
      name: 'frame count 2^32-1 in the footer',
      bytes: craftTachyon({ region: Uint8Array.from(oneSample), sampleCount: 1n, frameCount: 0xffffffff }),
      code: 'ERR_TACHYON_FRAME_COUNT',
    },
    {
      // 60 000 REPEAT records of count 0: each consumes its 14 bytes and yields nothing.
      name: '60 000 empty REPEAT records',
      bytes: craftTachyon({
        region: Uint8Array.from([
          ...oneSample,
          ...Array.from({ length: 60_000 }, () => [...recordPrefix(7n, 0, 0), 0x00]).flat(),
        ]),
        sampleCount: 1n,
      }),
      code: 'ok',
    },
    {
      // 200 000 empty zstd frames: a decompressor loop waiting for output would spin here.
      name: '200 000 empty zstd frames as the sample region',
      bytes: craftTachyon({
        region: Uint8Array.from(Array.from({ length: 200_000 }, zstdEmptyFrame).flat()),
        compression: 1,
      }),
      code: 'ok',
    },
    {
      name: 'zstd frame cut after its header',
      bytes: craftTachyon({ region: Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]), compression: 1 }),
      code: 'ERR_TACHYON_ZSTD_TRUNCATED',
    },
  ];
  for (const which of testedBackends) {
    for (const c of cases) {
      it(`${which}: ${c.name} -> ${c.code}, promptly`, () => {
        const r = readHere(c.bytes, which);
        expect(r.code).toBe(c.code);
        expect(r.cpuMs).toBeLessThan(5000 * SLOWDOWN);
      });
    }
  }
});
