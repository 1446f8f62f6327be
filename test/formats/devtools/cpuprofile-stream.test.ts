/**
 * The streamed .cpuprofile read (issue 39: convert → pprof in memory that grows with nodes, not samples) against
 * the held one: for every profile the stream takes, the pprof written from it (per record and aggregated) is
 * byte for byte the pprof written from the held read of the same bytes (every record kept, the whole list of
 * deltas sorted for the median, hot lines by a sort of all samples); what it does not take it leaves to the
 * held read; an error is the held read's error.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuprofileAdapter } from '../../../lib/formats/devtools/cpuprofile';
import { readCpuProfileStreamed } from '../../../lib/formats/devtools/cpuprofile-stream';
import { MAX_KEPT_RECORDS } from '../../../lib/formats/devtools/cpuprofile-scan';
import { writePprof } from '../../../lib/formats/pprof/write';
import { convert } from '../../../lib/formats/convert';
import { openProfile } from '../../../lib/formats/registry';
import { ProfileBuilder, type ProfileSource } from '../../../lib/profile/index';
import { ProfpackError } from '../../../lib/errors';
import { THREAD_FRAME_URL } from '../../../lib/v8/index';
import { profile, spread } from '../../support/cpuprofile-arbitrary';
import { repoRoot, sharedPath } from '../../support/environment';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Outcome = { pprof: string; aggregated: string } | { error: string };

function pprofOf(source: ProfileSource, aggregate: boolean): string {
  const chunks: Buffer[] = [];
  writePprof(source, { path: '', write: (c) => chunks.push(Buffer.from(c)) }, { gzip: false, aggregate });
  return Buffer.concat(chunks).toString('hex');
}

/** Both pprof outputs of a source opened twice (a source's records are read once), or the error either ends in. */
function outcome(open: () => ProfileSource | undefined): Outcome | undefined {
  try {
    const first = open();
    if (first === undefined) return undefined;
    const pprof = pprofOf(first, false);
    first.close?.();
    const second = open()!;
    const aggregated = pprofOf(second, true);
    second.close?.();
    return { pprof, aggregated };
  } catch (err) {
    // Not only ProfpackErrors: times that overflow to ±Infinity end in the pprof writer's RangeError, both ways.
    if (err instanceof ProfpackError) return { error: `${err.code} ${err.message}` };
    return { error: `${(err as Error).name} ${(err as Error).message}` };
  }
}

/** The held read of the text's bytes (the reader's path for gzip and stdin). */
function held(text: string): Outcome {
  const bytes = new TextEncoder().encode(text);
  return outcome(() => cpuprofileAdapter.read({ bytes }, {}))!;
}

/** A streamed read that keeps no records (streams every profile with any), undefined when it does not stream. */
function open(file: string, windowBytes = 1 << 20): ProfileSource | undefined {
  const got = readCpuProfileStreamed(file, windowBytes, 0);
  if (got === undefined || 'batches' in got) return got;
  if (got.samples.length > 0) throw new Error('records kept with keep = 0');
  return undefined;
}

/** The text as a file, streamed through windows of `windowBytes` to start; undefined when not taken. */
function streamed(text: string, windowBytes: number): Outcome | undefined {
  const file = path.join(dir, 'p.cpuprofile');
  writeFileSync(file, text);
  return outcome(() => open(file, windowBytes));
}

/** Whether the stream is expected to take a generated profile: records, and not hot lines with a delta that goes back. */
function streams(doc: { nodes: { positionTicks?: unknown[] }[]; timeDeltas: number[] }): boolean {
  const ticks = doc.nodes.some((n) => (n.positionTicks?.length ?? 0) > 0);
  return doc.timeDeltas.length > 0 && (!ticks || doc.timeDeltas.every((d) => d >= 0));
}

describe('the streamed .cpuprofile read', () => {
  it('writes the held read’s pprof for any flat profile, through any window (property)', () => {
    let taken = 0;
    fc.assert(
      fc.property(profile, fc.constantFrom(undefined, 2, ' \r\n'), fc.constantFrom(1, 7, 64, 1 << 20), (doc, s, w) => {
        let json = JSON.stringify(doc, null, s);
        if (s === ' \r\n') json = spread(json);
        const got = streamed(json, w);
        expect(got !== undefined, 'taken').toBe(streams(doc));
        if (got === undefined) return;
        taken++;
        expect(got).toEqual(held(json));
      }),
      { numRuns: 400 },
    );
    expect(taken).toBeGreaterThan(150);
  });

  it('reads ordered profiles with hot lines, no interval and many samples as the held read', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(5), { minLength: 1, maxLength: 3000 }),
        fc.array(fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.double({ min: 0, max: 1e5, noNaN: true })), {
          minLength: 1,
          maxLength: 50,
        }),
        fc.array(fc.record({ line: fc.integer({ min: -1, max: 40 }), ticks: fc.nat(400) }), { maxLength: 4 }),
        (picks, gaps, ticks) => {
          const cf = (name: string) => ({
            functionName: name,
            scriptId: '1',
            url: 'file:///a.js',
            lineNumber: 3,
            columnNumber: 1,
          });
          const doc = {
            nodes: [
              { id: 1, callFrame: cf('(root)'), children: [2, 3] },
              { id: 2, callFrame: cf('f'), children: [4], positionTicks: ticks },
              { id: 3, callFrame: cf('g'), positionTicks: [{ line: 9, ticks: 5 }] },
              { id: 4, callFrame: cf('h'), children: [5, 6] },
              { id: 5, callFrame: cf('(garbage collector)') },
              { id: 6, callFrame: cf('(idle)') },
            ],
            startTime: 5,
            endTime: 9,
            samples: picks.map((p) => p + 1),
            timeDeltas: picks.map((_, i) => gaps[i % gaps.length]!),
          };
          const json = JSON.stringify(doc);
          const got = streamed(json, 64);
          expect(got).toBeDefined();
          expect(got).toEqual(held(json));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('finds the median of more distinct gaps than it counts by passes over the file, as the held read', () => {
    // 70,000 distinct fractional gaps (more than GapCounts keeps by value), in a shuffled order.
    const n = 70_001;
    const deltas = Array.from({ length: n }, (_, i) => 1000 + ((i * 7919) % n) / 64);
    const cf = { functionName: 'f', scriptId: '1', url: 'file:///a.js', lineNumber: 0, columnNumber: 0 };
    const doc = {
      nodes: [
        { id: 1, callFrame: { ...cf, functionName: '(root)' }, children: [2] },
        { id: 2, callFrame: cf },
      ],
      startTime: 0,
      endTime: 1,
      samples: deltas.map((_, i) => 1 + (i % 2)),
      timeDeltas: deltas,
    };
    const json = JSON.stringify(doc);
    const got = streamed(json, 4096);
    expect(got).toBeDefined();
    expect(got).toEqual(held(json));
  });

  it('reads profpack’s own .cpuprofile (a thread node, statuses, an interval) and leaves two threads to the held read', () => {
    const cf = (name: string, url = 'file:///a.js') => ({
      functionName: name,
      scriptId: '1',
      url,
      lineNumber: 0,
      columnNumber: 0,
    });
    const one = {
      nodes: [
        { id: 1, callFrame: cf('(root)', ''), children: [2] },
        { id: 2, callFrame: cf('thread 7', THREAD_FRAME_URL), children: [3] },
        { id: 3, callFrame: cf('f'), children: [4] },
        { id: 4, callFrame: cf('g') },
      ],
      startTime: 100,
      endTime: 200,
      samples: [3, 4, 4, 3, 2],
      timeDeltas: [1, 10, 10, 0, 30],
      $profpack: {
        version: 1,
        threads: [{ threadId: '7', interpreterId: 0, nodeId: 2 }],
        sampleIntervalUs: 10,
        status: [1, 0, 3, 0, 2],
      },
    };
    const text = JSON.stringify(one);
    const got = streamed(text, 16);
    expect(got).toBeDefined();
    expect(got).toEqual(held(text));

    const two = structuredClone(one);
    two.nodes[0]!.children!.push(5);
    two.nodes.push({ id: 5, callFrame: cf('thread 8', THREAD_FRAME_URL), children: [] });
    two.$profpack.threads.push({ threadId: '8', interpreterId: 0, nodeId: 5 });
    two.samples[4] = 5;
    expect(streamed(JSON.stringify(two), 16)).toBeUndefined();
  });

  it('ends in the held read’s error for a sample of a missing node, and takes a delta that is not finite nowhere', () => {
    const cf = { functionName: 'f', scriptId: '1', url: '', lineNumber: 0, columnNumber: 0 };
    const base = {
      nodes: [{ id: 1, callFrame: cf }],
      startTime: 0,
      endTime: 1,
      samples: [1, 1, 9, 1],
      timeDeltas: [1, 2, 3, 4],
    };
    const text = JSON.stringify(base);
    const got = streamed(text, 8);
    expect(got).toEqual(held(text));
    expect(got).toMatchObject({ error: expect.stringContaining('sample 2 names missing node 9') });
    expect(streamed(text.replace('"timeDeltas":[1,2,3,4]', '"timeDeltas":[1,2,1e999,4]'), 8)).toBeUndefined();
  });

  it('reads the real V8 profiles as the held read, and refuses a file rewritten between its two reads', () => {
    for (const file of [
      path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile'),
      path.join(repoRoot, 'test', 'fixtures', 'outside', 'node', 'node.cpu-main.cpuprofile'),
      path.join(repoRoot, 'test', 'fixtures', 'outside', 'node', 'node.cpu-worker.cpuprofile'),
      sharedPath('data', 'outside', 'node-cpu-prof.heavy.cpuprofile'),
    ]) {
      const text = readFileSync(file, 'utf8');
      for (const w of [4096, 1 << 20]) {
        const got = streamed(text, w);
        expect(got, file).toBeDefined();
        expect(got, file).toEqual(held(text));
      }
    }
    const text = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile'), 'utf8');
    const file = path.join(dir, 'changing.cpuprofile');
    writeFileSync(file, text);
    const source = open(file)!;
    writeFileSync(file, text.slice(0, text.lastIndexOf('"samples"')));
    try {
      expect(() => pprofOf(source, false)).toThrow(expect.objectContaining({ code: 'ERR_TACHYON_FILE_CHANGED' }));
    } finally {
      source.close?.();
    }
  });

  it('keeps the records of a profile of at most MAX_KEPT_RECORDS, and streams a larger one in convert()', () => {
    const small = path.join(repoRoot, 'test', 'fixtures', 'outside', 'node-small.cpuprofile');
    const kept = readCpuProfileStreamed(small);
    expect(kept).toBeDefined();
    expect('batches' in kept!).toBe(false);
    expect(openProfile(small, { recordsOnce: true })).toBeInstanceOf(ProfileBuilder);

    // MAX_KEPT_RECORDS + 1 records: streamed; the same file gzipped is read held. The same pprof, both ways.
    const n = MAX_KEPT_RECORDS + 1;
    const cf = (name: string) => ({
      functionName: name,
      scriptId: '1',
      url: 'file:///a.js',
      lineNumber: 1,
      columnNumber: 0,
    });
    const head = JSON.stringify({
      nodes: [
        { id: 1, callFrame: cf('(root)'), children: [2, 3] },
        { id: 2, callFrame: cf('f'), positionTicks: [{ line: 4, ticks: 1000 }] },
        { id: 3, callFrame: cf('g') },
      ],
      startTime: 0,
      endTime: 1,
    }).slice(0, -1);
    const samples = Array.from({ length: n }, (_, i) => 1 + (i % 3)).join(',');
    const deltas = Array.from({ length: n }, (_, i) => 900 + ((i * 37) % 211)).join(',');
    const text = `${head},"samples":[${samples}],"timeDeltas":[${deltas}]}`;
    const plain = path.join(dir, 'large.cpuprofile');
    const gzipped = path.join(dir, 'large-gz.cpuprofile');
    writeFileSync(plain, text);
    writeFileSync(gzipped, gzipSync(text, { level: 1 }));
    const opened = openProfile(plain, { recordsOnce: true });
    expect(opened).not.toBeInstanceOf(ProfileBuilder);
    expect(opened.sampleCount).toBe(n);
    opened.close();
    for (const aggregate of [false, true]) {
      convert(plain, path.join(dir, 'a.pb.gz'), { aggregate });
      convert(gzipped, path.join(dir, 'b.pb.gz'), { aggregate });
      expect(readFileSync(path.join(dir, 'a.pb.gz')).equals(readFileSync(path.join(dir, 'b.pb.gz')))).toBe(true);
    }
  }, 120_000);
});
