// test tier: slow (every outside profile against go tool pprof and the other outside tools, ~88 s)
// Profiles written by other tools (../shared/data/outside and the fixtures
// test/fixtures/outside/make.sh made with Go's runtime/pprof and node
// --cpu-prof), checked with the outside tools themselves:
// - every file converts (exit 0) or is refused with one `profpack: ERR_…`
//   line (exit 2), never a stack trace;
// - `profpack top --sample-type T` equals `go tool pprof -top -sample_index=T`
//   for pprof (values in the type's unit) and counts taken straight from the
//   JSON for .cpuprofile and speedscope (weights as values);
// - the round trip through Tachyon back to the source format keeps values,
//   per-function self/total and duration, as Go's pprof reads it;
// - what profpack writes passes `go tool pprof -raw/-tags` (profile.proto's
//   CheckValid rules run on load), speedscope's own JSON schema (ajv), and
//   CPython 3.15's reader.
// Go (Debian golang-go) and CPython are required: a missing tool fails the
// test, it never skips.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { dumpProfile, dumpToJsonText } from '../../lib/tachyon/index';
import { SLOWDOWN, repoRoot, sharedPath } from '../support/environment';
import { cpythonInterpreter } from '../support/cpython.mjs';
import { buildForTests } from '../support/build';

const outsideDir = sharedPath('data', 'outside');
const fixtureDir = path.join(repoRoot, 'test', 'fixtures', 'outside');
const schemaFile = path.join(outsideDir, 'speedscope-1.25.0-file-format-schema.json');

/** Every outside profile: the shared ones and our fixtures. */
const inputs = [
  ...readdirSync(outsideDir)
    .filter((f) => !f.endsWith('.md') && f !== path.basename(schemaFile))
    .map((f) => path.join(outsideDir, f)),
  ...readdirSync(fixtureDir)
    .filter((f) => f.endsWith('.pb.gz') || f.endsWith('.cpuprofile'))
    .map((f) => path.join(fixtureDir, f)),
];
const pprofInputs = inputs.filter((f) => f.endsWith('.pb.gz'));
const cpuprofileInputs = inputs.filter((f) => f.endsWith('.cpuprofile'));

/** The sample type each pprof input is compared on (the heap ones are read with --sample-type). */
function sampleTypeOf(file: string): string | undefined {
  // The shared heap profile's alloc_objects is a million samples: its in-use objects are a few thousand.
  if (file.includes('go-runtime-pprof.heap')) return 'inuse_objects';
  return file.includes('.heap.') ? 'alloc_objects' : undefined;
}

const { build, dir: work } = buildForTests('profpack-outside-');

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8', cwd: work, maxBuffer: 1 << 26 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function go(...args: string[]): string {
  const run = spawnSync('go', ['tool', 'pprof', ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent' },
  });
  if (run.error !== undefined)
    throw new Error(`go tool pprof is required (apt-get install golang-go): ${run.error.message}`);
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
}

interface Counts {
  self: number;
  total: number;
}

/** `go tool pprof -top` rows: function → flat/cum in the sample type's own unit (counts here). */
function goTop(
  file: string,
  sampleIndex: string,
): { rows: Map<string, Counts>; total: number; duration: string | undefined; time: string | undefined } {
  const text = go('-top', '-nodefraction=0', '-nodecount=0', `-sample_index=${sampleIndex}`, '-unit=ns', file);
  const rows = new Map<string, Counts>();
  let total = NaN;
  let duration: string | undefined;
  let time: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('Time: ')) time = line;
    const t = /of (\d+)(ns)? total/.exec(line);
    if (t !== null) total = Number(t[1]);
    const d = /^Duration: (\S+),/.exec(line);
    if (d !== null) duration = d[1];
    const m = /^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.*)$/.exec(line);
    if (m === null) continue;
    const name = m[3]!.replace(/ \(inline\)$/, '');
    const prev = rows.get(name) ?? { self: 0, total: 0 };
    rows.set(name, { self: prev.self + Number(m[1]), total: prev.total + Number(m[2]) });
  }
  return { rows, total, duration, time };
}

/** `profpack top --json` rows by function name (Go's pprof names functions without their file), or by name and file. */
function ourTop(file: string, ...flags: string[]): { rows: Map<string, Counts>; samples: number; total: number } {
  return ourTopBy(false, file, ...flags);
}

function ourTopBy(
  withFile: boolean,
  file: string,
  ...flags: string[]
): { rows: Map<string, Counts>; samples: number; total: number } {
  const run = cli('top', file, '-n', '0', '--json', ...flags);
  expect(run.code, run.stderr).toBe(0);
  const result = JSON.parse(run.stdout) as {
    samples: number;
    total: number;
    rows: { funcname: string; filename: string; self: number; total: number }[];
  };
  const rows = new Map<string, Counts>();
  for (const r of result.rows) {
    const name = (r.funcname === '' ? '(anonymous)' : r.funcname) + (withFile ? ` ${r.filename}` : '');
    const prev = rows.get(name) ?? { self: 0, total: 0 };
    rows.set(name, { self: prev.self + r.self, total: prev.total + r.total });
  }
  return { rows, samples: result.samples, total: result.total };
}

function sortedEntries(m: Map<string, Counts>): [string, Counts][] {
  return [...m.entries()]
    .filter(([, v]) => v.self !== 0 || v.total !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The value column Go's pprof should compare, and how many ns one sample is worth in it (1 for counts). */
function goColumn(file: string): { index: string; perSample: number } {
  const raw = go('-raw', file);
  const header = /^(\S+\/\S+(?: \S+\/\S+)*)\s*$/m.exec(raw.slice(raw.indexOf('Samples:') + 8))![1]!.split(' ');
  const period = Number(/^Period: (\d+)/m.exec(raw)?.[1] ?? '0');
  const wanted = sampleTypeOf(file);
  const pick = header.find((t) => (wanted === undefined ? /^samples?\/count$/.test(t) : t.startsWith(`${wanted}/`)));
  if (pick !== undefined) return { index: pick.split('/')[0]!, perSample: 1 };
  const time = header.find((t) => /^(cpu|wall)\//.test(t))!;
  return { index: time.split('/')[0]!, perSample: period };
}

/** Self and total per function, counted straight from a .cpuprofile's nodes and samples (no profpack code). */
function cpuprofileCounts(file: string): { rows: Map<string, Counts>; samples: number; durationUs: number } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
    samples: number[];
    startTime: number;
    endTime: number;
  };
  const parent = new Map<number, number>();
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const rows = new Map<string, Counts>();
  for (const id of p.samples) {
    const seen = new Set<string>();
    let cur: number | undefined = id;
    let leaf = true;
    while (cur !== undefined && parent.has(cur)) {
      const cf = byId.get(cur)!.callFrame;
      // profpack's function key: name and file (V8 names a function "" and its URL; the GC and idle have no URL);
      // a file: URL is its path (Node's fileURLToPath), as every reader names it.
      const name = `${cf.functionName === '' ? '(anonymous)' : cf.functionName} ${cf.url.startsWith('file:') ? fileURLToPath(cf.url) : cf.url}`;
      const row = rows.get(name) ?? { self: 0, total: 0 };
      if (leaf) row.self++;
      if (!seen.has(name)) row.total++;
      seen.add(name);
      rows.set(name, row);
      leaf = false;
      cur = parent.get(cur);
    }
  }
  return { rows, samples: p.samples.length, durationUs: p.endTime - p.startTime };
}

describe('every outside profile converts or is refused with one coded line', () => {
  it('found the outside files', () => expect(inputs.length).toBeGreaterThanOrEqual(11));
  for (const file of inputs) {
    it(path.basename(file), () => {
      for (const out of ['x.tach', 'x.pb.gz', 'x.cpuprofile', 'x.speedscope.json', 'x.collapsed']) {
        const run = cli('convert', file, '-o', out, '-q');
        expect(run.stderr).not.toMatch(/\n\s+at /);
        if (run.code === 0) {
          for (const line of run.stderr.split('\n').filter((l) => l !== ''))
            expect(line).toMatch(/^profpack: warning: /);
        } else {
          // Warnings on what the output would drop may come first; the error is one coded line, last.
          expect(run.code).toBe(2);
          expect(run.stderr).toMatch(/^(profpack: warning: [^\n]+\n)*profpack: ERR_[A-Z0-9_]+: [^\n]+\n$/);
        }
      }
    });
  }

  it('a heap profile reads in its default type (bytes), any other type by --sample-type, and a missing one is refused naming them', () => {
    const heap = path.join(outsideDir, 'go-runtime-pprof.heap.pb.gz');
    const top = cli('top', heap, '--json');
    expect(top.code, top.stderr).toBe(0);
    expect(JSON.parse(top.stdout).sampleType).toEqual({ type: 'inuse_space', unit: 'bytes' });
    const wrong = cli('top', heap, '--sample-type', 'cpu');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /^profpack: ERR_CONVERT_SAMPLE_TYPE: the profile has no sample type "cpu" \(it has alloc_objects\/count, alloc_space\/bytes, inuse_objects\/count, inuse_space\/bytes\)/,
    );
    // Version 1 takes a count column as its ticks when named; bytes it refuses, naming version 2.
    expect(cli('convert', heap, '--sample-type', 'inuse_objects', '-o', 'heap.tach', '-q').code).toBe(0);
    expect(cli('convert', heap, '--sample-type', 'inuse_space', '-o', 'heap.tach', '-q').stderr).toMatch(
      /ERR_TACHYON_V1_WEIGHTED: .*version 2/,
    );
  });

  it('labels: thread ids and names become threads; every other label is kept and written back', () => {
    const file = path.join(fixtureDir, 'go-labels-threads.cpu.pb.gz');
    const run = cli('convert', file, '-o', 'labels.speedscope.json');
    expect(run.code).toBe(0);
    const ss = JSON.parse(readFileSync(path.join(work, 'labels.speedscope.json'), 'utf8')) as {
      profiles: { name: string }[];
    };
    // Samples outside pprof.Do (the runtime's own) have no labels: thread 0, no name.
    expect(ss.profiles.map((p) => p.name).sort()).toEqual(['thread 0', 'thread 1 (hasher)', 'thread 2 (sorter)']);
    // Go's pprof sees the same labels in what we write as in the input: the thread labels under their own keys, and pprof.Do's.
    expect(cli('convert', file, '-o', 'labels.pb.gz').code).toBe(0);
    const tags = go('-tags', path.join(work, 'labels.pb.gz'));
    expect(tags).toBe(go('-tags', file));
    expect(tags).toMatch(/thread name:[\s\S]*hasher[\s\S]*sorter|thread name:[\s\S]*sorter[\s\S]*hasher/);
    expect(tags).toMatch(/phase:/);
    const dd = path.join(outsideDir, 'datadog-pprof-5.20.0-wall-labels.pb.gz');
    expect(cli('convert', dd, '-o', 'dd.pb.gz', '-q').code).toBe(0);
    const ddTags = go('-tags', path.join(work, 'dd.pb.gz'));
    expect(ddTags).toMatch(/Main Event Loop/);
    expect(ddTags).toMatch(/span id:/);
  });
});

describe("pprof: profpack top equals go tool pprof -top in the type's unit; the round trip through Tachyon keeps what Go sees", () => {
  for (const file of pprofInputs) {
    it(path.basename(file), () => {
      const { index } = goColumn(file);
      const theirs = goTop(file, index);
      const ours = ourTop(file, '--sample-type', index);
      expect(ours.total).toBe(theirs.total);
      expect(sortedEntries(ours.rows)).toEqual(sortedEntries(theirs.rows));

      // pprof → Tachyon version 2 → pprof (aggregated, as Go writes it): Go's own view of the result.
      expect(cli('convert', file, '--tachyon-version', '2', '-o', 'rt.tach', '-q').code).toBe(0);
      expect(cli('convert', 'rt.tach', '--aggregate', '-o', 'rt.pb.gz', '-q').code).toBe(0);
      const back = goTop(path.join(work, 'rt.pb.gz'), index);
      expect(back.total).toBe(ours.total);
      expect(sortedEntries(back.rows)).toEqual(sortedEntries(ours.rows));
      if (theirs.duration !== undefined) expect(back.duration).toBe(theirs.duration);
      // time_nanos (the epoch) survives: Go prints the same start time.
      expect(back.time).toBe(theirs.time);
    });
  }
});

describe('.cpuprofile: profpack top equals counts from the JSON; the round trip keeps them', () => {
  for (const file of cpuprofileInputs) {
    it(path.basename(file), () => {
      const theirs = cpuprofileCounts(file);
      // Counted in samples (the .cpuprofile's default type is wall time, each sample weighing its gap).
      const ours = ourTopBy(true, file, '--sample-type', 'samples');
      expect(ours.samples).toBe(theirs.samples);
      expect(sortedEntries(ours.rows)).toEqual(sortedEntries(theirs.rows));
      expect(cli('convert', file, '-o', 'rt.tach', '-q').code).toBe(0);
      expect(cli('convert', 'rt.tach', '-o', 'rt.cpuprofile', '-q').code).toBe(0);
      const back = cpuprofileCounts(path.join(work, 'rt.cpuprofile'));
      expect(back.samples).toBe(theirs.samples);
      expect(sortedEntries(back.rows)).toEqual(sortedEntries(theirs.rows));
      // Duration (endTime - startTime) through Tachyon's stats block.
      expect(back.durationUs).toBe(theirs.durationUs);
    });
  }

  it('anonymous functions reach pprof as "(anonymous)", not Go\'s "<unknown>"', () => {
    expect(cli('convert', path.join(fixtureDir, 'node-small.cpuprofile'), '-o', 'anon.pb.gz', '-q').code).toBe(0);
    const top = goTop(path.join(work, 'anon.pb.gz'), 'samples');
    expect(top.rows.has('(anonymous)')).toBe(true);
    expect(top.rows.has('<unknown>')).toBe(false);
    // A V8 start time is monotonic, not the epoch: no Time line, and the comment says why.
    expect(top.time).toBeUndefined();
    expect(go('-comments', path.join(work, 'anon.pb.gz'))).toContain('not the Unix epoch');
  });

  it('the nested "head" form of Node ≤ 10 reads to the same samples as the flat one', () => {
    const file = path.join(outsideDir, 'node-cpu-prof.heavy.cpuprofile');
    const flat = JSON.parse(readFileSync(file, 'utf8')) as {
      nodes: {
        id: number;
        callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number; scriptId: string };
        hitCount: number;
        children?: number[];
      }[];
      startTime: number;
      endTime: number;
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(flat.nodes.map((n) => [n.id, n]));
    const nest = (id: number): unknown => {
      const n = byId.get(id)!;
      const cf = n.callFrame;
      return {
        id,
        functionName: cf.functionName,
        url: cf.url,
        scriptId: cf.scriptId,
        lineNumber: cf.lineNumber + 1,
        columnNumber: cf.columnNumber + 1,
        hitCount: n.hitCount,
        children: (n.children ?? []).map(nest),
      };
    };
    let t = flat.startTime;
    const timestamps = flat.timeDeltas.map((d) => (t += d));
    const old = {
      head: nest(flat.nodes[0]!.id),
      startTime: flat.startTime / 1e6,
      endTime: flat.endTime / 1e6,
      samples: flat.samples,
      timestamps,
    };
    writeFileSync(path.join(work, 'old.cpuprofile'), JSON.stringify(old));
    // The nested form has no positionTicks (hot lines): the flat one without them is the same profile.
    const flatNoTicks = { ...flat, nodes: flat.nodes.map((n) => ({ ...n, positionTicks: undefined })) };
    writeFileSync(path.join(work, 'flat-no-ticks.cpuprofile'), JSON.stringify(flatNoTicks));
    const a = cli('top', path.join(work, 'flat-no-ticks.cpuprofile'), '-n', '0', '--by', 'line', '--json');
    const b = cli('top', path.join(work, 'old.cpuprofile'), '-n', '0', '--by', 'line', '--json');
    expect(b.code, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout));
  });
});

describe('speedscope: weights are values, as speedscope ranks them; our output passes its schema', () => {
  it('the two-sampled file: each profile ranks as its weights say', () => {
    const file = path.join(outsideDir, 'speedscope_0.6.0_two-sampled.speedscope.json');
    const ss = JSON.parse(readFileSync(file, 'utf8')) as {
      shared: { frames: { name: string }[] };
      profiles: { unit: string; samples: number[][]; weights: number[] }[];
    };
    // profpack reads a time unit as nanoseconds (its time/nanoseconds type).
    const NS: Record<string, number> = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9 };
    ss.profiles.forEach((profile, index) => {
      const rows = new Map<string, Counts>();
      profile.samples.forEach((stack, i) => {
        // A weight is the sample's value (never a count of copies), in the profile's unit.
        const w = profile.weights[i]! * (NS[profile.unit] ?? 1);
        stack.forEach((f, k) => {
          const name = ss.shared.frames[f]!.name;
          const row = rows.get(name) ?? { self: 0, total: 0 };
          if (k === stack.length - 1) row.self += w;
          if (stack.indexOf(f) === k) row.total += w;
          rows.set(name, row);
        });
      });
      expect(sortedEntries(ourTop(file, '--thread', String(index)).rows)).toEqual(sortedEntries(rows));
    });
  });

  it('an "evented" profile (what speedscope\'s Export writes) is refused with one coded line', () => {
    const evented = {
      $schema: 'https://www.speedscope.app/file-format-schema.json',
      shared: { frames: [{ name: 'main' }] },
      profiles: [
        {
          type: 'evented',
          name: 'x',
          unit: 'milliseconds',
          startValue: 0,
          endValue: 5,
          events: [
            { type: 'O', frame: 0, at: 0 },
            { type: 'C', frame: 0, at: 5 },
          ],
        },
      ],
    };
    writeFileSync(path.join(work, 'evented.speedscope.json'), JSON.stringify(evented));
    const run = cli('top', 'evented.speedscope.json');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^profpack: ERR_CONVERT_UNSUPPORTED_FORMAT: this is [^\n]*evented[^\n]*: profpack does not read it \(at byte 0\)\n$/,
    );
  });

  it('every outside profile converted to speedscope validates against speedscope 1.25.0 schema', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8')) as object);
    let checked = 0;
    for (const file of inputs) {
      const flags = sampleTypeOf(file) === undefined ? [] : ['--sample-type', sampleTypeOf(file)!];
      const run = cli('convert', file, ...flags, '-o', 'v.speedscope.json', '-q');
      expect(run.code, run.stderr).toBe(0);
      const ok = validate(JSON.parse(readFileSync(path.join(work, 'v.speedscope.json'), 'utf8')));
      expect(ok, `${path.basename(file)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      checked++;
    }
    expect(checked).toBe(inputs.length);
    // The validator is not vacuous: a profile without weights fails.
    expect(
      validate({
        $schema: 'https://www.speedscope.app/file-format-schema.json',
        shared: { frames: [] },
        profiles: [{ type: 'sampled', name: 'x', unit: 'none', startValue: 0, endValue: 0, samples: [] }],
      }),
    ).toBe(false);
  });
});

describe('Tachyon: CPython 3.15 reads every converted outside profile as profpack dump --json says', () => {
  it('check_with_cpython.py --strict on the converted files, with our dumps as the expected ones', () => {
    const dir = path.join(work, 'cpython');
    rmSync(dir, { recursive: true, force: true });
    spawnSync('mkdir', ['-p', dir]);
    let n = 0;
    for (const file of inputs) {
      const out = path.join(dir, `${path.basename(file).replace(/\W+/g, '_')}.bin`);
      const flags = sampleTypeOf(file) === undefined ? [] : ['--sample-type', sampleTypeOf(file)!];
      const run = cli('convert', file, ...flags, '-o', out, '-q');
      // A profile with no count of samples (cppbench's cpu/nanoseconds only) has no ticks for version 1: refused, naming version 2.
      if (run.code === 2 && /ERR_TACHYON_V1_WEIGHTED/.test(run.stderr)) continue;
      expect(run.code, run.stderr).toBe(0);
      writeFileSync(out.replace(/\.bin$/, '.expected.json'), dumpToJsonText(dumpProfile(out)));
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(inputs.length - 2);
    const check = spawnSync(
      cpythonInterpreter(),
      [sharedPath('tools', 'cpython315', 'check_with_cpython.py'), '--vectors', dir, '--strict'],
      { encoding: 'utf8' },
    );
    expect(check.stderr).toContain(`${n} passed, 0 failed`);
    expect(check.status).toBe(0);
  });
});

describe("dump --json is the shared vectors' shape: check_with_cpython.py accepts it as the expected dump", () => {
  it(
    'every accepted vector, --strict',
    () => {
      const vectors = sharedPath('vectors', 'tachyon');
      const dir = path.join(work, 'vectors');
      rmSync(dir, { recursive: true, force: true });
      spawnSync('mkdir', ['-p', dir]);
      const accepted = readdirSync(vectors).filter(
        (f) =>
          f.endsWith('.expected.json') &&
          (JSON.parse(readFileSync(path.join(vectors, f), 'utf8')) as { accepted: boolean }).accepted,
      );
      for (const e of accepted) {
        const bin = e.replace(/\.expected\.json$/, '.bin');
        symlinkSync(path.join(vectors, bin), path.join(dir, bin));
        const run = cli('dump', path.join(vectors, bin), '--json');
        expect(run.code, run.stderr).toBe(0);
        writeFileSync(path.join(dir, e), run.stdout);
      }
      expect(accepted.length).toBeGreaterThan(40);
      const check = spawnSync(
        cpythonInterpreter(),
        [sharedPath('tools', 'cpython315', 'check_with_cpython.py'), '--vectors', dir, '--strict'],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      );
      expect(check.stderr).toContain(`${accepted.length} passed, 0 failed`);
      expect(check.status).toBe(0);
      // One CLI process per vector (about 50): on a busy 2-core machine 157 s, past the default 120 s.
    },
    600_000 * SLOWDOWN,
  );
});
