import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collapsedAdapter } from '../../../lib/formats/collapsed';
import { cpuprofileAdapter } from '../../../lib/formats/devtools/cpuprofile';
import { pprofAdapter } from '../../../lib/formats/pprof/index';
import { aggregate } from '../../../lib/query/aggregate';
import type { CpuProfile } from '../../../lib/v8/index';
import { ProfileBuilder, SampleTypes, makeFrame, sampleTypeName } from '../../../lib/profile/index';
import { repoRoot, sharedPath } from '../../support/environment';
import { launch } from '../../view/browser';
import { expectCoded, fuzzJson, read, totals, write } from '../helpers';
import { sandwichRows, speedscopeTable } from '../speedscope-app';

const heavy = sharedPath('data', 'outside', 'node-cpu-prof.heavy.cpuprofile');
const small = path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile');
const load = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

/**
 * DevTools' weighting, computed from the JSON alone: a sample weighs the gap to
 * the next sample (the last one the gap before it), in µs, per leaf function.
 */
function devtoolsSelf(p: CpuProfile): { self: Map<string, number>; total: number } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  const n = p.samples.length;
  for (let i = 0; i < n; i++) {
    const gap = i + 1 < n ? p.timeDeltas[i + 1]! : n > 1 ? p.timeDeltas[n - 1]! : 0;
    const name = byId.get(p.samples[i]!)!.callFrame.functionName || '(anonymous)';
    self.set(name, (self.get(name) ?? 0) + gap);
    total += gap;
  }
  return { self, total };
}

describe('.cpuprofile read: real time per sample', () => {
  for (const file of [heavy, small]) {
    it(`${path.basename(file)}: samples/count and wall/nanoseconds equal DevTools' per-function times`, () => {
      const json = load(file);
      const src = read(cpuprofileAdapter, readFileSync(file));
      expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['samples/count', 'wall/nanoseconds']);
      expect(src.meta.defaultSampleType).toBe(1);
      expect(totals(src, 0).total).toBe(json.samples.length);
      const wall = totals(src, 1);
      const theirs = devtoolsSelf(json);
      expect(wall.total).toBe(theirs.total * 1000);
      for (const [name, us] of theirs.self)
        expect(wall.self.get(name === '(root)' ? '(empty)' : name), name).toBe(us * 1000);
      // The real time covers the recording: within one sample of endTime - startTime.
      expect(Math.abs(wall.total / 1000 - (json.endTime - json.startTime))).toBeLessThan(20_000);
    });
  }

  // Nodes are resolved through one array when ids are small integers, else a Map (issue 39): both read alike.
  for (const [what, remap] of [
    ['sparse ids', (id: number) => id * 1_000_003 + 7],
    ['negative ids', (id: number) => -id],
    ['fractional ids', (id: number) => id + 0.5],
  ] as const) {
    it(`${what}, nodes in reverse order: the same DevTools per-function times`, () => {
      const json = load(heavy);
      json.nodes.reverse();
      for (const n of json.nodes) {
        n.id = remap(n.id);
        if (n.children) n.children = n.children.map(remap);
      }
      json.samples = json.samples.map(remap);
      const src = read(cpuprofileAdapter, JSON.stringify(json));
      expect(totals(src, 0).total).toBe(json.samples.length);
      const wall = totals(src, 1);
      const theirs = devtoolsSelf(json);
      expect(wall.total).toBe(theirs.total * 1000);
      for (const [name, us] of theirs.self)
        expect(wall.self.get(name === '(root)' ? '(empty)' : name), name).toBe(us * 1000);
    });
  }

  /**
   * V8's hot lines from the JSON alone: per (function, line), the positionTicks of its nodes, each node's capped
   * at its sample count (a node's later lines get what its samples leave).
   */
  function hotLineSamples(p: CpuProfile): Map<string, number> {
    const count = new Map<number, number>();
    for (const s of p.samples) count.set(s, (count.get(s) ?? 0) + 1);
    const m = new Map<string, number>();
    for (const n of p.nodes) {
      let left = count.get(n.id) ?? 0;
      for (const t of n.positionTicks ?? []) {
        const used = Math.min(left, t.ticks);
        left -= used;
        const key = `${n.callFrame.functionName}:${t.line}`;
        if (used > 0) m.set(key, (m.get(key) ?? 0) + used);
      }
    }
    return m;
  }

  /** Per (function, line) the samples whose leaf is a frame at a line without a column (a hot-line frame). */
  function modelHotLines(src: ReturnType<typeof read>): Map<string, number> {
    const m = new Map<string, number>();
    for (const b of src.batches())
      for (let i = 0; i < b.length; i++) {
        if (b.stack[i] === 0) continue;
        const f = src.frames[src.stacks.frame(b.stack[i]!)]!;
        if (f.column !== null || f.lineno === null) continue;
        const key = `${f.funcname}:${f.lineno}`;
        m.set(key, (m.get(key) ?? 0) + b.values[0]![i]!);
      }
    return m;
  }

  for (const file of [heavy, small]) {
    it(`${path.basename(file)}: positionTicks make samples at the hot line, per line as V8 counted, and survive a write`, () => {
      const json = load(file);
      const src = read(cpuprofileAdapter, readFileSync(file));
      const expected = hotLineSamples(json);
      expect(expected.size).toBeGreaterThan(file === heavy ? 10 : 0);
      expect(modelHotLines(src)).toEqual(expected);
      const again = read(cpuprofileAdapter, write(cpuprofileAdapter, src).text);
      expect(modelHotLines(again)).toEqual(expected);
      // --by line: the hottest line is V8's hottest positionTicks line, not the declaration line.
      const [hotKey] = [...expected].sort((a, b) => b[1] - a[1])[0]!;
      const top = aggregate(src, { by: 'line', sampleType: 'samples', limit: 1 }).rows[0]!;
      // V8's '' is `(anonymous)` in every row (docs/formats.md, Rows).
      expect(`${top.funcname}:${top.lineno}`).toBe(hotKey.replace(/^:/, '(anonymous):'));
    });
  }

  it('refuses positionTicks that are not whole numbers with a coded error', () => {
    const json = load(small);
    const node = json.nodes.find((n) => n.positionTicks !== undefined)!;
    for (const bad of [[{ line: 'x', ticks: 1 }], [{ line: 3, ticks: -1 }], [null], 'ticks'] as unknown[]) {
      const damaged = { ...json, nodes: json.nodes.map((n) => (n === node ? { ...n, positionTicks: bad } : n)) };
      expectCoded(() => read(cpuprofileAdapter, JSON.stringify(damaged)), 'ERR_CONVERT_BAD_INPUT', /positionTicks/);
    }
  });

  it('reads the nested form (Node <= 10) and older profpack files with thread frames', () => {
    const nested = {
      head: {
        functionName: '(root)',
        children: [
          {
            functionName: 'main',
            url: 'm.js',
            lineNumber: 3,
            children: [{ functionName: 'work', url: 'm.js', lineNumber: 9, columnNumber: 2 }],
          },
        ],
      },
      startTime: 1,
      endTime: 1.004,
      samples: [3, 3, 2, 3],
      timestamps: [1_000_000, 1_001_000, 1_002_000, 1_003_000],
    };
    const src = read(cpuprofileAdapter, JSON.stringify(nested));
    expect(totals(src, 1).self).toEqual(
      new Map([
        ['work', 3_000_000],
        ['main', 1_000_000],
      ]),
    );
    expect(src.frames.find((f) => f.funcname === 'work')).toMatchObject({ lineno: 9, column: 2 });
    const old = {
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
          children: [2, 3],
        },
        {
          id: 2,
          callFrame: {
            functionName: '(thread 7)',
            scriptId: '0',
            url: 'profpack:thread',
            lineNumber: -1,
            columnNumber: -1,
          },
          children: [4],
        },
        {
          id: 3,
          callFrame: {
            functionName: '(thread 9)',
            scriptId: '0',
            url: 'profpack:thread',
            lineNumber: -1,
            columnNumber: -1,
          },
          children: [5],
        },
        { id: 4, callFrame: { functionName: 'a', scriptId: '0', url: 'a.js', lineNumber: 0, columnNumber: 0 } },
        { id: 5, callFrame: { functionName: 'b', scriptId: '0', url: 'b.js', lineNumber: 0, columnNumber: 0 } },
      ],
      startTime: 0,
      endTime: 40,
      samples: [4, 5, 4, 5],
      timeDeltas: [0, 5, 5, 5],
      $profpack: {
        version: 1,
        threads: [
          { threadId: '7', interpreterId: 0, nodeId: 2 },
          { threadId: '9', interpreterId: 0, nodeId: 3 },
        ],
        sampleIntervalUs: 10,
      },
    };
    const t = totals(read(cpuprofileAdapter, JSON.stringify(old)), 1);
    // Each thread's sample weighs the gap to its own next sample (10 µs), its last the nominal 10 µs.
    expect(t.perThread).toEqual(
      new Map([
        ['7', 20_000],
        ['9', 20_000],
      ]),
    );
  });

  it('refuses damage with coded errors, never a raw TypeError (any value of the wrong type)', () => {
    expectCoded(() => read(cpuprofileAdapter, '{"nodes": [}'), 'ERR_CONVERT_BAD_INPUT', /not valid JSON/);
    fuzzJson(cpuprofileAdapter, load(small));
  });

  it('refuses finite deltas whose running time overflows with a coded error naming the delta (no output can write it)', () => {
    const json = load(small);
    const n = json.samples.length;
    // [index, delta] changes, and the first index whose running time is ±Infinity.
    const cases: [[number, number][], number][] = [
      [
        [
          [1, 1e308],
          [2, 1e308],
        ],
        2,
      ],
      [
        [
          [n - 2, Number.MAX_VALUE],
          [n - 1, Number.MAX_VALUE],
        ],
        n - 1,
      ],
      [
        [
          [2, -Number.MAX_VALUE],
          [3, -Number.MAX_VALUE],
        ],
        3,
      ],
    ];
    for (const [changes, first] of cases) {
      const deltas = json.timeDeltas.slice();
      for (const [at, delta] of changes) deltas[at] = delta;
      const text = JSON.stringify({ ...json, timeDeltas: deltas });
      expectCoded(
        () => read(cpuprofileAdapter, text),
        'ERR_CONVERT_BAD_INPUT',
        new RegExp(`time after timeDeltas\\[${first}\\] is -?Infinity µs, not a finite`),
      );
    }
  });

  it('reads the flat form with timestamps and no timeDeltas (Node <= 10): DevTools weights from the times', () => {
    const json = load(small);
    // The same profile in the older shape: absolute times per sample in place of the deltas.
    const timestamps: number[] = [];
    let t = json.startTime;
    for (const d of json.timeDeltas) timestamps.push((t += d));
    const old = {
      nodes: json.nodes,
      startTime: json.startTime,
      endTime: json.endTime,
      samples: json.samples,
      timestamps,
    };
    const src = read(cpuprofileAdapter, JSON.stringify(old));
    const theirs = devtoolsSelf(json);
    const wall = totals(src, 1);
    expect(wall.total).toBeGreaterThan(0);
    expect(wall.total).toBe(theirs.total * 1000);
    for (const [name, us] of theirs.self)
      expect(wall.self.get(name === '(root)' ? '(empty)' : name), name).toBe(us * 1000);
  });

  it('a $profpack thread id that is not a whole number is a coded error naming the field', () => {
    const json = load(small);
    for (const threadId of ['abc', '1e3', 1.5, -1, {}, null, '99999999999999999999999'])
      expectCoded(
        () => read(cpuprofileAdapter, JSON.stringify({ ...json, $profpack: { version: 1, threads: [{ threadId }] } })),
        'ERR_CONVERT_BAD_INPUT',
        /\$profpack\.threads\[0\]\.threadId is .*not a whole number/,
      );
    expectCoded(
      () => read(cpuprofileAdapter, JSON.stringify({ ...json, $profpack: { version: 1, threads: [7] } })),
      'ERR_CONVERT_BAD_INPUT',
      /threads\[0\] is not an object/,
    );
    const ok = {
      ...json,
      $profpack: { version: 1, threads: [{ threadId: '18446744073709551615', interpreterId: 2 }] },
    };
    expect(read(cpuprofileAdapter, JSON.stringify(ok)).threads[0]).toMatchObject({
      threadId: 18446744073709551615n,
      interpreterId: 2,
    });
  });
});

/** A model of three threads sampled at interleaved times (what a multi-thread recording holds). */
function threeThreads(): ProfileBuilder {
  const b = new ProfileBuilder({
    sampleTypes: [SampleTypes.samples, SampleTypes.wall],
    defaultSampleType: 1,
    startTimeUs: 1_000_000n,
    sampleIntervalUs: 1000n,
  });
  const main = b.internFrame(makeFrame('main', 'm.js', 1, 1));
  const fns = ['alpha', 'beta', 'gamma'].map((n) => b.internFrame(makeFrame(n, 'm.js', 5, 3)));
  const threads = [b.internThread(1n), b.internThread(2n), b.internThread(3n, 0, 'worker')];
  // Thread k samples every 1000 µs from 1_000_000 + k; thread 2 (index 1) runs longest.
  const counts = [30, 50, 20];
  for (let i = 0; i < 50; i++) {
    for (let k = 0; k < 3; k++) {
      if (i >= counts[k]!) continue;
      const stack = b.stacks.internOutermostFirst([main, fns[(i + k) % 3]!]);
      b.add(stack, threads[k]!, 1_000_000 + i * 1000 + k, 0, [1, 1_000_000]);
    }
  }
  return b;
}

describe('.cpuprofile write: one thread, real time', () => {
  it('writes only the busiest thread, says which, and never interleaves threads', () => {
    const out = write(cpuprofileAdapter, threeThreads());
    expect(out.warnings).toEqual([expect.stringMatching(/wrote thread 2, the busiest of 3/)]);
    const json = JSON.parse(out.text) as CpuProfile;
    expect(json.samples.length).toBe(50);
    expect(json.$profpack!.threads).toEqual([{ threadId: '2', interpreterId: 0 }]);
    expect(json.timeDeltas.slice(1).every((d) => d === 1000)).toBe(true);
    // DevTools' per-function times from the written file equal the model's for that thread.
    const theirs = devtoolsSelf(json);
    const ours = totals(threeThreads(), 1);
    expect(theirs.total * 1000).toBe(ours.perThread.get('2'));
    const ids = new Set(json.nodes.map((n) => n.id));
    for (const n of json.nodes) for (const c of n.children ?? []) expect(ids.has(c)).toBe(true);
    for (const s of json.samples) expect(ids.has(s)).toBe(true);
  });

  it('thread option picks another; an unknown thread is a coded error naming the threads', () => {
    const json = JSON.parse(write(cpuprofileAdapter, threeThreads(), { thread: '3' }).text) as CpuProfile;
    expect(json.samples.length).toBe(20);
    expect(json.$profpack!.threads[0]!.threadId).toBe('3');
    expectCoded(
      () => write(cpuprofileAdapter, threeThreads(), { thread: '42' }),
      'ERR_INVALID_ARGUMENT',
      /no samples on thread 42 \(threads with samples: 1, 2, 3\)/,
    );
  });

  it('round trip keeps stacks, times and the wall total', () => {
    const once = read(cpuprofileAdapter, readFileSync(small));
    const twice = read(cpuprofileAdapter, write(cpuprofileAdapter, once).text);
    const a = totals(read(cpuprofileAdapter, readFileSync(small)), 1);
    const b = totals(twice, 1);
    expect(b.total).toBe(a.total);
    expect(b.self).toEqual(a.self);
    expect(twice.meta.startTimeUs).toBe(once.meta.startTimeUs);
  });

  it("round trip keeps each sample's stack, thread id, time (µs) and status, with non-negative deltas", () => {
    const b = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples, SampleTypes.wall],
      defaultSampleType: 1,
      startTimeUs: 1_700_000_000_000_000n,
      sampleIntervalUs: 100n,
    });
    const f = ['main', 'work', '(garbage collector)'].map((n, i) =>
      b.internFrame(makeFrame(n, i === 2 ? '' : 'w.js', i === 2 ? null : 10 + i, i === 2 ? null : 4)),
    );
    const t = b.internThread(77n, 2);
    const rows: [number[], number, number][] = [
      [[0, 1], 1_700_000_000_000_000, 1],
      [[0, 1], 1_700_000_000_000_130, 0],
      [[0, 2], 1_700_000_000_000_250, 65],
      [[0], 1_700_000_000_000_400, 17],
    ];
    for (const [frames, time, status] of rows)
      b.add(b.stacks.internOutermostFirst(frames.map((k) => f[k]!)), t, time, status, [1, 100_000]);
    const text = write(cpuprofileAdapter, b).text;
    const json = JSON.parse(text) as CpuProfile;
    expect(json.timeDeltas.every((d) => d >= 0)).toBe(true);
    const back = read(cpuprofileAdapter, text);
    const got: [string[], number, number][] = [];
    for (const batch of back.batches()) {
      for (let i = 0; i < batch.length; i++)
        got.push([
          back.stacks
            .toArray(batch.stack[i]!)
            .reverse()
            .map((x) => back.frames[x]!.funcname),
          batch.time[i]!,
          batch.status[i]!,
        ]);
    }
    expect(got).toEqual(
      rows.map(([frames, time, status]) => [
        frames.map((k) => ['main', 'work', '(garbage collector)'][k]!),
        time,
        status,
      ]),
    );
    expect(back.threads.map((x) => [x.threadId, x.interpreterId])).toEqual([[77n, 2]]);
    expect(back.frames.find((x) => x.funcname === 'work')).toMatchObject({ filename: 'w.js', lineno: 11, column: 4 });
  });

  it('refuses a sample type that is not time or counts', () => {
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    b.add(b.stacks.push(0, b.internFrame(makeFrame('f', 'f.js'))), b.internThread(0n), 5, 0, [100]);
    expectCoded(
      () => write(cpuprofileAdapter, b),
      'ERR_CONVERT_BAD_INPUT',
      /a \.cpuprofile holds time, and inuse_space\/bytes is in bytes/,
    );
  });

  it('from collapsed stacks (no times): a count is that many samples one interval apart; a time lasts its value', () => {
    const src = read(collapsedAdapter, 'main;work 3\nmain;idle 1\n', { sampleIntervalUs: 1000n });
    const json = JSON.parse(write(cpuprofileAdapter, src).text) as CpuProfile;
    expect(json.timeDeltas).toEqual([0, 1000, 1000, 1000]);
    expect(json.samples).toHaveLength(4);
    expect(json.endTime - json.startTime).toBe(4000);
    const wall = read(collapsedAdapter, '# mode: wall\nP1;T1;a.py:f:1 250\nP1;T1;a.py:g:2 750\n');
    expect(JSON.parse(write(cpuprofileAdapter, wall).text).timeDeltas).toEqual([0, 250]);
  });
});

describe("multi-thread .cpuprofile out in speedscope's importer (Chromium)", () => {
  let browser: Browser;
  const work = mkdtempSync(path.join(tmpdir(), 'profpack-cpuprofile-'));
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("its per-function self times equal the model's for the thread written", async () => {
    const file = path.join(work, 'thread2.cpuprofile');
    writeFileSync(file, write(cpuprofileAdapter, threeThreads(), { thread: '2' }).text);
    const { table, log } = await speedscopeTable(browser, work, file);
    expect(log).toContain('log: Importing as Chrome CPU Profile');
    const rows = sandwichRows(table);
    const ours = new Map<string, number>();
    const b = threeThreads();
    let lastLeaf = '';
    for (const batch of b.batches()) {
      for (let i = 0; i < batch.length; i++) {
        if (b.threads[batch.thread[i]!]!.threadId !== 2n) continue;
        lastLeaf = b.frames[b.stacks.frame(batch.stack[i]!)]!.funcname;
        ours.set(lastLeaf, (ours.get(lastLeaf) ?? 0) + batch.values[1]![i]! / 1e6);
      }
    }
    expect(new Set(rows.keys())).toEqual(new Set([...ours.keys(), 'main']));
    // speedscope gives a profile's last sample no time (nothing follows it); every other sample weighs its real gap.
    for (const [name, ms] of ours) expect(rows.get(name)![1], name).toBeCloseTo(name === lastLeaf ? ms - 1 : ms, 2);
  });
});

describe('.cpuprofile detect', () => {
  it('knows V8 heads, flat and nested, and not heap profiles', () => {
    expect(cpuprofileAdapter.detect(readFileSync(heavy).subarray(0, 4096))).toBe(true);
    expect(
      cpuprofileAdapter.detect(Buffer.from('{"head":{"functionName":"(root)","children":[]},"startTime":1}')),
    ).toBe(true);
    expect(cpuprofileAdapter.detect(Buffer.from('{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0}}'))).toBe(
      false,
    );
  });
});

describe('.cpuprofile write: every record its own weight', () => {
  it('Datadog → .cpuprofile: per-function self times equal the source for each time type, untimed records included', () => {
    const file = path.join(repoRoot, 'test', 'fixtures', 'outside', 'datadog', 'datadog.wall.pb.gz');
    const bytes = gunzipSync(readFileSync(file));
    // Oracle: per leaf function and sample type, the values as pprof-format decodes them.
    const p = Profile.decode(bytes);
    const str = (i: number | bigint) => p.stringTable.strings[Number(i)]!;
    const fnName = new Map(p.function.map((f) => [Number(f.id), str(f.name)]));
    const leafOf = new Map(p.location.map((l) => [Number(l.id), fnName.get(Number(l.line[0]!.functionId))!]));
    const src = read(pprofAdapter, bytes);
    for (const type of ['wall', 'cpu']) {
      const k = p.sampleType.findIndex((t) => str(t.type) === type);
      const expected = new Map<string, number>();
      for (const s of p.sample) {
        const v = Number(s.value[k]!) / 1000;
        const name = leafOf.get(Number(s.locationId[0]!))!;
        if (v !== 0) expected.set(name, (expected.get(name) ?? 0) + v);
      }
      expect(expected.get('Non JS threads activity') ?? 0, type).toBe(type === 'cpu' ? 10940.569 : 0);
      const json = JSON.parse(write(cpuprofileAdapter, src, { sampleType: type }).text) as CpuProfile;
      // DevTools' weight: the gap to the next sample, the last one's to endTime.
      const byId = new Map(json.nodes.map((n) => [n.id, n.callFrame.functionName]));
      const got = new Map<string, number>();
      let t = json.startTime;
      const at = json.timeDeltas.map((d) => (t += d));
      at.forEach((ti, i) => {
        const gap = (i + 1 < at.length ? at[i + 1]! : json.endTime) - ti;
        const name = byId.get(json.samples[i]!)!;
        if (gap !== 0) got.set(name, (got.get(name) ?? 0) + gap);
      });
      expect([...got.keys()].sort(), type).toEqual([...expected.keys()].sort());
      // Deltas are whole µs: each sample's weight is within a µs of its value.
      for (const [name, us] of expected)
        expect(Math.abs(got.get(name)! - us), `${type} ${name}`).toBeLessThan(json.samples.length);
    }
  });
});
