/**
 * Replay and the file under it (issue 29): changes that keep the bytes the
 * reader reads (an append, chmod, rename, unlink, a file renamed over the
 * path) do not stop a replay; a change of those bytes (a rewrite in place, a
 * truncation) still does, with ERR_TACHYON_FILE_CHANGED. Both backends, both
 * compressions. Open reads the header and footer, never the body again
 * (issue 39): a same-size rewrite is a change even with the same bytes.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProfpackError } from '../../../lib/errors';
import { ProfileReader, ProfileWriter } from '../../../lib/tachyon/index';
import { edgeHash, edgeHashOf } from '../../../lib/input';
import { nativeReader } from '../../../lib/tachyon/read/native';
import fc from 'fast-check';
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

/** The oracle: FNV-1a 64 in BigInt, byte by byte, of the head then the tail of `bytes`, each cut to it, never overlapping. */
function fnv1a64Edges(bytes: Uint8Array, head: number, tail: number): bigint {
  const first = Math.min(head, bytes.length);
  const from = bytes.length - Math.min(tail, bytes.length - first);
  let h = 0xcbf29ce484222325n;
  for (const b of [...bytes.subarray(0, first), ...bytes.subarray(from)])
    h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
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
  [
    // Only reading the whole body again could tell it is the same: open reads the header and footer (issue 39).
    'a rewrite with the same bytes',
    (f) => {
      fs.writeFileSync(f, fs.readFileSync(f));
      touch(f);
    },
  ],
  [
    'an append after a rewrite of the header',
    (f) => {
      const fd = fs.openSync(f, 'r+');
      fs.writeSync(fd, Buffer.from([0xee]), 0, 1, 20);
      fs.closeSync(fd);
      fs.appendFileSync(f, Buffer.alloc(4096, 7));
    },
  ],
  [
    'an append after a rewrite of the footer',
    (f) => {
      const fd = fs.openSync(f, 'r+');
      fs.writeSync(fd, Buffer.from([0xee]), 0, 1, fs.fstatSync(fd).size - 5);
      fs.closeSync(fd);
      fs.appendFileSync(f, Buffer.alloc(4096, 7));
    },
  ],
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

/** Bytes this process has read by read(2)/pread(2) so far (Linux), or null where /proc/self/io is missing. */
function bytesRead(): number | null {
  try {
    return Number(/^rchar: (\d+)$/m.exec(fs.readFileSync('/proc/self/io', 'latin1'))![1]);
  } catch {
    return null;
  }
}

describe('open reads O(header), not the file (issue 39)', () => {
  // Uncompressed, above the native reader's 256 KiB copy: open maps it and reads header, tables and footer.
  const big = path.join(dir, 'big.tach');
  const w = new ProfileWriter(big, { sampleIntervalUs: 1000, compression: 'none' });
  const f = Array.from({ length: 64 }, (_, i) => w.internFrame({ filename: 'b.py', funcname: `g${i}`, lineno: i + 1 }));
  for (let i = 0; i < 400_000; i++) w.writeStack(1, 0, 1000 + i * 1000, 0, [f[(i * 13) % 64]!, f[(i * 5) % 64]!]);
  w.finalize();
  const size = fs.statSync(big).size;

  it.each(testedBackends)('%s: bytes read by open', (which) => {
    const before = bytesRead();
    if (before === null) return;
    const reader = ProfileReader.open(big, { backend: which });
    const read = bytesRead()! - before;
    reader.close();
    expect(size).toBeGreaterThan(2 << 20);
    // The reading of /proc/self/io itself is a few hundred bytes; the JS twin reads the file once (it holds it all).
    if (which === 'native') expect(read).toBeLessThan(64 << 10);
    else expect(read).toBeLessThan(size + (64 << 10));
  });

  it.each(testedBackends)('%s: a file up to 256 KiB is read whole, not mapped; a larger one is mapped', (which) => {
    // Unmapping flushes the TLB of every CPU the process runs on: 21 % of a small file's open + replay + close.
    const maps = (file: string): boolean | null => {
      try {
        return fs.readFileSync('/proc/self/maps', 'latin1').includes(file);
      } catch {
        return null; // no /proc (not Linux)
      }
    };
    const small = profile('none');
    expect(fs.statSync(small).size).toBeLessThan(256 << 10);
    for (const [file, mapped] of [
      [small, false],
      [big, which === 'native'],
    ] as const) {
      const reader = ProfileReader.open(file, { backend: which });
      const seen = maps(file);
      let n = 0;
      reader.replay({ collect: (_s, ts) => (n += ts.length) });
      reader.close();
      if (seen !== null) expect(seen).toBe(mapped);
      expect(n).toBe(file === small ? SAMPLES : 400_000);
    }
  });

  it('the edge hash is FNV-1a 64 of header and footer, the same from both backends', () => {
    // Under PROFPACK_BACKEND=js the addon is not loaded: the JS twin is checked against the oracle alone.
    const native = nativeReader();
    const file = path.join(dir, 'edges.bin');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(100), fc.nat(100), (bytes, head, tail) => {
        fs.writeFileSync(file, bytes);
        const fd = fs.openSync(file, 'r');
        try {
          const js = edgeHash(fd, bytes.length, head, tail);
          if (native) expect(native.edgeHash(fd, bytes.length, head, tail)).toBe(js);
          expect(js).toBe(fnv1a64Edges(bytes, head, tail));
          // A file shorter than it is said to be: null on both.
          expect(edgeHash(fd, bytes.length + 1, head, tail + 1)).toBeNull();
          if (native) expect(native.edgeHash(fd, bytes.length + 1, head, tail + 1)).toBeNull();
        } finally {
          fs.closeSync(fd);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('the edge hash of bytes held (a file read whole at open) is FNV-1a 64 of the same edges', () => {
    // Open hashes the bytes it read; every later check hashes the file's edges by pread: the two must agree. The
    // 'an append' cases above see it end to end (an append moves mtime, so the check compares the two hashes).
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1200 }), fc.nat(1400), fc.nat(1400), (bytes, head, tail) => {
        expect(edgeHashOf(bytes, head, tail)).toBe(fnv1a64Edges(bytes, head, tail));
      }),
      { numRuns: 1000 },
    );
    // Long runs of one byte value beside the random arrays: 0xff drives the low half, and so its carry, highest.
    for (const fill of [0x00, 0x01, 0x80, 0xff]) {
      const bytes = new Uint8Array(513).fill(fill);
      expect(edgeHashOf(bytes, 64, 32)).toBe(fnv1a64Edges(bytes, 64, 32));
      expect(edgeHashOf(bytes, 513, 0)).toBe(fnv1a64Edges(bytes, 513, 0));
    }
  });
});
