// test tier: slow (leaking programs recorded on both samplers, ~30 s)
/**
 * Leaks over a program's whole life, end to end: programs that leak beside a garbage maker, three of them ending
 * the leak by themselves (a module scope that dies, a server that closes, a promise that settles) before the
 * recorder's last poll, one holding it to the end. Each is recorded with `profpack record`'s engine (runRecorded)
 * on the sampler the backend picks (native: V8's C++ API; PROFPACK_BACKEND=js: the inspector) and asked through
 * the compiled CLI. Judged against what each program reports it kept (bytes, and bytes per minute of its own wall
 * clock, the clock the polls run on), never against time.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { runRecorded as RunRecorded } from '../../lib/record/launch/index';
import type { LeakReport } from '../../lib/memory/index';
import { heapSamplerChoice } from '../../lib/record/program/heap/index';
import { buildForTests } from '../support/build';

const fixtures = path.join(__dirname, '..', 'fixtures', 'heap');
const { build, dir } = buildForTests('profpack-teardown-');
let runRecorded: typeof RunRecorded;
beforeAll(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build is compiled at run time into a temporary folder
  runRecorded = (require(path.join(build.dist, 'record', 'index.js')) as { runRecorded: typeof RunRecorded })
    .runRecorded;
});

interface Truth {
  site: string;
  leakedBytes: number;
  bytesPerMin: number;
}

const within = (ratio: number, low: number, high: number) => ({ ratio, ok: ratio >= low && ratio <= high });

describe.each([
  ['a listener leak freed when the module scope dies', 'teardown-listener.js', [], true],
  [
    'an HTTP cache leak under a bounded loopback load, freed when the server closes',
    'http-cache-teardown.js',
    [],
    true,
  ],
  ['a promise leak (Promise.race on a pending promise), freed when it settles', 'promise-leak.js', [], true],
  ['a listener leak held to the end', 'teardown-listener.js', ['120', '20', 'hold'], false],
])('%s, beside a garbage maker', (_what, program, args, freedAtExit) => {
  let report: LeakReport;
  let text: string;
  let did: Truth;
  let atPeak: { json: { heap: { peakIncludesGarbage: boolean; peakMs: number; endMs: number } }; text: string };
  beforeAll(async () => {
    const name = `${path.basename(program, '.js')}-${args.join('-')}`;
    const truth = path.join(dir, `${name}.json`);
    const out = path.join(dir, `${name}.tach`);
    const { code } = await runRecorded([process.execPath, path.join(fixtures, program), truth, ...args], {
      out,
      // 2 KiB: each 8 KB payload is sampled with p = 0.98, so the inspector's rounded count (round(1/p) = 1) costs
      // 2 %, not the 14 % it costs at 4 KiB (docs/memory.md). A poll at every harvest on both samplers: paced polls
      // leave a 3-s program a handful, fewer the more loaded the machine (the native sampler's too: 3-4 polls in
      // 4-6 s at load 8, and then the leak's growth is not seen).
      heap: { intervalBytes: 2048, polls: 'harvest' },
      harvestMs: 50,
      stdio: 'pipe',
    });
    expect(code).toBe(0);
    did = JSON.parse(fs.readFileSync(truth, 'utf8')) as Truth;
    const leaks = (...flags: string[]) => {
      const r = spawnSync(process.execPath, [build.cli, 'leaks', out, ...flags], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    report = JSON.parse(leaks('--json', '-n', '0')) as LeakReport;
    text = leaks();
    const top = (...flags: string[]) => {
      const r = spawnSync(process.execPath, [build.cli, 'top', out, '--at', 'peak', ...flags], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    atPeak = { json: JSON.parse(top('--json')) as typeof atPeak.json, text: top() };
  }, 180_000);

  it('names the leaking site first, with the bytes and the growth the program reports (0.7-1.3x)', () => {
    const [first] = report.suspects;
    expect(first!.funcname).toBe(did.site);
    expect(first!.filename).toBe(path.join(fixtures, program));
    const bytes = freedAtExit ? first!.run.peakBytes : first!.liveBytes;
    const growth = freedAtExit ? first!.run.growthBytesPerMin : first!.growthBytesPerMin;
    expect(within(bytes / did.leakedBytes, 0.7, 1.3)).toMatchObject({ ok: true });
    expect(within(growth / did.bytesPerMin, 0.7, 1.3)).toMatchObject({ ok: true });
  });

  it(freedAtExit ? 'says it grew and was freed at exit' : 'says it is held at the end', () => {
    const [first] = report.suspects;
    expect(first!.run).toMatchObject({ counted: true, gcSeen: true, freedAtExit });
    if (freedAtExit) {
      expect(first!.liveBytes).toBeLessThan(first!.run.peakBytes / 2);
      expect(report.freedBeforeEnd).toBeGreaterThan(0);
      expect(text).toMatch(new RegExp(`${did.site} .*— grew \\+[\\d.]+[KM]B/min for [\\d.]+ s, freed at exit`));
      expect(text).toContain('the end differs from the run');
    } else {
      expect(first!.run.freedAtMs).toBeNull();
      expect(first!.liveBytes).toBeGreaterThan(first!.run.peakBytes * 0.9);
    }
  });

  it("labels a peak at a poll that forced no GC (the native sampler's, before the last) as including garbage", () => {
    const { heap } = atPeak.json;
    const native = heapSamplerChoice().kind === 'native';
    expect(heap.peakIncludesGarbage).toBe(native && heap.peakMs < heap.endMs);
    // The garbage maker ran to the teardown: the peak is a poll of the run, not the last one.
    expect(heap.peakMs).toBeLessThan(heap.endMs);
    expect(atPeak.text.includes('it includes garbage not yet collected')).toBe(native);
  });

  it('never makes the garbage maker a suspect', () => {
    const garbage = report.suspects.find((s) => s.funcname === 'makeGarbage');
    if (garbage === undefined) return;
    expect(garbage.run).toMatchObject({ counted: false, freedAtMs: null });
    expect(garbage.score).toBeLessThan(report.suspects[0]!.score / 20);
  });
});
