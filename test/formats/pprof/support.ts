/**
 * Shared by the pprof adapter tests: the pprof fixtures, reading a source's
 * totals, writing a source to a file, and `go tool pprof -raw` reduced to
 * what must survive a round trip (values, stacks by function, labels), since
 * location ids, addresses and mappings are renumbered on the way.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ProfileSource } from '../../../lib/profile/index';
import { writePprof, type PprofWriteOptions } from '../../../lib/formats/pprof/index';
import { repoRoot } from '../../support/environment';
import { goPprof } from '../../support/outside-tools';

export const outsideDir = path.join(repoRoot, 'test', 'fixtures', 'outside');

/** Every pprof file the real tools wrote (Go runtime/pprof, @datadog/pprof), relative to outsideDir. */
export const pprofFixtures: string[] = [
  ...['go', 'datadog'].flatMap((dir) =>
    readdirSync(path.join(outsideDir, dir))
      .filter((f) => f.endsWith('.pb.gz'))
      .map((f) => `${dir}/${f}`),
  ),
  ...readdirSync(outsideDir).filter((f) => f.endsWith('.pb.gz')),
];

/** Per value column, the sum over every record (exact: the fixtures' totals are below 2^53). */
export function totals(source: ProfileSource): { records: number; sums: number[] } {
  const sums = source.meta.sampleTypes.map(() => 0);
  let records = 0;
  for (const b of source.batches()) {
    records += b.length;
    for (let c = 0; c < sums.length; c++) {
      const column = b.values[c]!;
      let sum = 0;
      for (let i = 0; i < b.length; i++) sum += column[i]!;
      sums[c] = sums[c]! + sum;
    }
  }
  return { records, sums };
}

/** Writes a source as pprof to `file`; returns the chunks' sizes. */
export function writeFile(source: ProfileSource, file: string, options: PprofWriteOptions = {}): number[] {
  const chunks: Uint8Array[] = [];
  writePprof(source, { path: file, write: (c) => chunks.push(typeof c === 'string' ? Buffer.from(c) : c) }, options);
  writeFileSync(file, Buffer.concat(chunks));
  return chunks.map((c) => c.length);
}

export interface RawView {
  /** PeriodType, Period, Duration and the sample-type line, as printed. */
  header: string[];
  /** Time: as Go prints time_nanos, to the ns. */
  time: string | null;
  /**
   * One line per distinct (stack, labels): "values | frames outermost last |
   * labels", values summed, sorted. Go merges samples by location while
   * reading; profpack's one location per frame merges locations that differ
   * only by address, so both sides are merged by what they show.
   */
  samples: string[];
}

/** `go tool pprof -raw FILE` with location ids replaced by their functions, file and line. */
export function rawView(file: string): RawView {
  const lines = goPprof(['-raw', file]).split('\n');
  const header: string[] = [];
  let time: string | null = null;
  let i = 0;
  for (; i < lines.length && lines[i] !== 'Samples:'; i++) {
    const line = lines[i]!;
    if (/^(PeriodType|Period|Duration): /.test(line)) header.push(line);
    if (line.startsWith('Time: ')) time = line.slice(6);
  }
  header.push(lines[i + 1]!.trim());
  const locations = new Map<string, string[]>();
  let at = lines.indexOf('Locations');
  let current: string[] = [];
  for (at++; at > 0 && at < lines.length && lines[at] !== 'Mappings'; at++) {
    const line = lines[at]!;
    const loc = /^\s+(\d+): \S+ (?:M=\d+ )?(.*?)(?: s=\d+)?$/.exec(line);
    if (loc !== null) {
      current = [loc[2]!];
      locations.set(loc[1]!, current);
    } else if (line.trim() !== '') current.push(line.trim().replace(/ s=\d+$/, ''));
  }
  const merged = new Map<string, bigint[]>();
  let sample: { values: bigint[]; frames: string; labels: string[] } | undefined;
  const flush = () => {
    if (sample === undefined) return;
    const key = `${sample.frames} | ${sample.labels.join(' ')}`;
    const sum = merged.get(key);
    if (sum === undefined) merged.set(key, sample.values);
    else sample.values.forEach((v, k) => (sum[k] = sum[k]! + v));
  };
  for (i += 2; i < lines.length && lines[i] !== 'Locations'; i++) {
    const line = lines[i]!;
    const m = /^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$/.exec(line);
    if (m !== null) {
      flush();
      const ids = m[2]!.trim() === '' ? [] : m[2]!.trim().split(/\s+/);
      sample = {
        values: m[1]!.trim().split(/\s+/).map(BigInt),
        frames: ids.flatMap((id) => locations.get(id) ?? [`?${id}`]).join(' <- '),
        labels: [],
      };
    } else if (line.trim() !== '' && sample !== undefined) sample.labels.push(line.trim());
  }
  flush();
  const samples = [...merged].map(([key, values]) => `${values.join(' ')} | ${key}`).sort();
  return { header, time, samples };
}

/** `go tool pprof -tags FILE` without the lines of the given keys. */
export function tagsView(file: string, withoutKeys: string[] = []): string {
  const out: string[] = [];
  let skipping = false;
  for (const line of goPprof(['-tags', file]).split('\n')) {
    const head = /^ (.+): Total /.exec(line);
    if (head !== null) skipping = withoutKeys.includes(head[1]!);
    if (!skipping) out.push(line);
  }
  return out.join('\n');
}
