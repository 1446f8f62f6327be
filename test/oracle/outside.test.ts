/**
 * The oracle suite, outside inputs (issue 36): files written by Go's runtime/pprof, google/pprof, @datadog/pprof,
 * `node --cpu-prof` and speedscope (read in place), against `go tool pprof -raw`, the .cpuprofile's own fields
 * (samples, timeDeltas, positionTicks) and the speedscope file's own samples and weights; then through every
 * output and back. Each comparison is counted; the last test prints the count.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { profpack, profpackOk } from '../support/cli-inprocess';
import { repoRoot, sharedPath } from '../support/environment';
import {
  collapsedTruth,
  comparisonCount,
  cpuprofileTruth,
  failedComparisons,
  goPprof,
  near,
  pprofRaw,
  pprofTruth,
  same,
  sameMap,
  speedscopeTruth,
  type CpuProfileJson,
  type PprofRaw,
  type Truth,
} from '../support/oracle';
import { scratchDir } from '../support/scratch-dir';
import { infoTypeTotals, type TopJson } from './printed';

const dir = scratchDir('profpack-oracle-outside-');
const shared = (name: string): string => sharedPath('data', 'outside', name);
const local = (...parts: string[]): string => path.join(repoRoot, 'test', 'fixtures', 'outside', ...parts);

const pprofFiles = [
  ...readdirSync(sharedPath('data', 'outside'))
    .filter((f) => f.endsWith('.pb.gz'))
    .map(shared),
  ...['go', 'datadog'].flatMap((d) =>
    readdirSync(local(d))
      .filter((f) => f.endsWith('.pb.gz'))
      .map((f) => local(d, f)),
  ),
  local('go-labels-threads.cpu.pb.gz'),
  local('go-small.heap.pb.gz'),
];
const cpuprofiles = [
  shared('node-cpu-prof.heavy.cpuprofile'),
  local('node-small.cpuprofile'),
  local('node', 'node.cpu-main.cpuprofile'),
  local('node', 'node.cpu-worker.cpuprofile'),
];

const outputs = new Map<string, Promise<string>>();
/** `convert FILE ARGS -o DIR/NAME`, once per output. */
function output(file: string, name: string, ...args: string[]): Promise<string> {
  const out = path.join(dir, name);
  let hit = outputs.get(out);
  if (hit === undefined) {
    hit = profpackOk(['convert', '-q', file, ...args, '-o', out]).then(() => out);
    outputs.set(out, hit);
  }
  return hit;
}

async function top(file: string, ...extra: string[]): Promise<TopJson> {
  return JSON.parse(await profpackOk(['top', '--json', '-n', '0', ...extra, file])) as TopJson;
}

/** Self per function name of a `top --json` (an unnamed function as '(anonymous)'). */
function selfByName(json: TopJson): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of json.rows) {
    const name = r.funcname === '' ? '(anonymous)' : r.funcname;
    out.set(name, (out.get(name) ?? 0) + r.self);
  }
  return out;
}

/** A truth's self map, when every leaf has a name (google/pprof's cppbench has addresses only). */
function named(self: Map<string, number>): Map<string, number> | null {
  return [...self.keys()].some((k) => k.startsWith('?')) ? null : self;
}

const raws = new Map<string, PprofRaw>();
beforeAll(async () => {
  for (const f of pprofFiles) raws.set(f, await pprofRaw(f));
}, 120_000);

describe('pprof inputs against go tool pprof -raw', () => {
  it('read: per sample type, top’s total and self per function', async () => {
    for (const file of pprofFiles) {
      const name = path.basename(file);
      const truth = pprofTruth(raws.get(file)!);
      // info prints each type's total with its significant digits (within half a unit of the third digit).
      const printed = infoTypeTotals(await profpackOk(['info', file]));
      for (const type of truth.total.keys()) {
        const want = truth.total.get(type)!;
        near(printed.get(type) ?? NaN, want, Math.abs(want) * 0.005, `${name}: info total ${type}`);
        const got = await top(file, '--sample-type', type);
        near(got.total, truth.total.get(type)!, 0, `${name}: top total ${type}`);
        const self = named(truth.self.get(type)!);
        if (self !== null) sameMap(selfByName(got), self, `${name}: top self ${type}`);
      }
    }
  }, 60_000);

  it('pprof → pprof, → Tachyon 2: go’s and top’s totals and self per function unchanged, per type', async () => {
    const outs = await Promise.all(pprofFiles.map((f) => output(f, `${path.basename(f)}.out.pb.gz`)));
    for (const [k, file] of pprofFiles.entries()) {
      const name = path.basename(file);
      const truth = pprofTruth(raws.get(file)!);
      const back = pprofTruth(await pprofRaw(outs[k]!));
      const v2 = await output(file, `${name}.v2.tach`, '--tachyon-version', '2');
      for (const type of truth.total.keys()) {
        near(back.total.get(type) ?? NaN, truth.total.get(type)!, 0, `${name} → pprof: go total ${type}`);
        const self = named(truth.self.get(type)!);
        if (self !== null) sameMap(back.self.get(type) ?? new Map(), self, `${name} → pprof: go self ${type}`);
        const got = await top(v2, '--sample-type', type);
        near(got.total, truth.total.get(type)!, 0, `${name} → Tachyon 2: top total ${type}`);
        if (self !== null) sameMap(selfByName(got), self, `${name} → Tachyon 2: top self ${type}`);
      }
    }
  }, 60_000);

  it('→ collapsed and → speedscope per type: the leaf values go says, or a coded refusal of negative values', async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(JSON.parse(readFileSync(shared('speedscope-1.25.0-file-format-schema.json'), 'utf8')));
    for (const file of pprofFiles) {
      const name = path.basename(file);
      const raw = raws.get(file)!;
      const truth = pprofTruth(raw);
      for (const [k, type] of raw.types.entries()) {
        const negative = raw.samples.some((s) => s.values[k]! < 0);
        const self = named(truth.self.get(type)!);
        const slug = type.replace('/', '-');
        for (const ext of ['collapsed', 'speedscope.json']) {
          const out = path.join(dir, `${name}.${slug}.${ext}`);
          const r = await profpack(['convert', '-q', file, '--sample-type', type, '-o', out]);
          if (negative) {
            same(r.status, 2, `${name} → ${ext} ${type}: negative values refused`);
            expect(r.stderr).toMatch(/^profpack: ERR_[A-Z0-9_]+: /);
            continue;
          }
          same(r.status, 0, `${name} → ${ext} ${type}: exit status (${r.stderr.trim()})`);
          if (r.status !== 0) continue;
          const text = readFileSync(out, 'utf8');
          let got: Truth;
          if (ext === 'collapsed') got = collapsedTruth(text);
          else {
            const json = JSON.parse(text);
            same(validate(json), true, `${name} → speedscope ${type}: schema (${ajv.errorsText(validate.errors)})`);
            got = speedscopeTruth(json);
          }
          const column = [...got.self.values()][0] ?? new Map<string, number>();
          const sum = [...column.values()].reduce((a, b) => a + b, 0);
          near(sum, truth.total.get(type)!, 0, `${name} → ${ext} ${type}: total`);
          if (self !== null) sameMap(column, self, `${name} → ${ext} ${type}: self per function`);
        }
      }
    }
  }, 60_000);

  it('Datadog wall profiles: every sample lies after the profile start (time_nanos) and within its duration', async () => {
    for (const file of pprofFiles.filter((f) => /datadog.*wall/.test(f))) {
      const name = path.basename(file);
      const whole = await top(file);
      const before = await top(file, '--from', '-1e12', '--to', '0');
      same(before.total, 0, `${name}: value before the start`);
      const duration = Number(/^Duration: ([\d.]+)/m.exec(raws.get(file)!.header)?.[1]);
      const within = await top(file, '--from', '0', '--to', String(Math.ceil(duration * 1000) + 10));
      same(within.total, whole.total, `${name}: value within [start, start + duration]`);
    }
  }, 60_000);
});

describe('diff and negative values against go tool pprof -diff_base', () => {
  const base = shared('go-runtime-pprof.cpu.pb.gz');
  const next = shared('go-runtime-pprof-labels.cpu.pb.gz');

  it('diff BASE NEW: totals and the self change per function, per type', async () => {
    const delta = pprofTruth(await pprofRaw(next, base));
    const baseTruth = pprofTruth(raws.get(base)!);
    const nextTruth = pprofTruth(raws.get(next)!);
    for (const type of delta.total.keys()) {
      const r = await profpack(['diff', '--json', '-n', '0', '--sample-type', type, base, next]);
      same(r.status, 0, `diff ${type}: exit status (${r.stderr.trim()})`);
      if (r.status !== 0) continue;
      const json = JSON.parse(r.stdout) as {
        baseTotal: number;
        newTotal: number;
        rows: { funcname: string; selfDelta: number }[];
      };
      same(json.baseTotal, baseTruth.total.get(type), `diff ${type}: base total`);
      same(json.newTotal, nextTruth.total.get(type), `diff ${type}: new total`);
      const got = new Map<string, number>();
      for (const row of json.rows) got.set(row.funcname, (got.get(row.funcname) ?? 0) + row.selfDelta);
      sameMap(got, delta.self.get(type)!, `diff ${type}: self change per function`);
    }
  }, 60_000);

  it('a profile with negative values (go tool pprof -proto -diff_base): read exactly; speedscope and collapsed refuse it with a code', async () => {
    const file = path.join(dir, 'go-diff.pb.gz');
    writeFileSync(file, Buffer.from(await goPprof(['-proto', `-diff_base=${base}`, next]), 'latin1'));
    const raw = await pprofRaw(file);
    const truth = pprofTruth(raw);
    same(
      raw.samples.some((x) => x.values[0]! < 0),
      true,
      'go-diff.pb.gz: go says it holds negative values',
    );
    for (const type of truth.total.keys()) {
      const got = await top(file, '--sample-type', type);
      near(got.total, truth.total.get(type)!, 0, `go-diff.pb.gz: top total ${type}`);
      sameMap(selfByName(got), truth.self.get(type)!, `go-diff.pb.gz: top self ${type}`);
    }
    for (const ext of ['collapsed', 'speedscope.json']) {
      const r = await profpack(['convert', '-q', file, '-o', path.join(dir, `go-diff.${ext}`)]);
      same(r.status, 2, `go-diff.pb.gz → ${ext}: negative values refused (exit status)`);
      same(/^profpack: ERR_[A-Z0-9_]+: /.test(r.stderr), true, `go-diff.pb.gz → ${ext}: a coded error (${r.stderr})`);
    }
  }, 60_000);
});

describe('.cpuprofile inputs against their own fields', () => {
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as CpuProfileJson;

  it('read: samples per function, wall time per function (gap to the next sample), total', async () => {
    for (const file of cpuprofiles) {
      const name = path.basename(file);
      const truth = cpuprofileTruth(read(file));
      for (const type of ['samples/count', 'wall/nanoseconds']) {
        const got = await top(file, '--sample-type', type);
        near(got.total, truth.total.get(type)!, 1, `${name}: top total ${type}`);
        sameMap(selfByName(got), truth.self.get(type)!, `${name}: top self ${type}`, 1);
        // A script's file is a path, as its heap frames and other tools name it, never a file: URL.
        same(got.rows.filter((r) => r.filename.startsWith('file:')).length, 0, `${name}: file: URLs in top`);
      }
    }
  }, 60_000);

  it('top --by line gives the hot lines of positionTicks', async () => {
    for (const file of cpuprofiles) {
      const name = path.basename(file);
      const truth = cpuprofileTruth(read(file));
      if (truth.lineTicks.size === 0) continue;
      const got = await top(file, '--by', 'line', '--sample-type', 'samples/count');
      const lines = new Map<string, number>();
      for (const r of got.rows) {
        const key = `${r.funcname === '' ? '(anonymous)' : r.funcname}:${r.lineno}`;
        lines.set(key, (lines.get(key) ?? 0) + r.self);
      }
      // Every sample of a node with positionTicks is on one of its lines: compare those lines.
      const want = new Map([...truth.lineTicks].filter(([, v]) => v > 0));
      sameMap(new Map([...lines].filter(([k]) => want.has(k) || !k.endsWith(':null'))), want, `${name}: top --by line`);
    }
  }, 60_000);

  it('Node ≤ 10 form (timestamps, no timeDeltas) reads to the same totals', async () => {
    const json = read(shared('node-cpu-prof.heavy.cpuprofile'));
    let t = json.startTime;
    const timestamps = json.timeDeltas!.map((d) => (t += d));
    const old = { ...json, timestamps, timeDeltas: undefined };
    const file = path.join(dir, 'node10.cpuprofile');
    writeFileSync(file, JSON.stringify(old));
    const truth = cpuprofileTruth(json);
    for (const type of ['samples/count', 'wall/nanoseconds']) {
      const r = await profpack(['top', '--json', '-n', '0', '--sample-type', type, file]);
      same(r.status, 0, `node10.cpuprofile: top ${type} exit status (${r.stderr.trim()})`);
      if (r.status === 0)
        near(
          (JSON.parse(r.stdout) as TopJson).total,
          truth.total.get(type)!,
          1,
          `node10.cpuprofile: top total ${type}`,
        );
    }
  });

  it('→ .cpuprofile, → pprof: the same sample times, samples per function (go), no negative timeDeltas', async () => {
    for (const file of cpuprofiles) {
      const name = path.basename(file);
      const truth = cpuprofileTruth(read(file));
      const again = read(await output(file, `${name}.out.cpuprofile`));
      same(again.timeDeltas!.filter((d) => d < 0).length, 0, `${name} → cpuprofile: negative timeDeltas`);
      const back = cpuprofileTruth(again);
      same(back.times!.get('main'), truth.times!.get('main'), `${name} → cpuprofile: sample times`);
      sameMap(back.self.get('samples/count')!, truth.self.get('samples/count')!, `${name} → cpuprofile: self samples`);
      const raw = pprofTruth(await pprofRaw(await output(file, `${name}.pb.gz`)));
      near(raw.total.get('samples/count') ?? NaN, truth.total.get('samples/count')!, 0, `${name} → pprof: go samples`);
      sameMap(
        raw.self.get('samples/count') ?? new Map(),
        truth.self.get('samples/count')!,
        `${name} → pprof: go self samples`,
      );
      near(
        raw.total.get('wall/nanoseconds') ?? NaN,
        truth.total.get('wall/nanoseconds')!,
        1,
        `${name} → pprof: go wall`,
      );
    }
  }, 60_000);
});

describe('speedscope input against its own samples and weights', () => {
  it('speedscope 0.6.0 two-sampled: total and self per frame (seconds as nanoseconds)', async () => {
    const file = shared('speedscope_0.6.0_two-sampled.speedscope.json');
    const truth = speedscopeTruth(JSON.parse(readFileSync(file, 'utf8')));
    const self = new Map([...truth.self.get('value/seconds')!].map(([k, v]) => [k, v * 1e9]));
    const got = await top(file);
    near(got.total, truth.total.get('value/seconds')! * 1e9, 0, 'speedscope 0.6.0: top total');
    sameMap(selfByName(got), self, 'speedscope 0.6.0: top self');
  });
});

describe('the closing count', () => {
  it('prints how many comparisons this file made', () => {
    expect(comparisonCount()).toBeGreaterThan(300);
    const failed = failedComparisons();
    process.stdout.write(
      `oracle suite (outside inputs): ${comparisonCount()} comparisons against go tool pprof and the files' own ` +
        `fields; ${failed.length} failed\n` +
        failed.map((f) => `  ${f}\n`).join(''),
    );
  });
});
