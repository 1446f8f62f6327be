/**
 * Mutation fuzzing of rotated heap recordings (issue 38), on the run's backend (scripts/test-both.mjs runs this
 * file once per backend): a directory holds the rotated files of one process (version 2 with heap events, the
 * later files inheriting the earlier ones' live objects, one process identity) and a rotating writer's unfinished
 * last file with its journal. Each input is that directory with one to three of its files (or the journal)
 * mutated, cut or removed, asked the heap questions over the directory (`heapProfile`, `leakSuspects` of
 * openHeapFiles(listProfileFiles(DIR)), as `top --heap DIR` and `leaks DIR` do) and recover() of the unfinished
 * file; a few go through the CLI (`leaks DIR`, `top --heap DIR`, `recover`). A finding is anything thrown that is
 * not a ProfpackError, a CLI exit other than 0 or 2 with one `profpack: ERR_…` line, a hang, or a recovered file
 * that does not open. PROFPACK_FUZZ_SECONDS sets the budget, PROFPACK_FUZZ_SEED replays a run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { listProfileFiles } from '../../lib/fleet/listing';
import { openProfile } from '../../lib/formats/registry';
import { heapProfile, leakSuspects, openHeapFiles } from '../../lib/memory/index';
import { HeapStacks } from '../../lib/record/wire/heap-events';
import { encodeRecordedBy } from '../../lib/recorded-by';
import { recover } from '../../lib/tachyon/index';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../lib/index';
import { compileBuild, type Build } from '../support/build';
import { scratchDir } from '../support/scratch-dir';
import { cliHolds, fuzzSeconds, fuzzSeed, mutate, outcome, Rng, runFor, saveFailure, type Seed } from './mutate';

const dir = scratchDir('profpack-fuzz-rotated-');
const seed = fuzzSeed();
let build: Build;
beforeAll(() => (build = compileBuild()));
afterAll(() => build?.cleanup());

const PROCESS_START = 1_700_000_000_000_000;
const ABOUT = encodeRecordedBy({
  runtime: 'node',
  version: 'v20.0.0',
  platform: 'linux',
  hostname: 'fuzz-host',
  pid: 4242,
  processStartUs: PROCESS_START,
  argv: ['node', 'app.js'],
  intervalUs: 1000,
  mode: 'wall',
  recorder: 'fuzz',
});
const FILE_US = 1_000_000;
const POLLS = 5;
const PER_POLL = 12;

/**
 * The seed directory's files, in order: `parts` rotated files of one process, the last unfinished (flushed, not
 * finalized) with its journal. Objects live at a file's end are the next file's inheritance.
 */
function rotatedSeeds(compression: 'none' | 'zstd', parts: number): Seed[] {
  const out: Seed[] = [];
  let live: { ordinal: number; size: number; stack: number; timeUs: number }[] = [];
  let ordinal = 0;
  for (let p = 0; p < parts; p++) {
    const name = `rec-${compression}-${String(p).padStart(2, '0')}.tach`;
    const file = path.join(dir, `seed-${name}`);
    const start = PROCESS_START + p * FILE_US;
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: start, formatVersion: 2, compression });
    w.internString(ABOUT);
    const frames = ['main', 'serve', 'parse'].map((funcname, i) =>
      w.internFrame({ filename: 'app.js', funcname, lineno: i + 1 }),
    );
    const sink = w.heapSink();
    const stacks = new HeapStacks();
    for (const [i, functionName] of ['serve', 'parse', 'cache'].entries())
      stacks.callFrames.push({ functionName, url: 'app.js', lineNumber: i, columnNumber: 1, scriptId: '1' });
    const sites = [stacks.add(-1, 0), stacks.add(-1, 1), stacks.add(-1, 2)];
    sink.begin({ intervalBytes: 4096 });
    if (live.length > 0)
      sink.live({
        threadId: 1,
        ordinals: Uint32Array.from(live, (o) => o.ordinal),
        sizes: Uint32Array.from(live, (o) => o.size),
        stackIds: Uint32Array.from(live, (o) => o.stack),
        allocTimesUs: Float64Array.from(live, (o) => o.timeUs),
        stacks,
      });
    let t = start;
    for (let poll = 0; poll < POLLS; poll++) {
      w.writeStack(1n, 0, BigInt(t + 1), 0, frames.slice(0, 1 + (poll % 3)));
      const since = t;
      t += FILE_US / POLLS;
      const born = Array.from({ length: PER_POLL }, (_, i) => ({
        ordinal: ++ordinal,
        size: 32 + ((ordinal * 7) % 5) * 64,
        stack: sites[i % 3]!,
        timeUs: t,
      }));
      sink.allocations({
        threadId: 1,
        timeUs: t,
        sinceUs: since,
        ordinals: Uint32Array.from(born, (o) => o.ordinal),
        sizes: Uint32Array.from(born, (o) => o.size),
        stackIds: Uint32Array.from(born, (o) => o.stack),
        shortLived: poll % 2,
        stacks,
      });
      // The 'cache' site leaks; the others die at the next poll.
      const dying = live.filter((o) => o.stack !== sites[2]);
      if (dying.length > 0)
        sink.frees({ threadId: 1, timeUs: t, sinceUs: since, ordinals: Uint32Array.from(dying, (o) => o.ordinal) });
      live = [...live.filter((o) => o.stack === sites[2]), ...born];
      if (p === parts - 1 && poll % 2 === 1) w.flush();
    }
    if (p < parts - 1) {
      w.finalize();
      out.push({ name, bytes: new Uint8Array(fs.readFileSync(file)) });
    } else {
      out.push({ name, bytes: new Uint8Array(fs.readFileSync(file)) });
      out.push({ name: `${name}.journal`, bytes: new Uint8Array(fs.readFileSync(`${file}.journal`)) });
      w.close();
    }
  }
  return out;
}

const layouts: Seed[][] = [rotatedSeeds('zstd', 4), rotatedSeeds('none', 3)];

describe(`rotated heap directories (${backend.name}, seed ${seed})`, () => {
  it("the seed directories read whole: the finished files' allocations, the unfinished one recovers", () => {
    for (const [k, layout] of layouts.entries()) {
      const root = path.join(dir, `whole-${k}`);
      fs.mkdirSync(root);
      for (const s of layout) fs.writeFileSync(path.join(root, s.name), s.bytes);
      // The unfinished file (and its journal) is skipped by the listing: the finished files' polls are read.
      const trace = openHeapFiles(listProfileFiles([root], { onSkipped: () => undefined }))!;
      expect(heapProfile(trace).info.allocations).toBe((layout.length - 2) * POLLS * PER_POLL);
      const unfinished = path.join(root, layout[layout.length - 2]!.name);
      recover(unfinished, path.join(root, 'recovered.tach.out'));
      expect(fs.statSync(path.join(root, 'recovered.tach.out')).size).toBeGreaterThan(64);
    }
  });

  it('mutated rotated recordings: heap questions, recover and the CLI give a result or a coded error', () => {
    const rng = new Rng(seed ^ 0x7e7e);
    const tally = { inputs: 0, operations: 0, refused: 0, cliRuns: 0 };
    const n = runFor(
      fuzzSeconds() * 100,
      24,
      (i) => {
        const layout = rng.pick(layouts);
        const root = path.join(dir, `dir-${i}`);
        fs.mkdirSync(root);
        const written = layout.map((s) => ({ name: s.name, bytes: s.bytes }));
        const changes = 1 + rng.int(3);
        for (let c = 0; c < changes; c++) {
          const k = rng.int(written.length);
          const choice = rng.int(10);
          if (choice === 0) written[k]!.bytes = new Uint8Array(0);
          else if (choice === 1) written[k]!.bytes = written[k]!.bytes.subarray(0, rng.int(written[k]!.bytes.length));
          else written[k]!.bytes = mutate(rng, { name: written[k]!.name, bytes: written[k]!.bytes }, layout);
        }
        const removed = rng.chance(0.15) ? rng.int(written.length) : -1;
        written.forEach((w, k) => k !== removed && fs.writeFileSync(path.join(root, w.name), w.bytes));
        const inputs = written.map((w) => `${w.name}: ${w.bytes.length} bytes`).join(', ');
        const context = (): string => {
          const saved = written.map((w) => saveFailure(`rotated-${i}-${w.name}`, seed, w.bytes));
          return `directory ${i} (${inputs}); ${saved.join('; ')}`;
        };
        const ask = (question: (files: string[]) => unknown): void => {
          tally.operations++;
          const r = outcome(() => {
            const files = listProfileFiles([root], { onSkipped: () => undefined });
            return question(files);
          }, context);
          if (!r.ok) tally.refused++;
        };
        ask((files) => {
          const trace = openHeapFiles(files);
          return trace === null ? null : heapProfile(trace).info;
        });
        ask((files) => {
          const trace = openHeapFiles(files);
          return trace === null ? null : leakSuspects(trace).suspects.length;
        });
        const unfinished = path.join(root, layout[layout.length - 2]!.name);
        const recovered = path.join(root, 'recovered.tach.out');
        if (fs.existsSync(unfinished)) {
          tally.operations++;
          const r = outcome(() => recover(unfinished, recovered), context);
          if (r.ok) {
            tally.operations++;
            const read = outcome(() => {
              const profile = openProfile(recovered, { format: 'tachyon' });
              try {
                let samples = 0;
                for (const b of profile.batches()) samples += b.length;
                return samples;
              } finally {
                profile.close();
              }
            }, context);
            expect(read.ok, `recovered file does not open: ${read.ok ? '' : read.message}; ${context()}`).toBe(true);
          } else {
            tally.refused++;
            expect(fs.existsSync(recovered), context()).toBe(false);
          }
        }
        // One input in 8 (at least 3) also goes through the CLI: a process each, so few.
        if (i % 8 === 0 && tally.cliRuns < 9) {
          const cmd = [
            ['leaks', root],
            ['top', '--heap', root],
            ['recover', unfinished, path.join(root, 'cli-recovered.tach.out')],
          ][tally.cliRuns % 3]!;
          tally.cliRuns++;
          if (cmd[0] !== 'recover' || fs.existsSync(unfinished)) cliHolds(build.cli, dir, cmd, context);
        }
        tally.inputs++;
        fs.rmSync(root, { recursive: true, force: true });
      },
      10_000,
    );
    process.stderr.write(
      `rotated heap directories (${backend.name}): ${tally.inputs} directories, ${tally.operations} operations ` +
        `(${tally.refused} coded refusals), ${tally.cliRuns} CLI runs\n`,
    );
    expect(n).toBeGreaterThanOrEqual(24);
    expect(tally.cliRuns).toBeGreaterThanOrEqual(3);
  }, 600_000);
});
