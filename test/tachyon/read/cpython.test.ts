// Differential test against CPython 3.15.2's own BinaryReader: random valid
// profiles and damaged variants of them (flipped bytes, cuts, edited header
// fields), read by both; verdict, stage, message, info, every sample with its
// collect() call number, and the progress_callback calls must agree. Fails
// (never skips) when CPython cannot be installed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { dumpProfile } from '../../../lib/tachyon/read/dump';
import { parseJsonExact, sharedPath } from '../../support/environment';
import { cpythonInterpreter } from '../../support/cpython.mjs';
import { choices, profileArb } from './reader-arbitraries';
import { encodeProfile } from './reader-encoder';

const toolsDir = sharedPath('tools', 'cpython315');

/** Damages a copy of `bytes` in one of several ways, chosen by `r`. */
function damage(bytes: Uint8Array, r: () => number): Uint8Array {
  const b = bytes.slice();
  const dv = new DataView(b.buffer);
  const le = b[0] === 0x48;
  switch (Math.floor(r() * 9)) {
    case 0: // one byte anywhere
      b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
      return b;
    case 1: // a byte of the sample region
      if (b.length > 64 + 32) b[64 + Math.floor(r() * (b.length - 96))] = Math.floor(r() * 256);
      return b;
    case 2: // cut short
      return b.slice(0, Math.floor(r() * b.length));
    case 3: // thread count
      dv.setUint32(36, Math.floor(r() * 3), le);
      return b;
    case 4: // sample count
      dv.setBigUint64(28, dv.getBigUint64(28, le) + BigInt(Math.floor(r() * 5)) - 2n, le);
      return b;
    case 5: // profiling config
      dv.setUint32(60, Math.floor(r() * 0x400), le);
      return b;
    case 6: // footer counts
      dv.setUint32(b.length - 32 + Math.floor(r() * 2) * 4, Math.floor(r() * 20), le);
      return b;
    case 7: // table offsets
      dv.setBigUint64(40 + Math.floor(r() * 2) * 8, BigInt(Math.floor(r() * (b.length + 10))), le);
      return b;
    default: // a stats block tail with a random size
      if (b.length >= 112) {
        b.set(new TextEncoder().encode('TACHSTAT'), b.length - 48);
        dv.setUint32(b.length - 40, 1, le);
        dv.setUint32(b.length - 36, 24 + Math.floor(r() * 60), le);
      }
      return b;
  }
}

interface CpythonResult {
  file: string;
  accepted: boolean;
  stage: string;
  error: { message: string } | null;
  info: unknown;
  samples: unknown[];
  samples_before_error?: number;
  progress: [number, number][];
}

describe('agreement with CPython 3.15.2 on random and damaged files', () => {
  let dir = '';
  const files: string[] = [];
  const cpython = new Map<string, CpythonResult>();

  beforeAll(() => {
    const python = cpythonInterpreter();
    dir = mkdtempSync(path.join(tmpdir(), 'profpack-reader-'));
    const specs = fc.sample(profileArb, {
      seed: Number(process.env.READER_DIFF_SEED ?? 20261123),
      numRuns: Number(process.env.READER_DIFF_RUNS ?? 40),
    });
    specs.forEach((spec, i) => {
      const bytes = encodeProfile({ ...spec, choice: choices(spec.seed), suffixPopQuirk: i % 2 === 0 });
      const r = choices(spec.seed ^ 0x5bd1e995);
      const variants = [bytes, damage(bytes, r), damage(bytes, r), damage(bytes, r)];
      variants.forEach((v, k) => {
        const file = path.join(dir, `p${i}_${k}.bin`);
        writeFileSync(file, v);
        files.push(file);
      });
    });
    const zeros = path.join(dir, 'never_finalized.bin');
    writeFileSync(zeros, new Uint8Array(64));
    files.push(zeros);
    const list = path.join(dir, 'list.txt');
    writeFileSync(list, files.join('\n'));
    const run = spawnSync(
      python,
      [path.join(__dirname, '..', '..', 'support', 'cpython_dump_many.py'), toolsDir, list],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      },
    );
    if (run.status !== 0) throw new Error(`CPython dump failed: ${run.stderr}`);
    const lines = run.stdout.trim().split('\n');
    expect(lines.length).toBe(files.length);
    lines.forEach((line, i) => cpython.set(files[i]!, parseJsonExact(line) as CpythonResult));
  });

  afterAll(() => {
    if (dir && !process.env.READER_DIFF_KEEP) rmSync(dir, { recursive: true, force: true });
    else if (dir) console.log(`kept ${dir}`);
  });

  it('every file: same verdict, stage, message, info, samples, collect() calls and progress calls', () => {
    expect(files.length).toBeGreaterThan(100);
    let rejected = 0;
    for (const file of files) {
      const want = cpython.get(file)!;
      const got = dumpProfile(file);
      const label = path.basename(file);
      expect({ label, accepted: got.accepted, stage: got.stage }).toEqual({
        label,
        accepted: want.accepted,
        stage: want.stage,
      });
      if (want.error) {
        rejected++;
        // Debian's libzstd also decodes legacy v0.5-v0.7 frames (magic 0xFD2FB525..27), zstd-napi's does not:
        // a damaged frame magic that happens to be a legacy one gets another zstd error name there.
        const legacyMagic = want.error.message === 'zstd decompression error: Unsupported frame parameter';
        const wanted = legacyMagic ? 'zstd decompression error: ' : want.error.message;
        expect(got.error!.message.startsWith(wanted), `${label}: ${got.error!.message} vs ${want.error.message}`).toBe(
          true,
        );
      }
      expect({ label, info: got.info }).toEqual({ label, info: want.info });
      expect({ label, samples: got.samples }).toEqual({ label, samples: want.samples });
      if (want.samples_before_error !== undefined)
        expect({ label, n: got.samples_before_error }).toEqual({ label, n: want.samples_before_error });
      if (want.stage !== 'open') {
        const progress: [number, number][] = [];
        const reader = ProfileReader.open(file);
        try {
          reader.replay({ collect() {} }, { onProgress: (cur, total) => progress.push([cur, total]) });
        } catch {
          // the dump above already compared the failure
        }
        reader.close();
        expect({ label, progress }).toEqual({ label, progress: want.progress.map(([c, t]) => [Number(c), Number(t)]) });
      }
    }
    // The damage must actually reach CPython's failure paths.
    if (process.env.READER_DIFF_VERBOSE)
      console.log(
        [...cpython.values()]
          .map((c) => c.error?.message.replace(/[0-9]+/g, 'N') ?? 'ok')
          .sort()
          .join('\n'),
      );
    expect(rejected).toBeGreaterThan(30);
  });
});
