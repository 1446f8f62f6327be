// The outside fixtures (test/fixtures/outside/{go,datadog,node}, made by
// scripts/outside-fixtures.sh with Go's runtime/pprof, @datadog/pprof 5.20 and
// node --heap-prof/--cpu-prof) read by the tools themselves: go tool pprof's
// -raw totals, -top first rows and -tags must still be what expected.json
// recorded, so a changed fixture, or a Go whose pprof reads it differently,
// fails here before it can move the reference answers profpack is tested on.
// Each workload was built with a clear hottest function per sample type;
// `designed` states those independently of expected.json.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/environment';
import { nodeJsonExpectation, protoFields, type OutsideExpectations } from '../support/outside-expected';
import {
  goPprofRaw,
  goPprofRawTotals,
  goPprofTags,
  goPprofTop,
  goPprofTopFirst,
  goVersion,
} from '../support/outside-tools';

const fixtureDir = path.join(repoRoot, 'test', 'fixtures', 'outside');
const expected = JSON.parse(readFileSync(path.join(fixtureDir, 'expected.json'), 'utf8')) as OutsideExpectations;
const origins = readFileSync(path.join(fixtureDir, 'ORIGINS.md'), 'utf8');
const toolDirs = ['go', 'datadog', 'node'];

/** What each workload was written to show: per sample type, the hottest function (by self). */
const designed: Record<string, Record<string, string>> = {
  'go/go.cpu.pb.gz': { samples: 'main.mixChecksum', cpu: 'main.mixChecksum' },
  'go/go.heap.pb.gz': {
    alloc_objects: 'main.churnSmall',
    alloc_space: 'main.retainLarge',
    inuse_objects: 'main.retainSmall',
    inuse_space: 'main.retainLarge',
  },
  'go/go.allocs.pb.gz': {
    alloc_objects: 'main.churnSmall',
    alloc_space: 'main.retainLarge',
    inuse_objects: 'main.retainSmall',
    inuse_space: 'main.retainLarge',
  },
  // Parked goroutines all end in the scheduler's park: that is the flat row.
  'go/go.goroutine.pb.gz': { goroutine: 'runtime.gopark' },
  // Go 1.19 charges mutex delay to the Unlock that released the waiters.
  'go/go.mutex.pb.gz': { contentions: 'sync.(*Mutex).Unlock', delay: 'sync.(*Mutex).Unlock' },
  'go/go.block.pb.gz': { contentions: 'runtime.chanrecv1', delay: 'runtime.chanrecv1' },
  'datadog/datadog.wall.pb.gz': { sample: 'computeChecksum', wall: 'computeChecksum', cpu: 'computeChecksum' },
  'datadog/datadog.heap.pb.gz': { inuse_objects: 'retainRecords', inuse_space: 'retainRows' },
  'node/node.heapprofile': { self: 'retainRows' },
  'node/node.cpu-main.cpuprofile': { self: 'hashOnMain' },
  'node/node.cpu-worker.cpuprofile': { self: 'sortOnWorker' },
};

/** The labels each workload put on its samples (-tags keys), and the files that name a default sample type. */
const designedTagKeys: Record<string, string[]> = {
  'go/go.cpu.pb.gz': ['phase', 'tenant'],
  'go/go.heap.pb.gz': ['bytes'],
  'go/go.allocs.pb.gz': ['bytes'],
  'datadog/datadog.wall.pb.gz': [
    'end_timestamp_ns',
    'local root span id',
    'span id',
    'thread id',
    'thread name',
    'trace endpoint',
  ],
};
const designedDefaultType: Record<string, string> = { 'go/go.allocs.pb.gz': 'alloc_space' };

const fixtures = toolDirs.flatMap((d) => readdirSync(path.join(fixtureDir, d)).map((f) => `${d}/${f}`)).sort();
const pprofFiles = fixtures.filter((f) => f.endsWith('.pb.gz'));
const jsonFiles = fixtures.filter((f) => !f.endsWith('.pb.gz'));

describe('outside fixtures: the set', () => {
  it('every fixture has expectations, a designed hottest function and an ORIGINS.md row; nothing else', () => {
    expect(fixtures.length).toBe(11);
    expect([...Object.keys(expected.pprof), ...Object.keys(expected.json)].sort()).toEqual(fixtures);
    expect(Object.keys(designed).sort()).toEqual(fixtures);
    for (const f of fixtures) expect(origins, `ORIGINS.md row for ${f}`).toContain(`| \`${f}\` |`);
  });

  it('each committed file stays small (< 50 KB)', () => {
    for (const f of fixtures) expect(readFileSync(path.join(fixtureDir, f)).length, f).toBeLessThan(50_000);
  });

  it('is read by the Go that recorded expected.json', () => {
    expect(goVersion()).toBe(expected.goVersion);
  });
});

describe.each(pprofFiles)('go tool pprof reads %s as recorded', (name) => {
  const file = path.join(fixtureDir, name);
  const want = expected.pprof[name]!;

  it('-raw: the sample types with the sum of each value column', () => {
    const totals = goPprofRawTotals(file);
    expect(totals).toEqual(want.sampleTypes);
    // Every type carries weight: a fixture whose column sums to 0 could not tell a summed value from a count.
    for (const t of totals) expect(t.total, t.type).toBeGreaterThan(0);
  });

  it('-raw: period type, period, duration, default type and the number of sample records', () => {
    const raw = goPprofRaw(file);
    expect(raw.header.periodType).toEqual(want.periodType);
    expect(raw.header.period).toBe(want.period);
    expect(raw.header.duration).toBe(want.rawDuration);
    expect(raw.header.defaultType).toBe(want.rawDefaultType);
    expect(raw.header.defaultType).toBe(designedDefaultType[name] ?? null);
    expect(raw.samples).toBe(want.samples);
    const { fileDefaultSampleType, durationNanos, fileSamples } = want;
    expect(protoFields(file)).toEqual({ fileDefaultSampleType, durationNanos, fileSamples });
    expect(raw.samples).toBeLessThanOrEqual(fileSamples);
  });

  it('-top: the default type and duration; per sample type, the first row is the designed hottest function', () => {
    const top = goPprofTop(file);
    expect(top.type).toBe(want.goDefaultType);
    expect(top.duration).toBe(want.duration);
    for (const t of want.sampleTypes) {
      const first = goPprofTopFirst(file, t.type);
      expect(first, t.type).toBe(want.topFirst[t.type]);
      expect(first, t.type).toBe(designed[name]![t.type]);
    }
  });

  it("-tags: the label keys, and each listed key's values and shares", () => {
    const tags = goPprofTags(file);
    expect(tags.map((t) => t.key)).toEqual(want.tagKeys);
    expect(tags.map((t) => t.key)).toEqual(designedTagKeys[name] ?? []);
    for (const [i, t] of want.tags.entries()) {
      const got = tags[i]!;
      if ('valueCount' in t) {
        expect({ key: got.key, total: got.total, valueCount: got.values.length }).toEqual(t);
      } else expect(got).toEqual(t);
    }
  });
});

describe.each(jsonFiles)('%s (Node JSON, which go tool pprof cannot read): counts from its own JSON', (name) => {
  it('nodes, samples, total, duration and the function with the most self', () => {
    const got = nodeJsonExpectation(path.join(fixtureDir, name));
    expect(got).toEqual(expected.json[name]);
    expect(got.topSelf).toBe(designed[name]!.self);
    expect(got.samples).toBeGreaterThan(100);
  });
});
