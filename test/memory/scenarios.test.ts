/**
 * The issue's done-when scenarios, recorded for real (`profpack record`'s
 * engine, runRecorded, heap events into a HeapTraceCollector) and asked the
 * heap questions: a planted leak beside a garbage maker, and a program that
 * runs out of heap. Judged against what the programs report they did, never
 * against time: the programs run a fixed number of steps.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeapTraceCollector, heapProfile, leakSuspects } from '../../lib/memory/index';
import { writeProfile } from '../../lib/formats/index';
import { aggregate } from '../../lib/query/aggregate';
import type { runRecorded as RunRecorded } from '../../lib/record/run';
import { compileBuild, type Build } from '../convert/build';
import { goPprofTopFirst } from '../support/outside-tools';

const fixtures = path.join(__dirname, '..', 'fixtures', 'heap');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-heapq-'));
let build: Build;
let runRecorded: typeof RunRecorded;
beforeAll(() => {
  build = compileBuild();
  runRecorded = (require(path.join(build.dist, 'record', 'index.js')) as { runRecorded: typeof RunRecorded })
    .runRecorded;
});
afterAll(() => {
  build?.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

const INTERVAL = 4096;

function firstBy(profile: ReturnType<typeof heapProfile>['profile'], type: string, n = 1): string[] {
  return aggregate(profile, { sampleType: type, limit: n }).rows.map((r) => r.funcname!);
}

describe('a planted leak beside a garbage maker', () => {
  let trace: HeapTraceCollector;
  let did: { steps: number; leakedBytes: number; garbageBytes: number };
  beforeAll(async () => {
    trace = new HeapTraceCollector();
    const report = path.join(dir, 'did.json');
    const program = path.join(fixtures, 'leak-and-garbage.js');
    const { code } = await runRecorded([process.execPath, '--expose-gc', program, report, '120', '25'], {
      out: path.join(dir, 'leak.tach'),
      heap: { intervalBytes: INTERVAL },
      heapSink: trace,
      harvestMs: 50,
      stdio: 'pipe',
    });
    expect(code).toBe(0);
    did = JSON.parse(fs.readFileSync(report, 'utf8'));
  }, 120_000);

  it('leak first by inuse_space; garbage maker first by alloc_space, not in the top three in use', () => {
    const { profile } = heapProfile(trace);
    expect(firstBy(profile, 'inuse_space')).toEqual(['leakMemory']);
    expect(firstBy(profile, 'alloc_space')).toEqual(['makeGarbage']);
    expect(firstBy(profile, 'inuse_space', 3)).not.toContain('makeGarbage');
    // The scaled estimates against what the program did: ~75 samples of the leak, ~750 of the garbage.
    const inuse = aggregate(profile, { sampleType: 'inuse_space', limit: 1 }).rows[0]!.self;
    expect(inuse / did.leakedBytes).toBeGreaterThan(0.5);
    expect(inuse / did.leakedBytes).toBeLessThan(1.6);
    const allocated = aggregate(profile, { sampleType: 'alloc_space', limit: 1 }).rows[0]!.self;
    expect(allocated / did.garbageBytes).toBeGreaterThan(0.6);
    expect(allocated / did.garbageBytes).toBeLessThan(1.4);
  });

  it('the leak is the first suspect: it grew steadily, and the garbage maker did not', () => {
    const report = leakSuspects(trace);
    const [first] = report.suspects;
    expect(first).toMatchObject({ funcname: 'leakMemory' });
    expect(first!.fit).toBeGreaterThan(0.8);
    expect(first!.growthBytesPerMin).toBeGreaterThan(0);
    const garbage = report.suspects.find((s) => s.funcname === 'makeGarbage');
    if (garbage !== undefined) expect(garbage.score).toBeLessThan(first!.score / 4);
  });

  it('at the peak of sampled live bytes the garbage was live as well', () => {
    const { profile, info } = heapProfile(trace, { at: 'peak' });
    expect(info.peakSampledBytes).toBeGreaterThanOrEqual(info.endSampledBytes);
    const atPeak = aggregate(profile, { sampleType: 'inuse_space', limit: 0 }).rows;
    expect(atPeak.find((r) => r.funcname === 'makeGarbage')?.self ?? 0).toBeGreaterThan(0);
  });

  it("pprof out: go tool pprof names profpack top's first function, for inuse_space and alloc_space", () => {
    const { profile } = heapProfile(trace);
    const file = path.join(dir, 'leak.pb.gz');
    writeProfile(profile, file, 'pprof');
    expect(goPprofTopFirst(file, 'inuse_space')).toBe(firstBy(profile, 'inuse_space')[0]);
    expect(goPprofTopFirst(file, 'alloc_space')).toBe(firstBy(profile, 'alloc_space')[0]);
  });
});

describe('a program that runs out of heap', () => {
  it('its inuse_space names the hoarding function first', async () => {
    const trace = new HeapTraceCollector();
    const { code, signal } = await runRecorded(
      [process.execPath, '--max-old-space-size=64', path.join(fixtures, 'hoarder.js')],
      { out: path.join(dir, 'oom.tach'), heap: { intervalBytes: 64 * 1024 }, heapSink: trace, stdio: 'pipe' },
    );
    expect(signal ?? code).toSatisfy((s: unknown) => s === 'SIGABRT' || s === 134);
    const { profile, info } = heapProfile(trace);
    expect(firstBy(profile, 'inuse_space')).toEqual(['hoardArrays']);
    // Most of the 64 MB old space, as the sampled heap saw it before V8 gave up.
    expect(aggregate(profile, { sampleType: 'inuse_space', limit: 1 }).rows[0]!.self).toBeGreaterThan(16 * 1024 * 1024);
    expect(info.peakMs).toBe(info.atMs);
  }, 120_000);
});
