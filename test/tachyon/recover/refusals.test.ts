// test tier: slow (recover on generated unfinished version-2 files, ~15 s)
/**
 * What recover() refuses rather than get wrong (issue 29): an unfinished
 * version-2 file without its journal (ERR_TACHYON_RECOVER_V2, where it used
 * to exit 0 with 0 samples), and a journal whose checksums hold but
 * whose tables do not fit its records (ERR_TACHYON_JOURNAL_CORRUPT, where it
 * used to write a file neither profpack nor CPython opens). Nothing is
 * written in either case. Both backends. And a zstd region too large to
 * hold (an unfinished file that inflates to 200 MiB) is recovered a piece
 * at a time within bounded memory.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeOf } from '../../support/refusals';
import { childJson } from '../../support/child';
import { encodeCheckpoint, encodeJournalHeader } from '../../../lib/tachyon/file/journal';
import { ProfileReader, ProfileWriter, recover } from '../../../lib/tachyon/index';
import { zstdRleBomb } from '../../fuzz/craft';
import { testedBackends } from '../../support/backends';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-recover-refusals-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const tmp = (name: string) => path.join(dir, `${serial++}-${name}`);

/** A writer's file as a kill leaves it after `flush()`: the bytes on disk and the journal (if any), copied while it is open. */
function unfinished(which: 'native' | 'js', formatVersion: 1 | 2, compression: 'zstd' | 'none'): string {
  const file = tmp(`v${formatVersion}-${compression}.tach`);
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which, formatVersion, compression });
  const f = [0, 1, 2].map((i) => w.internFrame({ filename: 'a.py', funcname: `f${i}`, lineno: i + 1 }));
  for (let i = 0; i < 5000; i++) w.writeStack(1 + (i % 3), 0, 1000 + i * 1000, 0, [f[i % 3]!, f[(i + 1) % 3]!]);
  w.flush();
  const dead = `${file}.dead`;
  fs.copyFileSync(file, dead);
  if (fs.existsSync(`${file}.journal`)) fs.copyFileSync(`${file}.journal`, `${dead}.journal`);
  w.close();
  return dead;
}

describe.each(testedBackends)('%s', (which) => {
  for (const compression of ['zstd', 'none'] as const) {
    it(`an unfinished version-2 file (${compression}) without its journal: ERR_TACHYON_RECOVER_V2, no output`, () => {
      const dead = unfinished(which, 2, compression);
      const out = tmp('out.tach');
      fs.renameSync(`${dead}.journal`, `${dead}.away`);
      expect(codeOf(() => recover(dead, out, { backend: which }))).toBe('ERR_TACHYON_RECOVER_V2');
      expect(fs.existsSync(out)).toBe(false);
      // With it, every sample up to the flush.
      fs.renameSync(`${dead}.away`, `${dead}.journal`);
      expect(recover(dead, out, { backend: which })).toMatchObject({ source: 'journal', samples: 5000 });
    });
  }

  it('an unfinished version-1 file still recovers', () => {
    const dead = unfinished(which, 1, 'zstd');
    const out = tmp('out.tach');
    expect(recover(dead, out, { backend: which })).toMatchObject({ source: 'journal', samples: 5000 });
    const reader = ProfileReader.open(out, { backend: which });
    expect(Number(reader.info.sampleCount)).toBe(5000);
    reader.close();
  });

  it('a journal with valid checksums whose tables do not fit the records is ERR_TACHYON_JOURNAL_CORRUPT, nothing written', () => {
    const dead = unfinished(which, 1, 'none');
    const records = fs.statSync(dead).size - 64;
    const header = encodeJournalHeader({
      compression: 'none',
      littleEndian: true,
      profilingConfig: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1000n,
    });
    const bad: { name: string; strings: Uint8Array; frames: Uint8Array; stringCount: number; frameCount: number }[] = [
      // Three frames declared, their bytes garbage (string indices far past the one string).
      {
        name: 'garbage frames',
        strings: Uint8Array.from([3, 0x61, 0x2e, 0x70]),
        frames: new Uint8Array(12).fill(0x7f),
        stringCount: 1,
        frameCount: 3,
      },
      // A string table whose declared count its bytes cannot hold.
      {
        name: 'short strings',
        strings: Uint8Array.from([9, 0x61]),
        frames: new Uint8Array(0),
        stringCount: 4,
        frameCount: 0,
      },
    ];
    for (const b of bad) {
      const checkpoint = encodeCheckpoint({
        regionBytes: records,
        stringCount: b.stringCount,
        frameCount: b.frameCount,
        newStrings: b.strings,
        newFrames: b.frames,
        pendingRepeats: new Uint8Array(0),
      });
      fs.writeFileSync(`${dead}.journal`, Buffer.concat([header, checkpoint]));
      const out = tmp('out.tach');
      expect(
        codeOf(() => recover(dead, out, { backend: which })),
        b.name,
      ).toBe('ERR_TACHYON_JOURNAL_CORRUPT');
      expect(fs.existsSync(out)).toBe(false);
    }
  });
});

describe('a region too large to hold is recovered a piece at a time', () => {
  // An unfinished zstd file: 64 zero header bytes, then 1,600 RLE blocks of zeros (200 MiB of empty
  // REPEAT records, the last one cut) from 6 KB. It used to be inflated whole, twice over.
  const dead = tmp('zero-bomb.tach');
  fs.writeFileSync(dead, Buffer.concat([Buffer.alloc(64), zstdRleBomb(1600)]));
  for (const which of testedBackends) {
    it(`${which}: recovered within peak RSS growth < 120 MiB (was twice the region), and the result reads`, () => {
      const out = tmp('zero-bomb-out.tach');
      const r = childJson<{
        ok: boolean;
        source: string;
        samples: number;
        droppedBytes: number;
        rssBeforeKb: number;
        peakRssKb: number;
      }>(
        [
          '--max-old-space-size=512',
          path.join(__dirname, '..', '..', 'fuzz', 'child', 'recover-profile.cjs'),
          dead,
          out,
          which,
        ],
        240_000,
      );
      console.log(`recover zero bomb ${which}: ${JSON.stringify(r)}`);
      expect(r).toMatchObject({ ok: true, source: 'records', samples: 0 });
      expect(r.droppedBytes).toBe((200 * 1024 * 1024) % 14);
      expect(r.peakRssKb - r.rssBeforeKb).toBeLessThan(120 * 1024);
      const reader = ProfileReader.open(out, { backend: which });
      expect(Number(reader.info.sampleCount)).toBe(0);
      reader.close();
    });
  }
});
