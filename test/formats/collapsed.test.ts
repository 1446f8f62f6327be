import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapsedAdapter } from '../../lib/formats/collapsed';
import { ProfileBuilder, SampleTypes, makeFrame, sampleTypeName } from '../../lib/profile/index';
import { repoRoot } from '../support/environment';
import { expectCoded, read, stacksOf, totals, write } from './helpers';
import { roundedExactSum, tenthsOrHalves } from '../support/exact-sum';

const fixture = (name: string) => readFileSync(path.join(repoRoot, 'test', 'fixtures', 'formats', name));

describe('collapsed: counts are weights', () => {
  it('a count of 3x10^10 is one record with the exact total, read in little memory', () => {
    const before = process.memoryUsage();
    const src = read(collapsedAdapter, 'main;work 30000000000\nmain;idle 7\n');
    const t = totals(src);
    const after = process.memoryUsage();
    expect(t.records).toBe(2);
    expect(t.total).toBe(30_000_000_007);
    expect(t.self.get('work')).toBe(30_000_000_000);
    // Expanding the count would need gigabytes (and minutes); one record needs nothing measurable.
    expect(after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)).toBeLessThan(
      100 * 1024 * 1024,
    );
    expect(src.meta.sampleTypes).toEqual([SampleTypes.samples]);
  });

  it('refuses negative, fractional, non-numeric, missing and inexact counts, naming the line and its byte offset', () => {
    const cases: [string, RegExp][] = [
      ['a;b 1\na;c -3\n', /line 2: the count -3 is negative/],
      ['a;b 1\n\na;c 1.5\n', /line 3: the count 1\.5 is not a whole number/],
      ['a;b 1\na;c x\n', /line 2: the count "x" is not a number/],
      ['a;b 1\na;c\n', /line 2: no count after the stack/],
      ['a;b 1\na;c 9007199254740993\n', /line 2: the count 9007199254740993 is past 2\^53/],
    ];
    for (const [text, message] of cases) {
      const err = expectCoded(() => read(collapsedAdapter, text), 'ERR_CONVERT_BAD_INPUT', message) as Error & {
        offset: number;
      };
      const lineStart = text.lastIndexOf('\n', text.trimEnd().length - 1) + 1;
      expect(err.offset).toBe(lineStart);
    }
  });

  it('"a;b 1 2 3" alone is three columns; in a one-column file it is refused, never a function named "b 1 2"', () => {
    const src = read(collapsedAdapter, 'a;b 1 2 3\na;c 4 5 6\n');
    expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['value1/count', 'value2/count', 'value3/count']);
    expect(stacksOf(src)).toEqual([
      ['a', 'b'],
      ['a', 'c'],
    ]);
    expect(totals(src, 2).total).toBe(9);
    expectCoded(
      () => read(collapsedAdapter, 'a;x 5\na;b 1 2 3\n'),
      'ERR_CONVERT_BAD_INPUT',
      /line 2: it ends in 3 numbers where the first line has 1/,
    );
  });

  it('frames with spaces and parentheses keep their names', () => {
    const src = read(collapsedAdapter, 'Web Content;operator new(unsigned long);foo (a.js:3) 2\n');
    const [stack] = stacksOf(src);
    expect(stack).toEqual(['Web Content', 'operator new(unsigned long)', 'foo']);
    expect(src.frames.find((f) => f.funcname === 'foo')).toMatchObject({ filename: 'a.js', lineno: 3 });
  });
});

describe('collapsed: thread prefixes other tools write are threads', () => {
  it('CPython 3.15 --collapsed (a real two-thread run): tid:N threads, file:func:line frames', () => {
    const text = fixture('cpython-3.15-two-threads.collapsed').toString('utf8');
    const src = read(collapsedAdapter, text);
    const t = totals(src);
    let expected = 0;
    const perTid = new Map<string, number>();
    for (const line of text.trim().split('\n')) {
      const n = Number(line.slice(line.lastIndexOf(' ') + 1));
      expected += n;
      const tid = /^tid:(\d+)/.exec(line)![1]!;
      perTid.set(tid, (perTid.get(tid) ?? 0) + n);
    }
    expect(t.total).toBe(expected);
    expect(t.perThread).toEqual(perTid);
    expect(perTid.size).toBe(2);
    expect(src.frames.some((f) => f.funcname.startsWith('tid:'))).toBe(false);
    expect(src.frames.find((f) => f.funcname === 'spin')).toMatchObject({ filename: 'work.py', lineno: 5 });
    expect(src.frames.find((f) => f.funcname === '_run_code')).toMatchObject({ filename: '<frozen runpy>' });
  });

  it('py-spy --threads / --subprocesses: thread (TID): NAME, thread (0x…), process PID as a label', () => {
    const src = read(collapsedAdapter, fixture('py-spy-threads.collapsed'));
    expect(src.threads.map((x) => [x.threadId, x.name])).toEqual([
      [4243n, 'MainThread'],
      [4250n, 'worker'],
      [0x7f3a2b1c4740n, undefined],
    ]);
    expect(stacksOf(src)[0]).toEqual(['<module>', 'main', 'work']);
    expect(src.labelSets).toContainEqual([
      { key: 'pid', num: 4242 },
      { key: 'process', str: 'python app.py' },
    ]);
    expect(totals(src).total).toBe(12);
  });

  it('austin -f (full metrics): P<pid>;T<iid>:<tid>, wall, cpu (not idle) and signed memory columns', () => {
    const src = read(collapsedAdapter, fixture('austin-full.austin'));
    expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['wall/microseconds', 'cpu/microseconds', 'memory/bytes']);
    expect(src.meta.sampleIntervalUs).toBe(100n);
    expect(totals(src, 0).total).toBe(1800);
    expect(totals(src, 1).total).toBe(1300);
    expect(totals(src, 2).total).toBe(1024);
    expect(src.threads.map((x) => x.threadId)).toEqual([0x7f3a2b1c4740n, 0x7f3a2b1c5000n]);
    expect(stacksOf(src)[0]).toEqual(['<module>', 'main', 'work']);
    expect(src.frames[0]).toMatchObject({ filename: 'app.py', funcname: '<module>', lineno: 10 });
  });

  it('austin -a (L<line> frames), -g (:GC:) and a UTF-8 BOM', () => {
    const src = read(
      collapsedAdapter,
      '\ufeffP7;T0:1a2b;app.py:main;L12;app.py:work;L40;:GC: 90\nP7;T0:1a2b;app.py:main;L13 10\n',
    );
    expect(src.frames.filter((f) => f.funcname !== ':GC:').map((f) => [f.funcname, f.filename, f.lineno])).toEqual(
      expect.arrayContaining([
        ['main', 'app.py', 12],
        ['work', 'app.py', 40],
        ['main', 'app.py', 13],
      ]),
    );
    expect(stacksOf(src)).toEqual([['main', 'work', ':GC:'], ['main']]);
    expect(src.threads[0]!.threadId).toBe(0x1a2bn);
    expect(totals(src).total).toBe(100);
  });

  it('austin without a header: wall microseconds, hex thread ids', () => {
    const src = read(collapsedAdapter, fixture('austin-wall.austin'));
    expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['wall/microseconds']);
    expect(src.threads[0]!.threadId).toBe(0x7f3a2b1c4740n);
    expect(totals(src).total).toBe(300);
  });

  it('stackcollapse-perf.pl --tid: comm-PID/TID is thread TID named comm', () => {
    const src = read(collapsedAdapter, fixture('perf-tid.collapsed'));
    expect(src.threads.map((x) => [x.threadId, x.name])).toEqual([
      [4243n, 'myapp'],
      [4250n, 'myapp'],
      [0n, 'swapper'],
    ]);
    expect(stacksOf(src)[0]).toEqual(['_start', '__libc_start_main', 'main', 'work']);
    expect(totals(src).total).toBe(45_000_000);
  });

  it('stackcollapse-perf.pl --tid without a PID in perf script (`comm-?/TID`) is thread TID, no pid label', () => {
    // The oracle: what the lines themselves say (comm, pid, tid), not profpack's earlier output.
    const text = 'V8_WorkerThread-?/4251;run;spin 7\nmy-app-4242/4243;main 3\n';
    const src = read(collapsedAdapter, text);
    expect(src.threads.map((x) => [x.threadId, x.name])).toEqual([
      [4251n, 'V8_WorkerThread'],
      [4243n, 'my-app'],
    ]);
    expect(stacksOf(src)).toEqual([['run', 'spin'], ['main']]);
    expect(src.labelSets.slice(1)).toEqual([[{ key: 'pid', num: 4242 }]]);
    expect(totals(src).perThread).toEqual(
      new Map([
        ['4251', 7],
        ['4243', 3],
      ]),
    );
  });
});

describe('collapsed: writing', () => {
  function sample(): ProfileBuilder {
    const b = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples, SampleTypes.wall],
      defaultSampleType: 1,
      startTimeUs: 0n,
      sampleIntervalUs: 1000n,
    });
    const main = b.internFrame(makeFrame('main', 'm.py', 1));
    const work = b.internFrame(makeFrame('work', 'w;x.py', 2));
    const t1 = b.internThread(1n);
    const t2 = b.internThread(2n, 0, 'worker');
    const s = b.stacks.internOutermostFirst([main, work]);
    b.add(s, t1, 10, 0, [1, 1500]);
    b.add(s, t1, 11, 0, [1, 2500]);
    b.add(b.stacks.internOutermostFirst([main]), t2, 12, 0, [3, 7]);
    return b;
  }

  it('one line per (thread, stack) with the summed value of the chosen type', () => {
    const out = write(collapsedAdapter, sample());
    expect(out.text).toBe('thread (1);main (m.py:1);work (w:x.py:2) 4000\nthread (2): worker;main (m.py:1) 7\n');
    expect(write(collapsedAdapter, sample(), { sampleType: 'samples' }).text).toContain(' 2\n');
    const back = read(collapsedAdapter, out.text);
    expect(back.threads.map((t) => [t.threadId, t.name])).toEqual([
      [1n, undefined],
      [2n, 'worker'],
    ]);
    expect(totals(back).total).toBe(4007);
  });

  it('streams in chunks: a 100k-line output is never one string', () => {
    const b = new ProfileBuilder({
      sampleTypes: [SampleTypes.samples],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1000n,
    });
    const t = b.internThread(0n);
    const root = b.internFrame(makeFrame('root', 'r.py', 1));
    for (let i = 0; i < 100_000; i++)
      b.add(b.stacks.push(b.stacks.push(0, root), b.internFrame(makeFrame(`f${i}`, 'f.py', i + 1))), t, NaN, 0, [
        i + 1,
      ]);
    const out = write(collapsedAdapter, b);
    expect(out.chunks).toBeGreaterThan(25);
    expect(out.largestChunk).toBeLessThan(1 << 18);
    expect(out.text.split('\n').length - 1).toBe(100_000);
  });

  it('round trip keeps every (thread, stack) total (property)', () => {
    const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/);
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.array(name, { minLength: 1, maxLength: 5 }),
            fc.integer({ min: 0, max: 3 }),
            fc.nat({ max: 1e12 }),
          ),
          { minLength: 1, maxLength: 30 },
        ),
        (rows) => {
          const b = new ProfileBuilder({
            sampleTypes: [SampleTypes.samples],
            defaultSampleType: 0,
            startTimeUs: 0n,
            sampleIntervalUs: 1000n,
          });
          const expected = new Map<string, number>();
          for (const [frames, thread, value] of rows) {
            const ids = frames.map((f) => b.internFrame(makeFrame(f, '')));
            b.add(b.stacks.internOutermostFirst(ids), b.internThread(BigInt(thread)), NaN, 0, [value]);
            const key = `${thread}|${frames.join(';')}`;
            expected.set(key, (expected.get(key) ?? 0) + value);
          }
          const back = read(collapsedAdapter, write(collapsedAdapter, b).text);
          const got = new Map<string, number>();
          const stacks = stacksOf(back);
          let k = 0;
          for (const batch of back.batches()) {
            for (let i = 0; i < batch.length; i++, k++) {
              const thread = back.threads.length > 1 ? back.threads[batch.thread[i]!]!.threadId : BigInt(rows[0]![1]);
              const key = `${thread}|${stacks[k]!.join(';')}`;
              got.set(key, (got.get(key) ?? 0) + batch.values[0]![i]!);
            }
          }
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('collapsed: fractional values (real times) total their exact sum rounded once', () => {
  const wallProfile = () =>
    new ProfileBuilder({
      sampleTypes: [SampleTypes.wall],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 1n,
    });

  /** Per "thread|frames" line, the value `text` gives it, read back by the collapsed reader. */
  function lineValues(text: string, threads: number[]): Map<string, number> {
    const back = read(collapsedAdapter, text);
    const stacks = stacksOf(back);
    const got = new Map<string, number>();
    let k = 0;
    for (const batch of back.batches()) {
      for (let i = 0; i < batch.length; i++, k++) {
        const thread = back.threads.length > 1 ? back.threads[batch.thread[i]!]!.threadId : BigInt(threads[0]!);
        got.set(`${thread}|${stacks[k]!.join(';')}`, batch.values[0]![i]!);
      }
    }
    return got;
  }

  it('each (thread, stack) line is the exact sum of its doubles rounded as Math.round rounds it (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'a;b', 'c'), fc.integer({ min: 0, max: 2 }), tenthsOrHalves(1e6)), {
          minLength: 1,
          maxLength: 40,
        }),
        (rows) => {
          const b = wallProfile();
          const values = new Map<string, number[]>();
          for (const [frames, thread, value] of rows) {
            const ids = frames.split(';').map((f) => b.internFrame(makeFrame(f, '')));
            b.add(b.stacks.internOutermostFirst(ids), b.internThread(BigInt(thread)), NaN, 0, [value]);
            const key = `${thread}|${frames}`;
            values.set(key, [...(values.get(key) ?? []), value]);
          }
          const want = new Map([...values].map(([key, vs]) => [key, roundedExactSum(vs)]));
          expect(
            lineValues(
              write(collapsedAdapter, b).text,
              rows.map((r) => r[1]),
            ),
          ).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('34.8 + 22.7 (57.5 in float64, 57.4999999999999964… exactly) is 57, not 58', () => {
    expect(roundedExactSum([34.8, 22.7])).toBe(57);
    const b = wallProfile();
    const s = b.stacks.internOutermostFirst([b.internFrame(makeFrame('a', ''))]);
    const t = b.internThread(0n);
    b.add(s, t, NaN, 0, [34.8]);
    b.add(s, t, NaN, 0, [22.7]);
    expect(write(collapsedAdapter, b).text).toBe('a 57\n');
  });
});

describe('collapsed: detect', () => {
  it('knows collapsed heads, including a first line longer than the head', () => {
    expect(collapsedAdapter.detect(Buffer.from('a;b 1\n'))).toBe(true);
    expect(collapsedAdapter.detect(fixture('austin-full.austin'))).toBe(true);
    expect(collapsedAdapter.detect(fixture('cpython-3.15-two-threads.collapsed'))).toBe(true);
    expect(collapsedAdapter.detect(Buffer.from(`${'frame;'.repeat(1000)}`))).toBe(true);
    expect(collapsedAdapter.detect(Buffer.from('{"nodes":[]}'))).toBe(false);
    expect(collapsedAdapter.detect(Buffer.from('hello world\n'))).toBe(false);
  });
});
