/**
 * Round trips through profpack's own ProfileReader: fast-check profiles
 * written by ProfileWriter (both encoders) and read back (the process
 * backend) give every thread exactly the samples written; a writer closed
 * without finalize() leaves a file the reader calls not finalized.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { ErrorCode } from '../../../lib/errors';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { ProfileWriter } from '../../../lib/tachyon/write/index';
import { materialize, profileArb, readBack, writeWithProfpack, type ProfileSpec } from '../../support/writer-profiles';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-writer-roundtrip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function roundTrip(spec: ProfileSpec, encoder: 'native' | 'js', file: string): void {
  const calls = materialize(spec);
  const writer = writeWithProfpack({ ...spec }, calls, file, encoder);
  writer.finalize();
  const expected = new Map<string, unknown[]>();
  for (const call of calls) {
    for (const t of call.threads) {
      const key = `${t.threadId}/${t.interpreterId}`;
      if (!expected.has(key)) expected.set(key, []);
      expected
        .get(key)!
        .push([
          call.timestamp,
          Number(BigInt.asUintN(8, BigInt(t.status))),
          t.stack.slice(0, 256).map((i) => readBack(spec.frames[i]!)),
        ]);
    }
  }
  const reader = ProfileReader.open(file);
  try {
    expect(reader.info.threadCount).toBe(expected.size);
    const got = new Map<string, unknown[]>();
    for (const s of reader.samples()) {
      const key = `${s.threadId}/${s.interpreterId}`;
      if (!got.has(key)) got.set(key, []);
      got.get(key)!.push([s.timestampUs, s.status, s.stack.map((i) => ({ ...reader.frames[i]! }))]);
    }
    expect(got).toEqual(expected);
  } finally {
    reader.close();
  }
}

describe('ProfileWriter -> ProfileReader', () => {
  for (const encoder of backend.name === 'native' ? (['native', 'js'] as const) : (['js'] as const)) {
    it(`generated profiles written by the ${encoder} encoder read back exactly`, () => {
      const seed = Number(process.env.PROFPACK_SEED ?? Date.now() % 2 ** 31);
      fc.sample(profileArb, { numRuns: 40, seed }).forEach((spec, i) => {
        try {
          roundTrip(spec, encoder, path.join(dir, `${encoder}-${i}.bin`));
        } catch (err) {
          throw new Error(`profile ${i} (fast-check seed ${seed}): ${(err as Error).message}`, { cause: err });
        }
      });
    });
  }

  it('a writer closed without finalize() leaves a file the reader calls not finalized', () => {
    const file = path.join(dir, 'closed.bin');
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000 });
    w.writeSample(
      [
        {
          interpreterId: 0,
          threads: [{ threadId: 1, status: 0, frameInfo: [{ filename: 'a.py', funcname: 'f', location: null }] }],
        },
      ],
      5,
    );
    w.close();
    let code: string | undefined;
    try {
      ProfileReader.open(file).close();
    } catch (err) {
      code = (err as { code?: string }).code;
    }
    expect(code).toBe(ErrorCode.TACHYON_NOT_FINALIZED);
  });
});
