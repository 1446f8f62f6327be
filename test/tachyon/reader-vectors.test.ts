// Every shared Tachyon vector, read in place, against CPython 3.15.2's own
// verdict and dump (*.expected.json): stage, info, every sample, error.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { ProfileReader } from '../../lib/tachyon/reader';
import { dumpProfile, type Dump } from '../../lib/tachyon/reader-dump';
import { readJsonExact, sharedPath } from '../shared';

const dir = sharedPath('vectors', 'tachyon');
const files = readdirSync(dir).filter((f) => f.endsWith('.bin')).sort();

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

function check(file: string, dump: Dump): void {
  const expected = readJsonExact(`${dir}/${file.replace(/\.bin$/, '.expected.json')}`) as Expected;
  expect({ accepted: dump.accepted, stage: dump.stage }).toEqual({ accepted: expected.accepted, stage: expected.stage });
  expect(dump.error?.message ?? null).toEqual(expected.error?.message ?? null);
  if (expected.error) expect(dump.error!.code).toMatch(/^ERR_TACHYON_/);
  expect(dump.info).toEqual(expected.info);
  expect(dump.samples.length).toBe(expected.samples.length);
  for (let i = 0; i < expected.samples.length; i++) {
    if (!sameJson(dump.samples[i], expected.samples[i])) expect({ i, sample: dump.samples[i] }).toEqual({ i, sample: expected.samples[i] });
  }
  if (expected.samples_before_error !== undefined) expect(dump.samples_before_error).toBe(expected.samples_before_error);
}

describe(`Tachyon vectors (${backend.name} backend)`, () => {
  it('finds the vectors', () => {
    expect(files.length).toBeGreaterThanOrEqual(70);
  });
  for (const file of files) {
    it(`${file}: open(path)`, () => {
      check(file, dumpProfile(`${dir}/${file}`));
    });
  }
});
