/**
 * Shared pieces of the convert/query/record tests: a model built from a
 * vector's CPython-produced expected.json (no profpack reader involved), and
 * "what the target keeps" projections used to compare round trips.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { MemoryProfile, normalizeFrame, type Frame, type ProfileSource } from '../../lib/convert/model';
import type { DumpFrame } from '../../lib/tachyon/index';
import { parseJsonExact, sharedPath } from '../shared';

// A frame of a vector's expected.json: the shape `profpack dump --json` writes.
type ExpectedFrame = DumpFrame;
interface ExpectedSample {
  thread_id: number | bigint;
  interpreter_id: number;
  timestamp_us: number | bigint;
  status: number;
  frames: ExpectedFrame[];
}
export interface Expected {
  accepted: boolean;
  info: { start_time_us: number | bigint; sample_interval_us: number | bigint; sample_count: number };
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

export function modelFromExpected(expected: Expected): MemoryProfile {
  const model = new MemoryProfile({ startTimeUs: BigInt(expected.info.start_time_us), sampleIntervalUs: BigInt(expected.info.sample_interval_us) });
  for (const s of expected.samples) {
    const stack = s.frames.map((f) =>
      model.internFrame(
        normalizeFrame({
          filename: f.filename,
          funcname: f.funcname,
          lineno: f.lineno,
          endLineno: f.end_lineno,
          column: f.column,
          endColumn: f.end_column,
          opcode: f.opcode,
        }),
      ),
    );
    model.writeStack(BigInt(s.thread_id), s.interpreter_id, BigInt(s.timestamp_us), s.status, stack);
  }
  return model;
}

export interface Keep {
  time: boolean;
  status: boolean;
  frame: (f: Frame) => string;
}

/** Sorted list of one line per sample with what the target keeps; compare two of these. */
export function project(source: ProfileSource, keep: Keep): string[] {
  const lines: string[] = [];
  const labels: string[] = [];
  for (const s of source.samples()) {
    const stack = Array.from(s.stack, (i) => (labels[i] ??= keep.frame(source.frames[i]!))).join(' | ');
    lines.push(`${s.threadId}@${s.interpreterId} t=${keep.time ? s.timestampUs : '-'} st=${keep.status ? s.status : '-'} [${stack}]`);
  }
  return lines.sort();
}

const positive = (v: number | null) => (v !== null && v >= 1 ? v : null);
const nonzero = (v: number | null) => (v === null || v === 0 ? null : v);

/** V8 positions are 0-based with -1 = none: only 1-based values ≥ 1 survive. */
export const keepCpuProfile: Keep = { time: true, status: true, frame: (f) => JSON.stringify([f.funcname, f.filename, positive(f.lineno), positive(f.column)]) };
/** pprof: 0 means "none" for line and column. */
export const keepPprof: Keep = { time: true, status: true, frame: (f) => JSON.stringify([f.funcname, f.filename, nonzero(f.lineno), nonzero(f.column)]) };
export const keepPprofAggregated: Keep = { time: false, status: false, frame: keepPprof.frame };
export const keepSpeedscope: Keep = { time: true, status: false, frame: (f) => JSON.stringify([f.funcname, f.filename, f.lineno, f.column]) };
