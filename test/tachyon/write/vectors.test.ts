/**
 * Byte identity with CPython 3.15.2's writer: every synthetic vector s01..s20
 * is rebuilt from CPython's own dump of it (the .expected.json) and written
 * again by ProfileWriter. Raw files must match byte for byte; zstd files in
 * their decompressed sample region, header fields, tables, stats and footer,
 * and (same libzstd 1.5.7, same level, same streaming calls) in the
 * compressed bytes too.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedPath } from '../../support/environment';
import { ProfileWriter } from '../../../lib/tachyon/write/index';
import {
  applyStats,
  chronologicalCalls,
  fileOrderCalls,
  frameInfoOf,
  loadVector,
  rawFrames,
  splitFile,
  toInterpreters,
  writerOptions,
  type Call,
  type Expected,
} from '../../support/writer-profiles';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-writer-vectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const names = readdirSync(sharedPath('vectors', 'tachyon'))
  .filter((f) => /^s\d\d_.*\.bin$/.test(f))
  .map((f) => f.slice(0, -4))
  .sort();

function write(name: string, expected: Expected, bin: Uint8Array, calls: Call[], tag: string): Uint8Array {
  const compression = name.endsWith('_zstd') ? 'zstd' : 'none';
  const raw = rawFrames(bin);
  const frameOf = (f: Parameters<typeof frameInfoOf>[0]) => frameInfoOf(f, raw);
  const file = path.join(dir, `${name}.${tag}.bin`);
  const writer = new ProfileWriter(file, writerOptions(expected, compression));
  for (const call of calls) writer.writeSample(toInterpreters(call, frameOf), call.timestamp);
  applyStats(writer, expected);
  writer.finalize();
  return new Uint8Array(readFileSync(file));
}

function compare(name: string, ours: Uint8Array, theirs: Uint8Array): void {
  if (name.endsWith('_none')) {
    expect(Buffer.compare(ours, theirs)).toBe(0);
    return;
  }
  const a = splitFile(ours);
  const b = splitFile(theirs);
  expect(Buffer.compare(a.records, b.records)).toBe(0);
  // Header apart from the two table offsets, which move with the compressed size.
  const headerOf = (p: typeof a) => Buffer.concat([p.header.subarray(0, 40), p.header.subarray(56)]);
  expect(Buffer.compare(headerOf(a), headerOf(b))).toBe(0);
  expect(a.frameTableOffset - a.stringTableOffset).toBe(b.frameTableOffset - b.stringTableOffset);
  // Tables, stats and footer apart from the footer's file size.
  const tailOf = (p: typeof a) =>
    Buffer.concat([p.tail.subarray(0, p.tail.length - 24), p.tail.subarray(p.tail.length - 16)]);
  expect(Buffer.compare(tailOf(a), tailOf(b))).toBe(0);
  // Same libzstd (1.5.7), level 5, one frame streamed with continue + end: the compressed bytes match too.
  expect(Buffer.compare(a.region, b.region)).toBe(0);
  expect(Buffer.compare(ours, theirs)).toBe(0);
}

describe('ProfileWriter reproduces CPython 3.15.2 files', () => {
  it('finds every synthetic vector', () => {
    // s01..s20, _none and _zstd, except s10 (only _none exists).
    expect(names.length).toBe(39);
  });

  for (const name of names) {
    it(`${name}: fed in file order`, () => {
      const { bin, expected } = loadVector(name);
      compare(name, write(name, expected, bin, fileOrderCalls(expected.samples), 'file-order'), bin);
    });
  }

  // Driving the writer in the generator's own call order exercises REPEAT deferral across threads.
  const chronological = names.filter((n) => chronologicalCalls(loadVector(n).expected.samples) !== null);
  it('can recover the call order of every vector but the backwards-timestamp one', () => {
    expect(names.filter((n) => !chronological.includes(n))).toEqual([
      's13_timestamp_gaps_none',
      's13_timestamp_gaps_zstd',
    ]);
  });
  for (const name of chronological) {
    it(`${name}: fed in call order (several threads per writeSample)`, () => {
      const { bin, expected } = loadVector(name);
      const calls = chronologicalCalls(expected.samples)!;
      compare(name, write(name, expected, bin, calls, 'call-order'), bin);
    });
  }
});
