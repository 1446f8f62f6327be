/**
 * What test/fixtures/outside/expected.json records of each outside fixture,
 * computed in one place for the test (which compares) and for
 * scripts/outside-fixtures.sh (which writes the file after regenerating):
 *
 * - pprof files: Go's `go tool pprof` reading (-raw totals and header, -top's
 *   type, duration and first row per sample type, -tags), and the few
 *   profile.proto fields pprof's text does not show (default_sample_type,
 *   duration_nanos), read with the pprof-format decoder;
 * - Node's JSON profiles (.heapprofile, .cpuprofile), which Go's pprof cannot
 *   read: counts taken straight from their JSON as DevTools defines it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import {
  goPprofRaw,
  goPprofTags,
  goPprofTop,
  goVersion,
  type SampleType,
  type SampleTypeTotal,
  type TagKey,
} from './outside-tools';

/** -tags keys with more distinct values than this (timestamps) keep only their count. */
const MAX_LISTED_TAG_VALUES = 12;

export interface PprofExpectation {
  sampleTypes: SampleTypeTotal[];
  /** The sample type `go tool pprof` shows when none is asked for (`Type:` of -top). */
  goDefaultType: string;
  /** The type -raw marks `[dflt]` (the file's default_sample_type), null when it has none. */
  rawDefaultType: string | null;
  /** profile.proto's default_sample_type as the pprof-format decoder reads it ("" when left out). */
  fileDefaultSampleType: string;
  periodType: SampleType | null;
  period: number | null;
  durationNanos: number;
  /** -top's `Duration:` (rounded by pprof), null when the file has none. */
  duration: string | null;
  /** -raw's `Duration:` as printed (pprof cuts it to 4 characters). */
  rawDuration: string | null;
  /** Sample records -raw lists: pprof merges records with equal stacks and labels as it reads. */
  samples: number;
  /** Sample records in the file (Go's CPU writer repeats stacks; Datadog's heap writes one per size). */
  fileSamples: number;
  /** Per sample type: the first row of `go tool pprof -top -sample_index=T`. */
  topFirst: Record<string, string>;
  tagKeys: string[];
  tags: (TagKey | { key: string; total: string; valueCount: number })[];
}

export interface NodeJsonExpectation {
  kind: 'heapprofile' | 'cpuprofile';
  nodes: number;
  samples: number;
  /** .heapprofile: sum of every node's selfSize; .cpuprofile: sum of timeDeltas (µs). */
  total: number;
  /** .cpuprofile: endTime - startTime (µs). */
  durationUs: number | null;
  /** The function with the largest self value (bytes, or samples), by functionName ("" read as "(anonymous)"). */
  topSelf: string;
}

export interface OutsideExpectations {
  about: string;
  goVersion: string;
  pprof: Record<string, PprofExpectation>;
  json: Record<string, NodeJsonExpectation>;
}

function stringAt(p: Profile, index: unknown): string {
  return p.stringTable.strings[Number(index)] ?? '';
}

/** What pprof's text does not show of profile.proto, as the pprof-format decoder reads it. */
export function protoFields(file: string): {
  fileDefaultSampleType: string;
  durationNanos: number;
  fileSamples: number;
} {
  const bytes = readFileSync(file);
  const proto = Profile.decode(bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes);
  const fileDefaultSampleType = stringAt(proto, proto.defaultSampleType);
  return { fileDefaultSampleType, durationNanos: Number(proto.durationNanos), fileSamples: proto.sample.length };
}

/** The expectation record of one pprof file, from go tool pprof (and two proto fields). */
export function pprofExpectation(file: string): PprofExpectation {
  const raw = goPprofRaw(file);
  const top = goPprofTop(file);
  const topFirst: Record<string, string> = {};
  for (const t of raw.header.sampleTypes) {
    const rows = goPprofTop(file, t.type).rows;
    topFirst[t.type] = rows[0]?.name ?? '';
  }
  const tags = goPprofTags(file);
  const proto = protoFields(file);
  return {
    sampleTypes: raw.totals,
    goDefaultType: top.type,
    rawDefaultType: raw.header.defaultType,
    fileDefaultSampleType: proto.fileDefaultSampleType,
    periodType: raw.header.periodType,
    period: raw.header.period,
    durationNanos: proto.durationNanos,
    duration: top.duration,
    rawDuration: raw.header.duration,
    samples: raw.samples,
    fileSamples: proto.fileSamples,
    topFirst,
    tagKeys: tags.map((t) => t.key),
    tags: tags.map((t) =>
      t.values.length > MAX_LISTED_TAG_VALUES ? { key: t.key, total: t.total, valueCount: t.values.length } : t,
    ),
  };
}

interface JsonNode {
  id: number;
  callFrame: { functionName: string };
  selfSize?: number;
  children?: (JsonNode | number)[];
}

function topOf(selfByName: Map<string, number>): string {
  let best = '';
  let bestValue = -Infinity;
  for (const [name, value] of selfByName) {
    if (value > bestValue || (value === bestValue && name < best)) [best, bestValue] = [name, value];
  }
  return best;
}

const nameOf = (n: JsonNode): string => (n.callFrame.functionName === '' ? '(anonymous)' : n.callFrame.functionName);

/** Counts straight from a `node --heap-prof` or `node --cpu-prof` file's JSON. */
export function nodeJsonExpectation(file: string): NodeJsonExpectation {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const selfByName = new Map<string, number>();
  const add = (name: string, v: number) => selfByName.set(name, (selfByName.get(name) ?? 0) + v);
  if (file.endsWith('.heapprofile')) {
    // A tree: head, children nested; each node's selfSize is bytes sampled there.
    let nodes = 0;
    let total = 0;
    const stack = [doc.head as JsonNode];
    while (stack.length > 0) {
      const n = stack.pop()!;
      nodes++;
      total += n.selfSize ?? 0;
      add(nameOf(n), n.selfSize ?? 0);
      for (const c of n.children ?? []) stack.push(c as JsonNode);
    }
    const samples = (doc.samples as unknown[] | undefined)?.length ?? 0;
    return { kind: 'heapprofile', nodes, samples, total, durationUs: null, topSelf: topOf(selfByName) };
  }
  // A flat node list; samples are node ids, timeDeltas the µs before each sample.
  const nodes = doc.nodes as JsonNode[];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const samples = doc.samples as number[];
  for (const id of samples) add(nameOf(byId.get(id)!), 1);
  const total = (doc.timeDeltas as number[]).reduce((a, b) => a + b, 0);
  const durationUs = (doc.endTime as number) - (doc.startTime as number);
  const topSelf = topOf(selfByName);
  return { kind: 'cpuprofile', nodes: nodes.length, samples: samples.length, total, durationUs, topSelf };
}

/** Every fixture file under DIR (relative names), pprof and Node JSON alike, read into one record. */
export function outsideExpectations(dir: string, files: string[]): OutsideExpectations {
  const out: OutsideExpectations = {
    about:
      'Written by scripts/outside-fixtures.sh from the tools themselves (see ORIGINS.md); ' +
      'checked by test/outside/outside-fixtures.test.ts',
    goVersion: goVersion(),
    pprof: {},
    json: {},
  };
  for (const f of [...files].sort()) {
    const full = path.join(dir, f);
    if (f.endsWith('.pb.gz')) out.pprof[f] = pprofExpectation(full);
    else out.json[f] = nodeJsonExpectation(full);
  }
  return out;
}

/** Entry for scripts/outside-fixtures.sh: `node outside-expected.js FIXTURE_DIR FILE...`. */
// Guarded: under vitest the module is not loaded by CommonJS.
const isMain = typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module;
if (isMain) {
  const [dir, ...files] = process.argv.slice(2);
  if (dir === undefined || files.length === 0) throw new Error('usage: outside-expected FIXTURE_DIR FILE...');
  writeFileSync(path.join(dir, 'expected.json'), `${JSON.stringify(outsideExpectations(dir, files), null, 2)}\n`);
}
