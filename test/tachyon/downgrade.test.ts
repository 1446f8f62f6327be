/**
 * downgrade(in, out) and `profpack downgrade IN OUT`: a version-2 file
 * becomes a version-1 file with the same samples and the same frame table,
 * index for index; bad input is a ProfpackError (exit 2 and one line in the
 * CLI) and leaves no output behind.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../lib/cli/main';
import { ErrorCode } from '../../lib/errors';
import * as profpack from '../../lib/index';
import { HEADER_SIZE } from '../../lib/tachyon/format';
import { ProfileReader } from '../../lib/tachyon/read/reader';
import { ProfileWriter, type FrameSpec } from '../../lib/tachyon/write/index';
import { downgrade } from '../../lib/tachyon/downgrade';
import { thrown } from '../support/refusals';
import { testedBackends } from '../support/backends';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-downgrade-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());
let n = 0;
const tmp = (name: string): string => path.join(dir, `${n++}-${name}`);
function run(...args: string[]): { status: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { status: main(['node', 'profpack', ...args]), stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

/** Frames CPython stores identically (end −1 or end = start; any end when the start is −1) but keeps apart. */
const LOOKALIKES: FrameSpec[] = [
  { filename: 'a.py', funcname: 'f', lineno: 5, endLineno: 5, column: 2, endColumn: 2 },
  { filename: 'a.py', funcname: 'f', lineno: 5, endLineno: -1, column: 2, endColumn: 2 },
  { filename: 'a.py', funcname: 'f', lineno: 5, endLineno: 5, column: 2, endColumn: -1 },
  { filename: 'a.py', funcname: 'f', lineno: 5, endLineno: -1, column: 2, endColumn: -1 },
  { filename: 'a.py', funcname: 'g', lineno: -1, endLineno: -1 },
  { filename: 'a.py', funcname: 'g', lineno: -1, endLineno: 3 },
  { filename: 'a.py', funcname: 'g', lineno: -1, endLineno: 40 },
  { filename: 'b.py', funcname: 'h', lineno: 1, endLineno: 9, column: 0, endColumn: 7, opcode: 100 },
];

function writeV2(
  file: string,
  coding: 'predict' | 'stacktable',
  samples: { tid: bigint; ts: bigint; status: number; stack: number[] }[],
  compression: 'zstd' | 'none' = 'zstd',
): void {
  const w = new ProfileWriter(file, {
    sampleIntervalUs: 1000,
    startTimeUs: 10,
    formatVersion: 2,
    stackCoding: coding,
    compression,
    mode: 'gil',
    captureFeatures: 9,
  });
  for (const f of LOOKALIKES) w.internFrame(f);
  for (const s of samples) w.writeStack(s.tid, 0, s.ts, s.status, s.stack);
  w.setStats(2.5, 400, 1.5, 7);
  w.finalize();
}

const read = (file: string, b?: 'native' | 'js') => {
  const r = ProfileReader.open(file, { backend: b });
  const out = {
    info: r.info,
    strings: r.strings,
    frames: r.frames,
    samples: [...r.samples()].map((s) => ({ ...s, stack: [...s.stack] })),
  };
  r.close();
  return out;
};

describe('downgrade()', () => {
  it('is exported from the package', () => {
    expect(profpack.downgrade).toBe(downgrade);
  });

  for (const coding of ['predict', 'stacktable'] as const) {
    it(`gives version 1 with the same samples, strings and frame table, lookalike frames kept apart (${coding})`, () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              tid: fc.bigInt({ min: 1n, max: 4n }),
              step: fc.bigInt({ min: 0n, max: 5000n }),
              status: fc.nat({ max: 255 }),
              stack: fc.array(fc.nat({ max: LOOKALIKES.length - 1 }), { maxLength: 300 }),
            }),
            { maxLength: 40 },
          ),
          fc.constantFrom<'zstd' | 'none'>('zstd', 'none'),
          fc.constantFrom(...testedBackends),
          (raw, compression, b) => {
            let ts = 10n;
            const samples = raw.map((s) => ({ ...s, ts: (ts += s.step) }));
            const v2 = tmp('in.bin');
            const v1 = tmp('out.bin');
            writeV2(v2, coding, samples, compression);
            const result = downgrade(v2, v1, { compression, backend: b });
            const bytes = readFileSync(v1).length;
            expect(result).toEqual({
              samples: samples.length,
              bytes,
              lost: [],
              heapEventsDropped: 0,
              sampleTypes: ['samples/count'],
            });
            const before = read(v2, b);
            const after = read(v1, b);
            expect(after.info.version).toBe(1);
            expect(after.info.compressionType).toBe(compression === 'zstd' ? 1 : 0);
            const { version: _a, compressionType: _b, ...infoAfter } = after.info;
            const { version: _c, compressionType: _d, ...infoBefore } = before.info;
            expect(infoAfter).toEqual(infoBefore);
            expect(after.strings).toEqual(before.strings);
            expect(after.frames).toEqual(before.frames);
            expect(after.frames.length).toBe(LOOKALIKES.length);
            // Each thread's samples, in order, with the same frame indices.
            const perThread = (s: typeof before.samples) => {
              const m = new Map<bigint, typeof before.samples>();
              for (const x of s) m.set(x.threadId, [...(m.get(x.threadId) ?? []), x]);
              return m;
            };
            expect(perThread(after.samples)).toEqual(perThread(before.samples));
          },
        ),
        { numRuns: 40 },
      );
    });
  }

  it('refuses a version-1 input, an unreadable path and a corrupted version-2 file, leaving no output', () => {
    const v1 = tmp('v1.bin');
    const w = new ProfileWriter(v1, { sampleIntervalUs: 1 });
    w.finalize();
    const out = tmp('out.bin');
    const notV2 = thrown(() => downgrade(v1, out));
    expect(notV2.code).toBe(ErrorCode.V2_BAD_HEADER);
    expect(notV2.offset).toBe(4);
    expect(existsSync(out)).toBe(false);
    expect(thrown(() => downgrade(path.join(dir, 'missing.bin'), out)).code).toBe(ErrorCode.TACHYON_IO);
    expect(existsSync(out)).toBe(false);

    const v2 = tmp('v2.bin');
    writeV2(
      v2,
      'stacktable',
      Array.from({ length: 50 }, (_, i) => ({ tid: 1n, ts: BigInt(i * 1000), status: 0, stack: [i % 8, 7] })),
      'none',
    );
    const bytes = readFileSync(v2);
    const inFirstBlock = HEADER_SIZE + 30; // inside the first block's columns
    bytes[inFirstBlock] = bytes[inFirstBlock]! ^ 0xff;
    writeFileSync(v2, bytes);
    const err = thrown(() => downgrade(v2, out));
    expect(err.code).toMatch(/^ERR_V2_/);
    expect(typeof err.offset).toBe('number');
    expect(existsSync(out)).toBe(false);
  });
});

describe('profpack downgrade', () => {
  it('--help names the command and its arguments', () => {
    const top = run('--help');
    expect(top.status).toBe(0);
    expect(top.stdout).toMatch(/downgrade .*<in> \[out\]/);
    const help = run('downgrade', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/version 1/);
    expect(help.stdout).toMatch(/--compression/);
  });

  it('writes the version-1 file and says what it wrote', () => {
    const v2 = tmp('cli-in.bin');
    const v1 = tmp('cli-out.bin');
    writeV2(v2, 'predict', [
      { tid: 3n, ts: 1010n, status: 1, stack: [0, 7] },
      { tid: 3n, ts: 2010n, status: 1, stack: [0, 7] },
    ]);
    const { status, stdout, stderr } = run('downgrade', v2, v1, '--compression', 'none');
    expect([status, stderr]).toEqual([0, '']);
    expect(stdout).toBe(`${v1}: format version 1, 2 samples, ${readFileSync(v1).length} bytes\n`);
    // -o/--output, the spelling of every writing command, writes the same file.
    const viaFlag = tmp('cli-out-o.bin');
    expect(run('downgrade', v2, '-o', viaFlag, '--compression', 'none').status).toBe(0);
    expect(readFileSync(viaFlag)).toEqual(readFileSync(v1));
    expect(read(v1).info).toMatchObject({ version: 1, compressionType: 0, sampleCount: 2n });
  });

  it('bad input: exit 2 and one line with the code', () => {
    const v1 = tmp('cli-v1.bin');
    const w = new ProfileWriter(v1, { sampleIntervalUs: 1 });
    w.finalize();
    const notV2 = run('downgrade', v1, tmp('x.bin'));
    expect(notV2.status).toBe(2);
    expect(notV2.stderr).toMatch(/^profpack: ERR_V2_BAD_HEADER: .* is not a version-2 profile.*\n$/);
    expect(notV2.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    const missing = run('downgrade', path.join(dir, 'nope.bin'), tmp('x.bin'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^profpack: ERR_TACHYON_IO: .*nope\.bin.*\n$/);
    const usage = run('downgrade', v1);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toBe('profpack: ERR_INVALID_ARGUMENT: no output given\n');
    const twice = run('downgrade', v1, tmp('x.bin'), '-o', tmp('y.bin'));
    expect(twice.status).toBe(2);
    expect(twice.stderr).toMatch(/^profpack: ERR_INVALID_ARGUMENT: the output is given twice .*\n$/);
    const choice = run('downgrade', v1, tmp('x.bin'), '--compression', 'lz4');
    expect(choice.status).toBe(2);
    expect(choice.stderr).toMatch(/^profpack: ERR_USAGE: .*lz4.*\n$/);
  });

  it('info and dump read version-2 files too', () => {
    const v2 = tmp('info.bin');
    writeV2(v2, 'stacktable', [{ tid: 3n, ts: 1010n, status: 1, stack: [7] }]);
    const info = run('info', v2);
    expect(info.status).toBe(0);
    expect(info.stdout).toMatch(/format: +Tachyon version 2 \(stacktable stacks\)/);
    expect(info.stdout).toMatch(/samples: +1/);
  });
});

describe('downgrade of stacks deeper than version 1 keeps', () => {
  it('cuts them to the innermost 256 frames and says how many it cut, library and CLI', () => {
    for (const which of testedBackends) {
      const v2 = tmp('deep.v2.tach');
      const w = new ProfileWriter(v2, { sampleIntervalUs: 1000, formatVersion: 2, backend: which });
      const ids = Array.from({ length: 300 }, (_, i) =>
        w.internFrame({ filename: 'd.py', funcname: `f${i}`, lineno: 1 }),
      );
      w.writeStack(1, 0, 1000, 0, ids);
      w.writeStack(1, 0, 2000, 0, ids.slice(0, 10));
      w.finalize();
      const out = tmp('deep.v1.tach');
      const result = downgrade(v2, out, { backend: which });
      expect(result.lost).toEqual(["the outermost frames of 1 samples deeper than 256 frames (version 1's cap)"]);
      const r = ProfileReader.open(out);
      const stacks = [...r.samples()].map((s) => s.stack.map((f) => r.frames[f]!.funcname));
      r.close();
      expect(stacks).toEqual([ids.slice(0, 256).map((i) => `f${i}`), ids.slice(0, 10).map((i) => `f${i}`)]);
      const cli = run('downgrade', v2, tmp('deep-cli.v1.tach'));
      expect(cli.status).toBe(0);
      expect(cli.stderr).toContain('deeper than 256 frames');
    }
  });
});
