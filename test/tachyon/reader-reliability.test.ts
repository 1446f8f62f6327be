// Reading files that change underneath, special files, fs failures, bad
// arguments, REPEAT runs and native memory at close(): the reading half of
// docs/reliability.md, on whichever backend PROFPACK_BACKEND selects.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { convert, openProfile } from '../../lib/convert/convert';
import { ErrorCode } from '../../lib/errors';
import { closeInput, openInput, readInput } from '../../lib/input';
import { MAX_TIMESTAMPS_PER_COLLECT, ProfileReader } from '../../lib/tachyon/reader';
import { nativeReader } from '../../lib/tachyon/reader-native';
import { ProfileWriter } from '../../lib/tachyon/writer';
import { thrown } from '../helpers';
import { repoRoot, sharedPath } from '../shared';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-read-reliability-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

/** A profile of `n` samples cycling through a few stacks (no long REPEAT runs); returns its path. */
function writeProfile(n: number, options: { file?: string; compression?: 'zstd' | 'none'; sameStack?: boolean } = {}): string {
  const file = options.file ?? path.join(dir, `p${serial++}.bin`);
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000, compression: options.compression ?? 'none' });
  const f = w.internFrame({ filename: 'app.py', funcname: 'main', lineno: 1 });
  const g = w.internFrame({ filename: 'app.py', funcname: 'work', lineno: 7 });
  const h = w.internFrame({ filename: 'lib.py', funcname: 'step', lineno: 3 });
  const stacks = [[g, f], [h, g, f], [f]];
  for (let i = 0; i < n; i++) w.writeStack(1, 0, 1_000_000 + i * 1000, 0, options.sameStack ? stacks[0]! : stacks[i % 3]!);
  w.finalize();
  return file;
}

/** Sets a file's times an hour back, so that a rewrite within the kernel's timestamp tick still moves mtime. */
function age(file: string): void {
  const past = new Date(Date.now() - 3_600_000);
  fs.utimesSync(file, past, past);
}

describe('a file that changes after open', () => {
  it('truncated between open and replay: ERR_TACHYON_FILE_CHANGED, nothing delivered', () => {
    const file = writeProfile(50_000);
    const reader = ProfileReader.open(file);
    fs.truncateSync(file, 4096);
    let n = 0;
    const err = thrown(() => reader.replay({ collect: (_s, ts) => (n += ts.length) }));
    expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    expect(err.details?.samplesDelivered).toBe(0);
    expect(n).toBe(0);
    reader.close();
  });

  it('truncated mid-replay: the samples delivered so far are kept and counted', () => {
    const file = writeProfile(400_000);
    const reader = ProfileReader.open(file);
    let n = 0;
    let cut = false;
    const err = thrown(() =>
      reader.replay({
        collect: (_s, ts) => {
          n += ts.length;
          if (!cut && n >= 1000) {
            cut = true;
            fs.truncateSync(file, 8192);
          }
        },
      }),
    );
    expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    expect(n).toBeGreaterThanOrEqual(1000);
    expect(n).toBeLessThan(400_000);
    expect(err.details?.samplesDelivered).toBe(n);
    expect(err.message).toContain(file);
    reader.close();
  });

  it('rewritten in place with other bytes of the same size: refused, never half replayed', () => {
    const file = writeProfile(30_000);
    const other = writeProfile(30_000, { sameStack: true });
    expect(fs.statSync(other).size).not.toBe(0);
    age(file);
    const reader = ProfileReader.open(file);
    const bytes = fs.readFileSync(other);
    const original = fs.readFileSync(file);
    // Same length, different content: only the timestamps can tell.
    const rewritten = Buffer.alloc(original.length);
    bytes.copy(rewritten, 0, 0, Math.min(bytes.length, original.length));
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, rewritten, 0, rewritten.length, 0);
    fs.closeSync(fd);
    const err = thrown(() => [...reader.samples()]);
    expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    expect(err.details?.samplesDelivered).toBe(0);
    reader.close();
  });

  it('a new ProfileWriter on the same path (rotation) while samples() runs', () => {
    const file = writeProfile(300_000);
    const reader = ProfileReader.open(file);
    let n = 0;
    const err = thrown(() => {
      for (const _ of reader.samples()) {
        if (++n === 500) new ProfileWriter(file, { sampleIntervalUs: 1000 }).close();
      }
    });
    expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    expect(err.details?.samplesDelivered).toBe(n);
    expect(n).toBeLessThan(300_000);
    reader.close();
  });

  it('an unchanged file replays whole, twice, with the same counts', () => {
    const file = writeProfile(100_000, { compression: 'zstd' });
    const reader = ProfileReader.open(file);
    let a = 0;
    let b = 0;
    reader.replay({ collect: (_s, ts) => (a += ts.length) });
    reader.replay({ collect: (_s, ts) => (b += ts.length) });
    expect([a, b]).toEqual([100_000, 100_000]);
    reader.close();
  });

  it('a read past the shrunk end is a coded error, not a signal (native: SIGBUS caught; JS: short read)', () => {
    const file = writeProfile(200_000);
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r');
    try {
      if (backend.name === 'native') {
        const native = nativeReader()!;
        const mapped = native.openFile(fd, size, file);
        expect(mapped.mapped).toBe(true);
        fs.truncateSync(file, 100);
        expect(thrown(() => native.readRange(mapped, 0, size)).code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
        // The decoder reading mapped bytes in place takes the same path (pages past the new end fault).
        const out = { events: new Uint32Array(5 * 4096), timestamps: new BigUint64Array(4096), nodes: new Uint32Array(2 * 4096), result: new Float64Array(8) };
        const decoder = native.createDecoder(true, 0n, 1, size - 64, out.events, out.timestamps, out.nodes, out.result, 1 << 20);
        const failure = native.decodeFile(decoder, mapped, 16384, 0, size - 16384, true);
        expect(failure?.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
        expect(out.result[2]).toBe(0); // no events from that call
        native.closeFile(mapped);
      } else {
        // The JS twin reads the file at open: a file that shrinks between fstat and read is the same error.
        const input = openInput(file, ErrorCode.TACHYON_IO);
        fs.truncateSync(file, 100);
        const err = thrown(() => readInput(input));
        closeInput(input);
        expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
        expect(err.offset).toBe(100);
      }
    } finally {
      fs.closeSync(fd);
    }
  });
});
