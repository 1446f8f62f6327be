/**
 * Mutation fuzzing of the surfaces issue 29 hardened, on the run's backend
 * (scripts/test-both.mjs runs this file once per backend):
 * - version-2 files (seeds.ts version2Seeds, mutated by mutate.ts) read by the
 *   library's openProfile (every batch) and, for a few, by the CLI (`info`,
 *   `top`, `flame`, `convert -o …pb.gz`);
 * - unfinished version-2 files (a writer stopped after flushes, mutated) given
 *   to recover(): a coded refusal and no output, or an output that opens;
 * - random directory layouts (profiles, mutated files, hard links, symlinks to
 *   files and to directories, loops, dangling links, empty files, a writer's
 *   unfinished file) listed by listProfileFiles and read by `profpack top DIR`.
 * A finding is anything thrown that is not a ProfpackError, a CLI exit other
 * than 0 or 2 with one `profpack: ERR_…` line, a hang, or a file read twice.
 * PROFPACK_FUZZ_SECONDS sets the budget, PROFPACK_FUZZ_SEED replays a run.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { listProfileFiles } from '../../lib/fleet/listing';
import { openProfile } from '../../lib/formats/registry';
import { ProfileWriter, recover } from '../../lib/tachyon/index';
import { compileBuild, type Build } from '../support/build';
import { cliHolds, fuzzSeconds, fuzzSeed, mutate, outcome, Rng, runFor, saveFailure, type Seed } from './mutate';
import { version2Seeds } from './seeds';

const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-fuzz-surfaces-'));
const seed = fuzzSeed();
const seeds: Seed[] = version2Seeds();
let build: Build;
beforeAll(() => (build = compileBuild()));
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  build?.cleanup();
});

/** Samples of every batch of a profile, or the ProfpackError's code; anything else thrown fails (input saved). */
function readAll(file: string, bytes: Uint8Array, label: string): string {
  const result = outcome(
    () => {
      const profile = openProfile(file);
      try {
        let n = 0;
        for (const b of profile.batches()) n += b.length;
        return n;
      } finally {
        profile.close();
      }
    },
    () => saveFailure(label, seed, bytes),
  );
  return result.ok ? `ok ${result.value}` : result.code;
}

describe(`surfaces (${backend.name}, seed ${seed})`, () => {
  it('mutated version-2 files: the library reads them or refuses them with a code; the CLI too', () => {
    const rng = new Rng(seed);
    const file = path.join(dir, 'v2.tach');
    let cliRuns = 0;
    const n = runFor(
      fuzzSeconds() * 150,
      200,
      (i) => {
        const base = rng.pick(seeds);
        const bytes = mutate(rng, base, seeds);
        fs.writeFileSync(file, bytes);
        readAll(file, bytes, `v2-${base.name}-${i}`);
        // One input in 40 (at least 4) also goes through the CLI: a process each, so few.
        if (i % 40 === 0 && cliRuns < 12) {
          cliRuns++;
          const cmd = [
            ['info', file],
            ['top', file],
            ['flame', file, '-o', 'page.html'],
            ['convert', file, '-o', 'out.pb.gz'],
          ][cliRuns % 4]!;
          cliHolds(build.cli, dir, cmd, () => saveFailure(`v2-cli-${base.name}-${i}`, seed, bytes));
        }
      },
      10_000,
    );
    expect(n).toBeGreaterThanOrEqual(200);
    expect(cliRuns).toBeGreaterThanOrEqual(5);
  }, 600_000);

  it('mutated unfinished version-2 files: recover refuses (coded, no output) or writes a file that opens', () => {
    const rng = new Rng(seed ^ 0x5a5a);
    const unfinished: Seed[] = [];
    for (const [k, compression] of (['none', 'zstd'] as const).entries()) {
      const file = path.join(dir, `unfinished-${k}.tach`);
      const options = { sampleIntervalUs: 1000, startTimeUs: 1_000_000, formatVersion: 2 as const, compression };
      const w = new ProfileWriter(file, options);
      const ids = [0, 1, 2].map((i) => w.internFrame({ filename: 'u.py', funcname: `f${i}`, lineno: i + 1 }));
      for (let s = 0; s < 3000; s++) {
        w.writeStack(1 + (s % 3), 0, 1_001_000 + s * 1000, 0, ids.slice(0, 1 + (s % 3)));
        if (s % 1000 === 999) w.flush();
      }
      unfinished.push({ name: `unfinished-${compression}`, bytes: new Uint8Array(fs.readFileSync(file)) });
      w.close();
    }
    const input = path.join(dir, 'rec-in.tach');
    const output = path.join(dir, 'rec-out.tach');
    const n = runFor(
      fuzzSeconds() * 50,
      60,
      (i) => {
        const base = rng.pick(unfinished);
        const bytes = i % 5 === 0 ? base.bytes : mutate(rng, base, unfinished);
        fs.writeFileSync(input, bytes);
        fs.rmSync(output, { force: true });
        const context = (): string => saveFailure(`recover-${base.name}-${i}`, seed, bytes);
        const r = outcome(() => recover(input, output), context);
        if (r.ok) expect(readAll(output, bytes, `recovered-${i}`)).toMatch(/^ok \d+$/);
        else expect(fs.existsSync(output), context()).toBe(false);
      },
      10_000,
    );
    expect(n).toBeGreaterThanOrEqual(60);
  }, 600_000);

  it('random directory layouts: each regular file listed once, no symlinked directory walked, top DIR holds', () => {
    const rng = new Rng(seed ^ 0xd1d1);
    const writers: ProfileWriter[] = [];
    const n = runFor(
      fuzzSeconds() * 100,
      8,
      (i) => {
        const root = path.join(dir, `layout-${i}`);
        const dirs = [root];
        const files: string[] = [];
        fs.mkdirSync(root);
        for (let e = 0; e < 4 + rng.int(12); e++) {
          const where = rng.pick(dirs);
          const name = path.join(where, `e${e}${rng.chance(0.7) ? '.tach' : ''}`);
          switch (rng.int(9)) {
            case 0:
              fs.mkdirSync(name);
              dirs.push(name);
              break;
            case 1: {
              const w = new ProfileWriter(name, { sampleIntervalUs: 1000, startTimeUs: 1_000_000 });
              w.writeStack(1, 0, 1_001_000, 0, [w.internFrame({ filename: 'a.py', funcname: 'f', lineno: 1 })]);
              w.finalize();
              files.push(name);
              break;
            }
            case 2:
              fs.writeFileSync(name, mutate(rng, rng.pick(seeds), seeds));
              files.push(name);
              break;
            case 3:
              if (files.length > 0) fs.linkSync(rng.pick(files), name);
              break;
            case 4:
              if (files.length > 0) fs.symlinkSync(path.relative(where, rng.pick(files)), name);
              break;
            case 5:
              fs.symlinkSync(path.relative(where, rng.pick(dirs)) || '.', name); // a symlinked directory, often a loop
              break;
            case 6:
              fs.symlinkSync(`missing-${e}`, name);
              break;
            case 7:
              fs.writeFileSync(name, rng.chance(0.5) ? '' : 'not a profile\n');
              break;
            default: {
              const w = new ProfileWriter(name, { sampleIntervalUs: 1000, startTimeUs: 1_000_000 });
              w.writeStack(1, 0, 1_001_000, 0, [w.internFrame({ filename: 'a.py', funcname: 'g', lineno: 1 })]);
              w.flush();
              writers.push(w); // left open: a rotating writer's unfinished file
            }
          }
        }
        const listed = outcome(
          () => listProfileFiles([root], { onSkipped: () => undefined }),
          () => `layout ${i}, seed ${seed}`,
        );
        if (listed.ok) {
          const inodes = listed.value.map((f) => {
            const st = fs.statSync(f);
            expect(st.isFile(), f).toBe(true);
            return `${st.dev}:${st.ino}`;
          });
          expect(new Set(inodes).size, `layout ${i}, seed ${seed}`).toBe(inodes.length);
          for (const f of listed.value) {
            for (let d = path.dirname(f); d.length > root.length; d = path.dirname(d)) {
              expect(fs.lstatSync(d).isSymbolicLink(), f).toBe(false);
            }
          }
        }
        if (i % 3 === 0) cliHolds(build.cli, dir, ['top', root], () => `layout ${i} (${root}), seed ${seed}`);
      },
      20_000,
    );
    for (const w of writers) w.close();
    expect(n).toBeGreaterThanOrEqual(8);
  }, 600_000);
});
