// Reading files that change underneath, special files, fs failures, bad
// arguments, REPEAT runs and native memory at close(): the reading half of
// docs/reliability.md, on whichever backend PROFPACK_BACKEND selects.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { convert, openProfile } from '../../../lib/formats/index';
import { ErrorCode } from '../../../lib/errors';
import { closeInput, openInput, readInput } from '../../../lib/input';
import { MAX_TIMESTAMPS_PER_COLLECT, ProfileReader, ProfileWriter } from '../../../lib/tachyon/index';
import { nativeReader } from '../../../lib/tachyon/read/native';
import { craftTachyon, fullRecord, recordPrefix, STATUS } from '../../fuzz/craft';
import { itRefusesArguments, thrown } from '../../support/refusals';
import { repoRoot, sharedPath } from '../../support/environment';
import { childJson } from '../../support/child';
import { uleb128 } from '../../support/reference-leb128';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-read-reliability-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

/** A profile of `n` samples cycling through a few stacks (no long REPEAT runs); returns its path. */
function writeProfile(
  n: number,
  options: { file?: string; compression?: 'zstd' | 'none'; sameStack?: boolean } = {},
): string {
  const file = options.file ?? path.join(dir, `p${serial++}.bin`);
  const w = new ProfileWriter(file, {
    sampleIntervalUs: 1000,
    startTimeUs: 1_000_000,
    compression: options.compression ?? 'none',
  });
  const f = w.internFrame({ filename: 'app.py', funcname: 'main', lineno: 1 });
  const g = w.internFrame({ filename: 'app.py', funcname: 'work', lineno: 7 });
  const h = w.internFrame({ filename: 'lib.py', funcname: 'step', lineno: 3 });
  const stacks = [[g, f], [h, g, f], [f]];
  for (let i = 0; i < n; i++)
    w.writeStack(1, 0, 1_000_000 + i * 1000, 0, options.sameStack ? stacks[0]! : stacks[i % 3]!);
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

  it('a new ProfileWriter on the same path between open and replay', () => {
    const file = writeProfile(20_000, { compression: 'zstd' });
    const reader = ProfileReader.open(file);
    new ProfileWriter(file, { sampleIntervalUs: 1000 }).close();
    const err = thrown(() => reader.replay({ collect: () => {} }));
    expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    expect(err.details?.samplesDelivered).toBe(0);
    reader.close();
  });

  it('rewritten in place mid-replay: what came before is delivered, nothing after', () => {
    const file = writeProfile(400_000);
    age(file);
    const reader = ProfileReader.open(file);
    const size = fs.statSync(file).size;
    let n = 0;
    let rewritten = false;
    const err = thrown(() =>
      reader.replay({
        collect: (_s, ts) => {
          n += ts.length;
          if (!rewritten && n >= 1000) {
            rewritten = true;
            const fd = fs.openSync(file, 'r+');
            fs.writeSync(fd, Buffer.alloc(size - 64, 0xff), 0, size - 64, 64);
            fs.closeSync(fd);
          }
        },
      }),
    );
    expect(err.code).toBe(ErrorCode.TACHYON_FILE_CHANGED);
    // The bytes read changed (issue 29: a change is judged by the bytes, not the timestamps alone).
    expect(err.message).toContain('(content)');
    expect(err.details?.samplesDelivered).toBe(n);
    expect(n).toBeLessThan(400_000);
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
        const out = {
          events: new Uint32Array(5 * 4096),
          timestamps: new BigUint64Array(4096),
          nodes: new Uint32Array(2 * 4096),
          result: new Float64Array(8),
        };
        const decoder = native.createDecoder(
          true,
          0n,
          1,
          size - 64,
          out.events,
          out.timestamps,
          out.nodes,
          out.result,
          1 << 20,
        );
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

describe('fs failures are ProfpackErrors with the path and the OS code', () => {
  it('a missing file, from every entry point', () => {
    const missing = path.join(dir, 'no-such.bin');
    const open = thrown(() => ProfileReader.open(missing));
    expect(open.code).toBe(ErrorCode.TACHYON_IO);
    expect(open.details).toMatchObject({ path: missing, osCode: 'ENOENT', syscall: 'open' });
    for (const fn of [() => openProfile(missing), () => convert(missing, path.join(dir, 'x.pprof'))]) {
      const err = thrown(fn);
      expect(err.code).toBe(ErrorCode.IO);
      expect(err.details).toMatchObject({ path: missing, osCode: 'ENOENT' });
      expect(err.message).toBe(`cannot open ${missing}: no such file or directory (ENOENT)`);
    }
  });

  it('an output that cannot be written (a directory, a missing directory, a full device)', () => {
    const input = writeProfile(100);
    const cases: [string, string][] = [
      [path.join(dir, 'missing-dir', 'out.pprof'), 'ENOENT'],
      [dir, 'EISDIR'],
      ['/dev/full', 'ENOSPC'],
    ];
    for (const [output, osCode] of cases) {
      const err = thrown(() => convert(input, output, { to: 'pprof' }));
      expect(err.code).toBe(ErrorCode.IO);
      expect(err.details).toMatchObject({ path: output, osCode });
      expect(err.message.startsWith(`cannot write ${output}: `)).toBe(true);
    }
  });

  it('a directory and a character device are refused at open, before any read', () => {
    for (const special of [dir, '/dev/zero', '/dev/null']) {
      for (const fn of [
        () => ProfileReader.open(special),
        () => openProfile(special),
        () => convert(special, path.join(dir, 'y.pprof')),
      ]) {
        const err = thrown(fn);
        expect(err.code).toBe(ErrorCode.NOT_REGULAR_FILE);
        expect(err.details?.path).toBe(special);
      }
    }
    expect(thrown(() => ProfileReader.open('/dev/zero')).message).toBe(
      '/dev/zero is a character device, not a regular file',
    );
    expect(thrown(() => ProfileReader.open(dir)).message).toBe(`${dir} is a directory, not a regular file`);
  });

  it('a socket is refused, not an ENXIO', async () => {
    const sock = path.join(dir, `s${serial++}.sock`);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      for (const fn of [() => ProfileReader.open(sock), () => openProfile(sock)]) {
        const err = thrown(fn);
        expect(err.code).toBe(ErrorCode.NOT_REGULAR_FILE);
        expect(err.details?.kind).toBe('socket');
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a FIFO is refused without blocking (checked in a child process: a blocking open would hang it)', () => {
    const fifo = path.join(dir, `f${serial++}.fifo`);
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const { ProfileReader } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'tachyon', 'index.js'))});
         const { openProfile } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'formats', 'index.js'))});
         const codes = [];
         for (const fn of [() => ProfileReader.open(process.argv[1]), () => openProfile(process.argv[1])]) {
           try { fn(); codes.push('opened'); } catch (e) { codes.push(e.code + ':' + (e.details && e.details.kind)); }
         }
         console.log(JSON.stringify(codes));`,
        fifo,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.signal).toBeNull();
    expect(JSON.parse(child.stdout)).toEqual(['ERR_NOT_REGULAR_FILE:FIFO', 'ERR_NOT_REGULAR_FILE:FIFO']);
  });
});

describe('descriptors', () => {
  it('a reader dropped without close() gives its descriptor back when collected', () => {
    const file = writeProfile(1000);
    const child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '-e',
        `const fs = require('node:fs');
         const { ProfileReader } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'tachyon', 'index.js'))});
         const fds = () => fs.readdirSync('/proc/self/fd').length;
         const before = fds();
         (() => { for (let i = 0; i < 200; i++) ProfileReader.open(process.argv[1]).replay({ collect() {} }); })();
         const open = fds() - before;
         gc();
         setTimeout(() => { gc(); setTimeout(() => console.log(JSON.stringify({ open, after: fds() - before })), 50); }, 50);`,
        file,
      ],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env } },
    );
    expect(child.stderr).toBe('');
    const { open, after } = JSON.parse(child.stdout) as { open: number; after: number };
    expect(open).toBeGreaterThanOrEqual(200);
    expect(after).toBeLessThan(10);
  });
});

describe('descriptors of refused files', () => {
  it('a file refused at open is closed once: a descriptor number reused afterwards stays open through GC', () => {
    const child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '-e',
        `const fs = require('node:fs');
         const { ProfileReader } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'tachyon', 'index.js'))});
         for (let i = 0; i < 200; i++) { try { ProfileReader.open(process.argv[1]); } catch (e) { if (e.code !== 'ERR_TACHYON_BAD_MAGIC') throw e; } }
         const mine = Array.from({ length: 50 }, () => fs.openSync(process.argv[1], 'r'));
         gc();
         setTimeout(() => { gc(); setTimeout(() => {
           let open = 0;
           for (const fd of mine) { try { fs.fstatSync(fd); open++; } catch {} }
           console.log(open);
         }, 50); }, 50);`,
        sharedPath('vectors', 'tachyon', 'e01_bad_magic.bin'),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('50');
  });
});

describe('arguments are checked alike on both backends', () => {
  const bytes = fs.readFileSync(sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin'));
  const cases: [string, () => unknown, string][] = [
    [
      'fromBuffer(null)',
      () => ProfileReader.fromBuffer(null as unknown as Uint8Array),
      'fromBuffer(bytes): bytes must be a Uint8Array (wrap an ArrayBuffer in new Uint8Array(buffer))',
    ],
    [
      'fromBuffer(ArrayBuffer)',
      () => ProfileReader.fromBuffer(bytes.buffer as unknown as Uint8Array),
      'fromBuffer(bytes): bytes must be a Uint8Array (wrap an ArrayBuffer in new Uint8Array(buffer))',
    ],
    [
      'maxDecompressedSize: NaN',
      () => ProfileReader.fromBuffer(bytes, { maxDecompressedSize: NaN }),
      'ReaderOptions.maxDecompressedSize must be a non-negative safe integer, not NaN',
    ],
    [
      'maxDecompressedSize: Infinity',
      () => ProfileReader.fromBuffer(bytes, { maxDecompressedSize: Infinity }),
      'ReaderOptions.maxDecompressedSize must be a non-negative safe integer, not Infinity',
    ],
    [
      'maxDecompressedSize: -1',
      () =>
        ProfileReader.open(sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin'), { maxDecompressedSize: -1 }),
      'ReaderOptions.maxDecompressedSize must be a non-negative safe integer, not -1',
    ],
    [
      "backend: 'gpu'",
      () => ProfileReader.fromBuffer(bytes, { backend: 'gpu' as 'js' }),
      'ReaderOptions.backend must be "native" or "js", not "gpu"',
    ],
    [
      'replay(null)',
      () => ProfileReader.fromBuffer(bytes).replay(null as unknown as never),
      'replay(collector): collector must be an object with a collect(stackFrames, timestampsUs) method',
    ],
    [
      'replay({})',
      () => ProfileReader.fromBuffer(bytes).replay({} as never),
      'replay(collector): collector must be an object with a collect(stackFrames, timestampsUs) method',
    ],
    [
      'convert maxSamples: NaN',
      () =>
        convert(sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin'), path.join(dir, 'z.pprof'), {
          maxSamples: NaN,
        }),
      'maxSamples must be a non-negative safe integer, not NaN',
    ],
  ];
  itRefusesArguments(cases);
});

describe('bounded memory', () => {
  /** A FULL record then one REPEAT record of `run` samples (2 bytes each), as a file could declare 20 M in 40 MB (a few KB with zstd). */
  function repeatFile(run: number): string {
    const entries = new Uint8Array(2 * run);
    for (let k = 0; k < run; k++) entries.set([0x01, STATUS], 2 * k);
    const region = Uint8Array.from([...fullRecord(7n, [0, 1]), ...recordPrefix(7n, 0, 0), ...uleb128(run), ...entries]);
    const file = path.join(dir, `repeat${serial++}.bin`);
    fs.writeFileSync(file, craftTachyon({ region, sampleCount: BigInt(run + 1) }));
    return file;
  }

  function collectSizes(file: string): number[] {
    const reader = ProfileReader.open(file);
    const sizes: number[] = [];
    let last = -1n;
    reader.replay({
      collect: (_stackFrames, ts) => {
        sizes.push(ts.length);
        for (const t of ts) {
          if (t !== last + 1n && last !== -1n) throw new Error(`timestamp ${t} after ${last}`);
          last = t;
        }
      },
    });
    reader.close();
    return sizes;
  }

  it(`a long REPEAT run reaches collect() in batches of at most ${MAX_TIMESTAMPS_PER_COLLECT} timestamps, in order`, () => {
    const M = MAX_TIMESTAMPS_PER_COLLECT;
    expect(collectSizes(repeatFile(200_000))).toEqual([1, M, M, M, 200_000 - 3 * M]);
  });

  it("a run that fits keeps CPython's one collect() per run", () => {
    expect(collectSizes(repeatFile(MAX_TIMESTAMPS_PER_COLLECT))).toEqual([1, MAX_TIMESTAMPS_PER_COLLECT]);
    expect(collectSizes(repeatFile(1000))).toEqual([1, 1000]);
  });

  it('1,000 synchronous open/replay/close lifetimes: RSS grows by at most 50 MB (close() frees native memory)', () => {
    const file = path.join(dir, `loop${serial++}.bin`);
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000, compression: 'none' });
    const frames: number[] = [];
    for (let i = 0; i < 200; i++) frames.push(w.internFrame({ filename: 'a.py', funcname: `f${i}`, lineno: i }));
    for (let i = 0; i < 20_000; i++)
      w.writeStack(1 + (i % 4), 0, 1000 + i, 0, [frames[i % 200]!, frames[(i * 7) % 200]!, frames[(i * 13) % 200]!]);
    w.finalize();
    // In a child process of its own (test/tachyon/child/reader-lifetimes.cjs): inside the
    // test worker, other tests' garbage and a parallel worker's load moved RSS by 166 MB.
    const script = path.join(__dirname, '..', 'child', 'reader-lifetimes.cjs');
    const r = childJson<{
      done: number;
      rssGrowth: number;
      heapUsedGrowth: number;
      externalGrowth: number;
    }>(['--expose-gc', script, backend.name, '1000', file], 240_000);
    expect(r.done).toBe(1000);
    // RSS outside V8's heap (native memory), and V8's heap in use: each at most 50 MB.
    expect(r.rssGrowth / 1e6).toBeLessThan(50);
    expect(r.heapUsedGrowth / 1e6).toBeLessThan(50);
    expect(r.externalGrowth / 1e6).toBeLessThan(50);
  });
});
