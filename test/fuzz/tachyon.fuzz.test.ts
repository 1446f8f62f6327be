/**
 * Mutation fuzzing of the Tachyon reader (open + full replay), on every shared
 * vector and on version-2 files (seeds.ts version2Seeds): little- and big-endian, zstd and uncompressed, real and synthetic,
 * valid and rejected ones. Each mutated file is read by the JS twin and the
 * native reader (in the native suite run; the JS run, which has no native
 * reader, compares the JS twin under tiny replay buffers and zstd chunks
 * with itself at default sizes): both must read the same info, tables and
 * samples, or fail at the same stage with the same ProfpackError code and
 * offset after delivering the same samples. Anything else thrown, a hang or
 * a crash fails the suite.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { isProfpackError } from '../../lib/errors';
import { ProfileReader, type ReaderOptions } from '../../lib/tachyon/read/reader';
import { fuzzSeconds, fuzzSeed, mutate, Rng, runFor, saveFailure } from './mutate';
import { tachyonJoin, tachyonParts, tachyonSeeds, version2Seeds, type TachyonParts } from './seeds';
import { scratchDir } from '../support/scratch-dir';

// Version 1's shared vectors and version-2 files (both block codings, kind 5 and 6).
const seeds = [...tachyonSeeds(), ...version2Seeds()];
// Files whose sample region can be mutated on its own (layout fixed up afterwards).
const structured = seeds
  .map((seed) => ({ seed, parts: tachyonParts(seed) }))
  .filter((s): s is { seed: (typeof seeds)[number]; parts: TachyonParts } => s.parts !== null);
const regionSeeds = structured.map(({ seed, parts }) => ({ name: seed.name, bytes: parts.region }));
const dir = scratchDir('profpack-fuzz-tachyon-');

// Replays longer than this are cut at the same point on both sides (a mutated
// count can make a small file stand for millions of samples).
const MAX_SAMPLES = 50_000;

interface Reading {
  stage: 'ok' | 'open' | 'replay';
  code?: string;
  offset?: number;
  head: string;
  samples: number;
  digest: string;
  /** samples() only: the digest after each sample, to compare prefixes. */
  trail: number[];
}

function jsonish(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

/** FNV-1a over a string, to keep long sample transcripts small. */
function fnv(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function read(open: () => ProfileReader, useReplay: boolean): Reading {
  let reader: ProfileReader;
  try {
    reader = open();
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    return { stage: 'open', code: err.code, offset: err.offset, head: '', samples: 0, digest: '', trail: [] };
  }
  const model = reader.model;
  const head = jsonish([
    reader.info,
    reader.strings,
    reader.frames,
    model && {
      ...model,
      values: model.values.map((c) => Array.from(c)),
      labels: model.labels && Array.from(model.labels),
      timeAbsent: model.timeAbsent && Array.from(model.timeAbsent),
    },
  ]);
  let samples = 0;
  let h = 0x811c9dc5;
  const trail: number[] = [];
  try {
    if (useReplay) {
      const stop = new Error('enough');
      try {
        reader.replay({
          collect(stackFrames, timestamps) {
            h = fnv(h, jsonish([stackFrames, timestamps]));
            samples += timestamps.length;
            if (samples >= MAX_SAMPLES) throw stop;
          },
        });
      } catch (err) {
        if (err !== stop) throw err;
      }
    } else {
      for (const s of reader.samples()) {
        h = fnv(h, `${s.threadId}/${s.interpreterId}/${s.timestampUs}/${s.status}/${s.stack.join(',')}`);
        trail.push(h);
        if (++samples >= MAX_SAMPLES) break;
      }
    }
    // A heap section (docs/format-v2.md §9) is decoded too: its events join the digest.
    for (const b of reader.heapTrace()?.events() ?? []) h = fnv(h, `${b.kind}/${b.thread}/${b.ordinals.join(',')}`);
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    return { stage: 'replay', code: err.code, offset: err.offset, head, samples, digest: h.toString(16), trail };
  } finally {
    reader.close();
  }
  return { stage: 'ok', head, samples, digest: h.toString(16), trail };
}

/**
 * Same result, except one documented leeway: samples() yields a REPEAT run in
 * parts when the decoder's buffers fill, so when that run turns out malformed
 * the number of samples yielded before the error depends on buffer sizes
 * (replay() holds parts back and has no such leeway). Only readings with
 * different buffer sizes get it; they must still agree on their common prefix.
 */
function agree(a: Reading, b: Reading, sameBuffers: boolean): boolean {
  const strip = (r: Reading): string => jsonish({ ...r, trail: undefined });
  if (strip(a) === strip(b)) return true;
  if (sameBuffers || a.stage !== 'replay' || b.stage !== 'replay' || (a.trail.length === 0 && b.trail.length === 0))
    return false;
  if (a.code !== b.code || a.offset !== b.offset || a.head !== b.head) return false;
  const n = Math.min(a.trail.length, b.trail.length);
  return n === 0 || a.trail[n - 1] === b.trail[n - 1];
}

function tinyTuning(rng: Rng): ReaderOptions['tuning'] {
  return {
    zstdChunk: 1 + rng.int(4096),
    events: 1 + rng.int(16),
    timestamps: 1 + rng.int(16),
    nodes: 1 + rng.int(300),
  };
}

describe('Tachyon reader under mutation', () => {
  it(
    backend.name === 'native'
      ? 'JS twin and native reader agree on every mutated file'
      : 'JS twin agrees with itself under tiny buffers',
    () => {
      const base = fuzzSeed();
      const rng = new Rng(base);
      const stages = { ok: 0, open: 0, replay: 0 };
      const file = path.join(dir, 'input.bin');
      let describeCurrent = (): string => '';
      const iterations = runFor(
        fuzzSeconds() * 0.4 * 1000,
        300,
        (i) => {
          let seed = rng.pick(seeds);
          let bytes: Uint8Array;
          if (rng.chance(0.05)) {
            bytes = seed.bytes;
          } else if (rng.chance(0.5)) {
            // Mutate the records only; offsets, footer and zstd framing stay valid.
            const pick = rng.pick(structured);
            seed = pick.seed;
            bytes = tachyonJoin(
              pick.parts,
              mutate(rng, { name: seed.name, bytes: pick.parts.region, hints: pick.parts.regionHints }, regionSeeds),
            );
          } else {
            bytes = mutate(rng, seed, seeds);
          }
          const useReplay = rng.chance(0.5);
          const tuning = rng.chance(0.5) ? tinyTuning(rng) : undefined;
          const viaFile = rng.chance(0.1);
          if (viaFile) writeFileSync(file, bytes);
          const context = (): string =>
            `iteration ${i}, seed file ${seed.name}, replay=${useReplay}, tuning=${JSON.stringify(tuning)}, viaFile=${viaFile}; ${saveFailure('tachyon', base, bytes)}`;
          describeCurrent = context;
          let a: Reading;
          let b: Reading;
          try {
            if (backend.name === 'native') {
              // Across backends: the same buffer sizes, and nothing may differ.
              a = read(() => ProfileReader.fromBuffer(bytes, { backend: 'js', tuning }), useReplay);
              b = read(
                () =>
                  viaFile
                    ? ProfileReader.open(file, { backend: 'native', tuning })
                    : ProfileReader.fromBuffer(bytes, { backend: 'native', tuning }),
                useReplay,
              );
            } else {
              a = read(() => ProfileReader.fromBuffer(bytes, { backend: 'js' }), useReplay);
              b = read(
                () =>
                  viaFile
                    ? ProfileReader.open(file, { backend: 'js', tuning })
                    : ProfileReader.fromBuffer(bytes, { backend: 'js', tuning: tuning ?? tinyTuning(rng) }),
                useReplay,
              );
            }
          } catch (err) {
            throw new Error(
              `non-ProfpackError thrown: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}; ${context()}`,
              { cause: err },
            );
          }
          if (!agree(a, b, backend.name === 'native' || (viaFile && tuning === undefined))) {
            const show = (r: Reading): string => jsonish({ ...r, head: r.head.slice(0, 200), trail: undefined });
            expect.fail(`readers disagree:\n  js     ${show(a)}\n  other  ${show(b)}\n  ${context()}`);
          }
          stages[a.stage]++;
        },
        2000,
        () => describeCurrent(),
      );
      console.info(
        `tachyon fuzz (${backend.name} run, seed ${base}): ${iterations} files, outcomes ${JSON.stringify(stages)}`,
      );
      // The mutations must reach all three outcomes, or they are not testing much.
      expect(stages.ok).toBeGreaterThan(0);
      expect(stages.open).toBeGreaterThan(0);
      expect(stages.replay).toBeGreaterThan(0);
    },
    fuzzSeconds() * 0.4 * 1000 + 60_000,
  );
});

describe('Tachyon reader: inputs the fuzzer once failed on', () => {
  const regressions = path.join(__dirname, 'regressions', 'tachyon-js');
  const tunings: ReaderOptions['tuning'][] = [
    undefined,
    { events: 6, timestamps: 11, nodes: 257 },
    { zstdChunk: 1, events: 1, timestamps: 1, nodes: 1 },
  ];
  for (const name of readdirSync(regressions).sort()) {
    it(name, () => {
      const bytes = new Uint8Array(readFileSync(path.join(regressions, name)));
      for (const tuning of tunings) {
        for (const useReplay of [false, true]) {
          const a = read(() => ProfileReader.fromBuffer(bytes, { backend: 'js', tuning }), useReplay);
          const reference = read(() => ProfileReader.fromBuffer(bytes, { backend: 'js' }), useReplay);
          expect(agree(a, reference, tuning === undefined)).toBe(true);
          if (backend.name === 'native') {
            const b = read(() => ProfileReader.fromBuffer(bytes, { backend: 'native', tuning }), useReplay);
            expect(jsonish({ ...b, trail: undefined })).toBe(jsonish({ ...a, trail: undefined }));
          }
        }
      }
    });
  }
});
