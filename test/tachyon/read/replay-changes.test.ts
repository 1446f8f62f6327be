/**
 * Replay and the file under it (issue 29): changes that keep the bytes the
 * reader reads (an append, chmod, rename, unlink, a file renamed over the
 * path, a rewrite with the same bytes) do not stop a replay; a change of
 * those bytes (a rewrite in place, a truncation) still does, with
 * ERR_TACHYON_FILE_CHANGED. Both backends, both compressions.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProfpackError } from '../../../lib/errors';
import { ProfileReader, ProfileWriter } from '../../../lib/tachyon/index';
import { testedBackends } from '../../support/backends';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-replay-changes-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const SAMPLES = 3000;

function profile(compression: 'zstd' | 'none'): string {
  const file = path.join(dir, `${serial++}.tach`);
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, compression });
  const f = Array.from({ length: 40 }, (_, i) => w.internFrame({ filename: 'a.py', funcname: `f${i}`, lineno: i + 1 }));
  for (let i = 0; i < SAMPLES; i++)
    w.writeStack(1 + (i % 5), 0, 1000 + i * 1000, 0, [f[i % 40]!, f[(i * 7) % 40]!, f[(i * 3) % 40]!]);
  w.finalize();
  return file;
}

/** Opens, applies `change`, replays: the sample count, or the error code. */
function replayAfter(file: string, which: 'native' | 'js', change: (file: string) => void): number | string {
  const reader = ProfileReader.open(file, { backend: which });
  try {
    change(file);
    let samples = 0;
    reader.replay({ collect: (_s, timestamps) => (samples += timestamps.length) });
    return samples;
  } catch (err) {
    return isProfpackError(err) ? err.code : `not coded: ${String(err)}`;
  } finally {
    reader.close();
  }
}

/** Moves the file's mtime (a rewrite within one timestamp tick is not seen: docs/reliability.md). */
const touch = (file: string) => fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));

const keeping: [string, (file: string) => void][] = [
  ['an append', (f) => fs.appendFileSync(f, Buffer.alloc(4096, 7))],
  ['chmod', (f) => fs.chmodSync(f, 0o600)],
  ['a rename', (f) => fs.renameSync(f, `${f}.moved`)],
  ['an unlink', (f) => fs.unlinkSync(f)],
  [
    'another file renamed over the path',
    (f) => {
      fs.writeFileSync(`${f}.new`, 'other');
      fs.renameSync(`${f}.new`, f);
    },
  ],
  [
    'a rewrite with the same bytes',
    (f) => {
      fs.writeFileSync(f, fs.readFileSync(f));
      touch(f);
    },
  ],
];

const altering: [string, (file: string) => void][] = [
  [
    'a rewrite in place of other bytes, same size',
    (f) => {
      const bytes = fs.readFileSync(f);
      bytes.fill(0x55, 64, bytes.length >> 1);
      fs.writeFileSync(f, bytes);
      touch(f);
    },
  ],
  ['a truncation', (f) => fs.truncateSync(f, 100)],
];

describe.each(testedBackends)('%s', (which) => {
  for (const compression of ['none', 'zstd'] as const) {
    for (const [name, change] of keeping) {
      it(`${compression}: ${name} after open does not stop the replay`, () => {
        expect(replayAfter(profile(compression), which, change)).toBe(SAMPLES);
      });
    }
    for (const [name, change] of altering) {
      it(`${compression}: ${name} after open is ERR_TACHYON_FILE_CHANGED`, () => {
        expect(replayAfter(profile(compression), which, change)).toBe('ERR_TACHYON_FILE_CHANGED');
      });
    }
  }
});
