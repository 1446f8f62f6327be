/**
 * Real CPython 3.15.2 and ProfileWriter's version 2: it refuses a version-2
 * file at open, and reads a downgraded one to exactly the samples our reader
 * gets from the version-2 file. The downgraded file is also byte-identical
 * to what ProfileWriter writes as version 1 from the same input. Profiles
 * come from writer-profiles' generator (many threads and interpreters, empty
 * and 300-deep stacks, u64 extremes, timestamps that go backwards). Fails,
 * never skips, when CPython cannot be found or installed.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dumpProfile } from '../../lib/tachyon/index';
import { downgrade } from '../../lib/tachyon/downgrade';
import { cpythonBeforeTests, cpythonDumps, type CPythonDump } from '../support/cpython-dump';
import { materialize, profileArb, writeWithProfpack, type ProfileSpec } from '../support/writer-profiles';
import { scratchDir } from '../support/scratch-dir';
import { testedBackends } from '../support/backends';

const dir = scratchDir('profpack-v2-cpython-');

cpythonBeforeTests();

type PerThread = Map<string, { timestamp: bigint; status: number; frames: unknown[] }[]>;

/**
 * A dump's samples per thread (file order interleaves threads differently in versions 1 and 2), each stack's
 * innermost `cap` frames: version 2 keeps the 300-deep stacks whole, downgrade keeps version 1's 256.
 */
function perThread(samples: CPythonDump['samples'], cap = Infinity): PerThread {
  const out: PerThread = new Map();
  for (const s of samples) {
    const key = `${BigInt(s.thread_id)}/${s.interpreter_id}`;
    if (!out.has(key)) out.set(key, []);
    out.get(key)!.push({ timestamp: BigInt(s.timestamp_us), status: s.status, frames: s.frames.slice(0, cap) });
  }
  return out;
}

describe('CPython 3.15.2 and ProfileWriter version 2', () => {
  it('refuses version 2 at open, and reads the downgraded file to the same samples', () => {
    const seed = Number(process.env.PROFPACK_SEED ?? Date.now() % 2 ** 31);
    const specs: ProfileSpec[] = fc.sample(profileArb, { numRuns: 30, seed });
    const cases = specs.map((spec, i) => {
      const coding = i % 2 ? 'predict' : 'stacktable';
      const writerBackend = testedBackends[i % testedBackends.length]!;
      const calls = materialize(spec);
      const v2 = path.join(dir, `p${i}.v2.bin`);
      const direct = path.join(dir, `p${i}.v1.bin`);
      const down = path.join(dir, `p${i}.down.bin`);
      writeWithProfpack(spec, calls, v2, writerBackend, { formatVersion: 2, stackCoding: coding }).finalize();
      writeWithProfpack(spec, calls, direct, writerBackend).finalize();
      downgrade(v2, down, { compression: spec.compression, backend: writerBackend });
      return { name: `p${i} (${coding}, ${writerBackend} writer, fast-check seed ${seed})`, v2, direct, down };
    });
    const dumps = cpythonDumps(cases.flatMap((c) => [c.down, c.v2]));
    for (const c of cases) {
      // The same bytes CPython's own writer produces for this input (write/vectors and write/cpython hold ProfileWriter to that).
      expect(
        readFileSync(c.down).equals(readFileSync(c.direct)),
        `${c.name}: downgraded file differs from the direct version-1 file`,
      ).toBe(true);
      const refused = dumps.get(path.basename(c.v2))!;
      expect(refused.accepted, c.name).toBe(false);
      expect(refused.stage, c.name).toBe('open');
      expect(refused.error?.message, c.name).toMatch(
        /format version 2\), but this is Python 3\.15\.2 \(format version 1\)/,
      );
      const read = dumps.get(path.basename(c.down))!;
      expect(read.error, c.name).toBeNull();
      expect(read.accepted, c.name).toBe(true);
      // Ours: the version-2 file as `profpack dump --json` reads it.
      expect(perThread(read.samples), c.name).toEqual(perThread(dumpProfile(c.v2).samples, 256));
    }
  }, 180_000);
});
