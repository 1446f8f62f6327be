/**
 * Mutation fuzzing of recovery: snapshots of profiles whose writer was
 * stopped after flushes (as a SIGKILL leaves them: zero header, records,
 * journal), cut at any point, mutated, and with mutated journals, go through
 * recover() on every backend the run has. recover() must either write a
 * profile that replays exactly the samples it reports, or throw a
 * ProfpackError; both backends must do the same (version-2 snapshots with
 * heap events too: their outputs' heap events must read); salvageRecords' native and
 * JS twins must keep the same prefix of any byte string. Anything else
 * thrown, a hang or a crash fails the suite.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { HeapStacks } from '../../lib/record/wire/heap-events';
import { ProfileReader, openHeapTrace, recover } from '../../lib/tachyon/index';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../lib/index';
import type { HeapFileSink, ProfileWriterOptions } from '../../lib/tachyon/index';
import { salvageRecords } from '../../lib/tachyon/recover/index';
import { fuzzSeconds, fuzzSeed, mutate, outcome, Rng, runFor, saveFailure, type Seed } from './mutate';
import { scratchDir } from '../support/scratch-dir';
import { testedBackends } from '../support/backends';

const dir = scratchDir('profpack-fuzz-recover-');

interface Snapshot {
  name: string;
  profile: Uint8Array;
  journal: Uint8Array;
}

/** A writer stopped after `flushes` flushes and some unflushed samples, as a kill leaves it on disk. */
function snapshot(compression: 'zstd' | 'none', flushes: number, threads: number): Snapshot {
  const file = path.join(dir, `seed-${compression}-${flushes}-${threads}.bin`);
  const w = new ProfileWriter(file, { sampleIntervalUs: 100, startTimeUs: 5000, compression, mode: 'wall' });
  const ids: number[] = [];
  for (let i = 0; i < 40; i++) ids.push(w.internFrame({ filename: `f${i % 4}.py`, funcname: `g${i}`, lineno: i }));
  let s = 0;
  for (let f = 0; f <= flushes; f++) {
    for (let k = 0; k < 300; k++, s++) {
      const t = 1 + (s % threads);
      w.writeStack(
        t,
        0,
        5000 + 100 * s,
        t & 3,
        t === 1 ? [ids[0]!, ids[1]!] : [ids[(s * 3) % 40]!, ids[(s >> 2) % 40]!, ids[2]!],
      );
    }
    if (f < flushes) w.flush();
  }
  // Plain copies: mutate() slices its input, and a Buffer's slice is a view, not a copy.
  const snap = {
    name: `${compression}-${flushes}-${threads}`,
    profile: new Uint8Array(readFileSync(file)),
    journal: new Uint8Array(readFileSync(`${file}.journal`)),
  };
  w.close();
  return snap;
}

type Heap = { stacks: HeapStacks; ids: number[] };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const v2 = require('../tachyon/child/write-v2-until-killed.cjs') as {
  writerOptions: (which: 'native' | 'js', compression: 'zstd' | 'none') => ProfileWriterOptions;
  writePart: (w: ProfileWriter, sink: HeapFileSink, ids: number[], heap: Heap, k: number) => void;
  makeStacks: (stacks: typeof HeapStacks) => Heap;
  internFrames: (w: ProfileWriter) => number[];
};

/** A version-2 writer with heap events stopped after `flushes` flushes and one unflushed part. */
function snapshotV2(compression: 'zstd' | 'none', flushes: number): Snapshot {
  const file = path.join(dir, `seed-v2-${compression}-${flushes}.bin`);
  const w = new ProfileWriter(file, v2.writerOptions(backend.name, compression));
  const ids = v2.internFrames(w);
  const sink = w.heapSink();
  const heap = v2.makeStacks(HeapStacks);
  for (let k = 0; k <= flushes; k++) {
    v2.writePart(w, sink, ids, heap, k);
    if (k < flushes) w.flush();
  }
  const snap = {
    name: `v2-${compression}-${flushes}`,
    profile: new Uint8Array(readFileSync(file)),
    journal: new Uint8Array(readFileSync(`${file}.journal`)),
  };
  w.close();
  return snap;
}

const seedsV1: Snapshot[] = [
  snapshot('none', 1, 1),
  snapshot('none', 3, 3),
  snapshot('zstd', 2, 2),
  snapshot('zstd', 4, 5),
];
const seeds: Snapshot[] = [...seedsV1, snapshotV2('none', 2), snapshotV2('zstd', 3)];

interface Recovered {
  source: string;
  samples: number;
  threads: number;
  frames: number;
  droppedBytes: number;
  replayed: number;
  heapEvents: number;
}

function recoverWith(which: 'native' | 'js', profile: Uint8Array, journal: Uint8Array | null, tag: string): Recovered {
  const input = path.join(dir, `${tag}-${which}.bin`);
  const out = path.join(dir, `${tag}-${which}.out`);
  writeFileSync(input, profile);
  rmSync(`${input}.journal`, { force: true });
  if (journal !== null) writeFileSync(`${input}.journal`, journal);
  const r = recover(input, out, { backend: which });
  const reader = ProfileReader.open(out, { backend: which });
  let replayed = 0;
  for (const _ of reader.samples()) replayed++;
  reader.close();
  let heapEvents = 0;
  for (const batch of openHeapTrace(out, { backend: which })?.events() ?? []) heapEvents += batch.ordinals.length;
  return {
    source: r.source,
    samples: r.samples,
    threads: r.threads,
    frames: r.frames,
    droppedBytes: r.droppedBytes,
    replayed,
    heapEvents,
  };
}

describe('recover fuzz', () => {
  it('cut, mutated and journal-less snapshots: a replayable profile with the samples reported, or a ProfpackError, alike on both backends', () => {
    const base = fuzzSeed();
    const others: Seed[] = seeds.map((s) => ({ name: s.name, bytes: s.profile }));
    let current: Uint8Array = new Uint8Array(0);
    let currentStep = 0;
    const n = runFor(
      fuzzSeconds() * 100,
      60,
      (i) => {
        const rng = new Rng(base + i);
        const seed = seeds[rng.int(seeds.length)]!;
        let profile = seed.profile;
        let journal: Uint8Array | null = seed.journal;
        switch (rng.int(5)) {
          case 0: // killed mid-write: any length past the header
            profile = profile.subarray(0, 64 + rng.int(profile.length - 63));
            break;
          case 1: // bytes on disk damaged
            profile = Uint8Array.from([
              ...new Uint8Array(64),
              ...mutate(rng, { name: seed.name, bytes: profile.subarray(64) }, others),
            ]);
            break;
          case 2: // journal torn or damaged
            journal =
              rng.int(2) === 0
                ? journal.subarray(0, rng.int(journal.length + 1))
                : mutate(rng, { name: `${seed.name}.journal`, bytes: journal }, []);
            break;
          case 3: // journal lost
            journal = null;
            profile = profile.subarray(0, 64 + rng.int(profile.length - 63));
            break;
          default: // both
            profile = profile.subarray(0, 64 + rng.int(profile.length - 63));
            journal = mutate(rng, { name: `${seed.name}.journal`, bytes: journal }, []);
        }
        current = profile;
        currentStep = i;
        const results = testedBackends.map((which) =>
          outcome(
            () => recoverWith(which, profile, journal, `case${i % 4}`),
            () => saveFailure(`recover-${which}`, base + i, profile),
          ),
        );
        for (const r of results)
          if (r.ok) expect(r.value.replayed, saveFailure('recover-count', base + i, profile)).toBe(r.value.samples);
        if (results.length === 2) {
          const [a, b] = results as [(typeof results)[0], (typeof results)[0]];
          const view = (o: typeof a) => (o.ok ? o.value : { code: o.code });
          expect(view(a), saveFailure('recover-twins', base + i, profile)).toEqual(view(b));
        }
      },
      5000,
      () => `last input ${current.length} bytes; ${saveFailure('recover-slow', base + currentStep, current)}`,
    );
    expect(n).toBeGreaterThanOrEqual(60);
  });

  it('salvageRecords keeps a prefix that decodes whole (salvaging it again keeps all of it), the same on both twins', () => {
    const base = fuzzSeed();
    const regions: Seed[] = seedsV1.map((s) => ({ name: s.name, bytes: recordsOf(s) }));
    runFor(fuzzSeconds() * 50, 200, (i) => {
      const rng = new Rng(base + i);
      const seed = regions[rng.int(regions.length)]!;
      const bytes =
        rng.int(3) === 0 ? seed.bytes.subarray(0, rng.int(seed.bytes.length + 1)) : mutate(rng, seed, regions);
      const le = rng.int(4) !== 0;
      for (const which of testedBackends) {
        const kept = salvageRecords(bytes, le, 7n, which);
        expect(kept.end, saveFailure('salvage-bound', base + i, bytes)).toBeLessThanOrEqual(bytes.length);
        expect(
          salvageRecords(bytes.subarray(0, kept.end), le, 7n, which),
          saveFailure('salvage-prefix', base + i, bytes),
        ).toEqual(kept);
      }
      if (testedBackends.length === 2)
        expect(salvageRecords(bytes, le, 7n, 'native'), saveFailure('salvage-twins', base + i, bytes)).toEqual(
          salvageRecords(bytes, le, 7n, 'js'),
        );
    });
  });
});

/** The uncompressed records of a snapshot (recovered with compression none), as the scan sees them. */
function recordsOf(s: Snapshot): Uint8Array {
  const input = path.join(dir, `regions-${s.name}.bin`);
  writeFileSync(input, s.profile);
  writeFileSync(`${input}.journal`, s.journal);
  const out = `${input}.out`;
  recover(input, out, { backend: 'js' });
  const bytes = readFileSync(out);
  const le = bytes[0] === 0x48;
  const stringOffset = Number(le ? bytes.readBigUInt64LE(40) : bytes.readBigUInt64BE(40));
  const region = bytes.subarray(64, stringOffset);
  if (s.name.startsWith('zstd')) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return new Uint8Array((require('zstd-napi') as { decompress(b: Uint8Array): Buffer }).decompress(region));
  }
  return new Uint8Array(region);
}
