/**
 * The shared vectors as tests read them (formats, query, view, record): a model built from a
 * vector's CPython-produced expected.json (no profpack reader involved), and
 * "what the target keeps" projections used to compare round trips.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { DumpFrame } from '../../lib/tachyon/index';
import { parseJsonExact, sharedPath } from './environment';

// A frame of a vector's expected.json: the shape `profpack dump --json` writes.
type ExpectedFrame = DumpFrame;
export interface ExpectedSample {
  thread_id: number | bigint;
  interpreter_id: number;
  timestamp_us: number | bigint;
  status: number;
  frames: ExpectedFrame[];
}
/** The fields of expected.json the tests read; a rejected vector has an error, its stage, and no info. */
export interface Expected {
  accepted: boolean;
  stage: string;
  error: { message: string } | null;
  info: {
    start_time_us: number | bigint;
    sample_interval_us: number | bigint;
    sample_count: number;
    mode: number | null;
  };
  samples: ExpectedSample[];
}

export const vectorDir = sharedPath('vectors', 'tachyon');

const cache = new Map<string, Expected>();

/**
 * JSON.parse, falling back to the exact (bigint) parser only for the few
 * files with integers beyond 2^53 (s10's thread ids, s13's timestamps): the
 * exact parser is much slower on the large vectors.
 */
export function readExpected(name: string): Expected {
  let hit = cache.get(name);
  if (hit === undefined) {
    const text = readFileSync(`${vectorDir}/${name}.expected.json`, 'utf8');
    let unsafe = false;
    const fast = JSON.parse(text, (_k, v: unknown) => {
      if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) unsafe = true;
      return v;
    }) as Expected;
    hit = unsafe ? (parseJsonExact(text) as Expected) : fast;
    cache.set(name, hit);
  }
  return hit;
}

/** Every vector CPython accepts (s*, r*, c*, q*), by base name. */
export function acceptedVectors(): string[] {
  return readdirSync(vectorDir)
    .filter((f) => f.endsWith('.expected.json'))
    .map((f) => f.slice(0, -'.expected.json'.length))
    .filter((name) => readExpected(name).accepted);
}
