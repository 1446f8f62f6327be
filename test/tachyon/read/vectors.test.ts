// Every shared Tachyon vector, read in place, against CPython 3.15.2's own
// verdict and dump (*.expected.json): stage, info, every sample, error.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { ProfileReader } from '../../../lib/tachyon/read/reader';
import { dumpProfile, exactInteger, frameToJson, type Dump } from '../../../lib/tachyon/read/dump';
import { readFileSync } from 'node:fs';
import { isProfpackError } from '../../../lib/errors';
import { readJsonExact, sharedPath } from '../../support/environment';

const dir = sharedPath('vectors', 'tachyon');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bin'))
  .sort();

interface Expected {
  accepted: boolean;
  stage: string;
  error: { type: string; message: string } | null;
  info: Record<string, unknown> | null;
  samples: Record<string, unknown>[];
  samples_before_error?: number;
  replay_stats: Record<string, number> | null;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint') return typeof a === typeof b && a === b;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

const expectedCache = new Map<string, Expected>();
function expectedOf(file: string): Expected {
  let e = expectedCache.get(file);
  if (!e) {
    e = readJsonExact(`${dir}/${file.replace(/\.bin$/, '.expected.json')}`) as Expected;
    expectedCache.clear(); // one at a time: the big ones are megabytes
    expectedCache.set(file, e);
  }
  return e;
}

// Tiny buffers: every zstd window, full-output and REPEAT-continuation path runs,
// and the stack trie is rebuilt every few records.
const tiny = {
  keepDecompressedLimit: 0,
  tuning: { zstdChunk: 64, events: 6, timestamps: 3, nodes: 4096, maxNodes: 64 },
};

function check(file: string, dump: Dump): void {
  const expected = expectedOf(file);
  expect({ accepted: dump.accepted, stage: dump.stage }).toEqual({
    accepted: expected.accepted,
    stage: expected.stage,
  });
  expect(dump.error?.message ?? null).toEqual(expected.error?.message ?? null);
  if (expected.error) expect(dump.error!.code).toMatch(/^ERR_TACHYON_/);
  expect(dump.info).toEqual(expected.info);
  expect(dump.samples.length).toBe(expected.samples.length);
  for (let i = 0; i < expected.samples.length; i++) {
    if (!sameJson(dump.samples[i], expected.samples[i]))
      expect({ i, sample: dump.samples[i] }).toEqual({ i, sample: expected.samples[i] });
  }
  if (expected.samples_before_error !== undefined)
    expect(dump.samples_before_error).toBe(expected.samples_before_error);
}

describe(`Tachyon vectors (${backend.name} backend)`, () => {
  it('finds the vectors', () => {
    expect(files.length).toBeGreaterThanOrEqual(70);
  });
  for (const file of files) {
    it(`${file}: open(path)`, () => {
      check(file, dumpProfile(`${dir}/${file}`));
    });
    it(`${file}: fromBuffer, streamed zstd, tiny buffers`, () => {
      check(file, dumpProfile(readFileSync(`${dir}/${file}`), tiny));
    });
    it(`${file}: samples() and the reader's tables`, () => {
      const expected = expectedOf(file);
      let reader: ProfileReader;
      try {
        reader = ProfileReader.open(`${dir}/${file}`);
      } catch (err) {
        expect(isProfpackError(err)).toBe(true);
        expect(expected.stage).toBe('open');
        return;
      }
      expect(expected.stage).not.toBe('open');
      expect(reader.backend).toBe(backend.name);
      expect(reader.strings.length).toBe(reader.info.stringCount);
      expect(reader.frames.length).toBe(reader.info.frameCount);
      let i = 0;
      let failure: unknown = null;
      try {
        for (const s of reader.samples()) {
          const e = expected.samples[i];
          if (expected.stage === 'ok') {
            const got = {
              thread_id: exactInteger(s.threadId),
              interpreter_id: s.interpreterId,
              timestamp_us: exactInteger(s.timestampUs),
              status: s.status,
              frames: s.stack.map((f) => frameToJson(reader.frames[f]!)),
            };
            const { call: _call, ...want } = e as Record<string, unknown>;
            if (!sameJson(got, want)) expect({ i, got }).toEqual({ i, got: want });
          }
          i++;
        }
      } catch (err) {
        failure = err;
      } finally {
        reader.close();
      }
      if (expected.stage === 'ok') {
        expect(failure).toBeNull();
        expect(i).toBe(expected.samples.length);
      } else {
        expect(isProfpackError(failure)).toBe(true);
        expect((failure as Error).message).toContain(expected.error!.message);
        expect(i).toBe(expected.samples_before_error);
      }
    });
  }
});
