/**
 * Seeds for the JS mutation fuzzer: every shared vector, read in place, with
 * field hints taken from the formats' layouts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import { repoRoot, sharedPath } from '../support/environment';
import type { FrameSpec } from '../../lib/tachyon/write/types';
import { memoryWriter } from '../support/memory-writer';
import { frameFromV8 } from '../../lib/v8/index';
import { ModelSectionEncoder } from '../../lib/tachyon/codec/model/encoder';
import fc from 'fast-check';
import { feedPlan, plannedTrace } from '../support/heap-traces';
// @ts-expect-error plain ESM helper without types
import { loadStream } from '../../bench/_streams.mjs';
import type { FieldHints, FixedField, Seed } from './mutate';

function listDir(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) throw new Error(`shared data missing: ${dir}`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort();
}

/** Skips a LEB128 varint; returns the offset after it (or the end). */
function skipVarint(bytes: Uint8Array, p: number): number {
  while (p < bytes.length && bytes[p]! & 0x80) p++;
  return p + 1;
}
function readVarint(bytes: Uint8Array, p: number): [number, number] {
  let v = 0;
  let shift = 0;
  while (p < bytes.length) {
    const b = bytes[p++]!;
    v += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) break;
  }
  return [v, p];
}

// Tachyon header fields (lib/tachyon/format.ts, shared notes §2): fixed-width,
// in the writer's byte order.
const TACHYON_HEADER_FIELDS: [number, 1 | 2 | 4 | 8][] = [
  [0, 4],
  [4, 4],
  [8, 1],
  [9, 1],
  [10, 1],
  [11, 1],
  [12, 8],
  [20, 8],
  [28, 8],
  [36, 4],
  [40, 8],
  [48, 8],
  [56, 4],
  [60, 4],
];

/**
 * Hints for a Tachyon file: header and footer fields, and for uncompressed
 * sample regions every record's kind byte and varints (a small independent
 * walker, so mutations hit real record boundaries).
 */
export function tachyonHints(bytes: Uint8Array): FieldHints {
  const le = bytes[0] === 0x48; // "HCAT" on disk is a little-endian writer
  const fixed: FixedField[] = TACHYON_HEADER_FIELDS.map(([offset, size]) => ({ offset, size, littleEndian: le }));
  const n = bytes.length;
  if (n >= 96) {
    // footer: string_count u32, frame_count u32, file_size u64, 16 reserved bytes
    fixed.push(
      { offset: n - 32, size: 4, littleEndian: le },
      { offset: n - 28, size: 4, littleEndian: le },
      { offset: n - 24, size: 8, littleEndian: le },
    );
  }
  const varints: number[] = [];
  const kinds: { offset: number; valid: readonly number[] }[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (n >= 64) {
    const compression = view.getUint32(56, le);
    const stringOffset = Number(view.getBigUint64(40, le));
    const frameOffset = Number(view.getBigUint64(48, le));
    if (compression === 0 && stringOffset <= n) {
      let p = 64;
      let guard = 0;
      while (p + 13 <= stringOffset && guard++ < 20000) {
        fixed.push({ offset: p, size: 8, littleEndian: le }, { offset: p + 8, size: 4, littleEndian: le });
        const kind = bytes[p + 12]!;
        kinds.push({ offset: p + 12, valid: [0, 1, 2, 3] });
        p += 13;
        if (kind === 0) {
          varints.push(p);
          let count: number;
          [count, p] = readVarint(bytes, p);
          for (let i = 0; i < count && p < stringOffset; i++) {
            varints.push(p);
            p = skipVarint(bytes, p) + 1;
          }
        } else if (kind <= 3) {
          varints.push(p);
          p = skipVarint(bytes, p) + 1; // delta, status
          const counts = kind === 1 ? 1 : 2;
          let items = 0;
          for (let i = 0; i < counts; i++) {
            varints.push(p);
            let v: number;
            [v, p] = readVarint(bytes, p);
            if (i === counts - 1) items = v;
          }
          for (let i = 0; i < items && p < stringOffset; i++) {
            varints.push(p);
            p = skipVarint(bytes, p);
          }
        } else {
          break;
        }
      }
    }
    // string and frame tables are varint sequences
    for (const start of [stringOffset, frameOffset]) if (start < n) varints.push(start);
  }
  return { fixed, varints, kinds };
}

export function tachyonSeeds(): Seed[] {
  const dir = sharedPath('vectors', 'tachyon');
  return listDir(dir, '.bin').map((name) => {
    const bytes = new Uint8Array(readFileSync(path.join(dir, name)));
    return { name, bytes, hints: tachyonHints(bytes) };
  });
}

export interface SvbSeed extends Seed {
  variant: 'svb1234' | 'svb0124' | 'delta';
  count: number;
  previous: number;
}

export function svbSeeds(): SvbSeed[] {
  const dir = sharedPath('vectors', 'svb');
  const out: SvbSeed[] = [];
  for (const name of listDir(dir, '.bin')) {
    const m = /^(.*)\.(svb1234|svb0124|delta_prev(\d+))\.bin$/.exec(name);
    if (!m) throw new Error(`unrecognised svb vector name ${name}`);
    const count = readFileSync(path.join(dir, `${m[1]}.u32`)).length / 4;
    const bytes = new Uint8Array(readFileSync(path.join(dir, name)));
    const variant = m[2] === 'svb1234' ? 'svb1234' : m[2] === 'svb0124' ? 'svb0124' : 'delta';
    // Control bytes: one per 4 values, at the front.
    const controlBytes = Math.ceil(count / 4);
    const kinds = Array.from({ length: Math.min(controlBytes, bytes.length) }, (_, i) => ({
      offset: i,
      valid: [0x00, 0x55, 0xaa, 0xff, 0x1b, 0xe4] as const,
    }));
    out.push({ name, bytes, variant, count, previous: m[3] ? Number(m[3]) >>> 0 : 0, hints: { kinds } });
  }
  return out;
}

/** A Tachyon file taken apart: the sample region (decompressed) and what surrounds it. */
export interface TachyonParts {
  littleEndian: boolean;
  header: Uint8Array;
  region: Uint8Array;
  zstd: boolean;
  tail: Uint8Array; // tables, stats block, footer
  regionHints: FieldHints;
}

/**
 * Splits a well-formed file so a mutation can target its sample region and
 * the file be put back together with consistent offsets (otherwise nearly
 * every length-changing mutation stops at open). Null for files whose layout
 * is already broken.
 */
export function tachyonParts(seed: Seed): TachyonParts | null {
  const bytes = seed.bytes;
  if (bytes.length < 96) return null;
  const le = bytes[0] === 0x48;
  if (!le && bytes[0] !== 0x54) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const compression = view.getUint32(56, le);
  const stringOffset = Number(view.getBigUint64(40, le));
  const frameOffset = Number(view.getBigUint64(48, le));
  if (stringOffset < 64 || stringOffset > frameOffset || frameOffset > bytes.length) return null;
  let region = bytes.subarray(64, stringOffset);
  if (compression === 1) {
    try {
      region = new Uint8Array(zstdDecompress(Buffer.from(region)));
    } catch {
      return null;
    }
  }
  // Region-relative hints: the walker of tachyonHints, on a file made of the region alone.
  const probe = new Uint8Array(64 + region.length);
  probe.set(bytes.subarray(0, 64));
  new DataView(probe.buffer).setBigUint64(40, BigInt(probe.length), le);
  new DataView(probe.buffer).setUint32(56, 0, le);
  probe.set(region, 64);
  const h = tachyonHints(probe);
  const shift = (o: number): number => o - 64;
  const regionHints: FieldHints = {
    fixed: (h.fixed ?? [])
      .filter((f) => f.offset >= 64 && f.offset < probe.length)
      .map((f) => ({ ...f, offset: shift(f.offset) })),
    varints: (h.varints ?? []).filter((o) => o >= 64 && o < probe.length).map(shift),
    kinds: (h.kinds ?? []).map((k) => ({ ...k, offset: shift(k.offset) })),
  };
  return {
    littleEndian: le,
    header: bytes.slice(0, 64),
    region,
    zstd: compression === 1,
    tail: bytes.slice(stringOffset),
    regionHints,
  };
}

/** Reassembles parts around a (mutated) region: table offsets, footer file size and zstd redone. */
export function tachyonJoin(parts: TachyonParts, region: Uint8Array): Uint8Array {
  const stored = parts.zstd ? new Uint8Array(zstdCompress(Buffer.from(region))) : region;
  const out = new Uint8Array(64 + stored.length + parts.tail.length);
  out.set(parts.header);
  out.set(stored, 64);
  out.set(parts.tail, 64 + stored.length);
  const view = new DataView(out.buffer);
  const le = parts.littleEndian;
  const oldString = Number(view.getBigUint64(40, le));
  const delta = 64 + stored.length - oldString;
  view.setBigUint64(40, BigInt(oldString + delta), le);
  view.setBigUint64(48, view.getBigUint64(48, le) + BigInt(delta), le);
  view.setBigUint64(out.length - 24, BigInt(out.length), le);
  return out;
}

export interface PcSeed extends Seed {
  kind: 'varint' | 'linear';
  quantum: number;
  size: number;
}

/** Every pcvalue table of data/pcdata (varint-delta bytes) and every reference linear encoding. */
export function pcdataSeeds(): PcSeed[] {
  const dir = sharedPath('data', 'pcdata');
  const out: PcSeed[] = [];
  const jsonl = (name: string): Record<string, unknown>[] => {
    let text = readFileSync(path.join(dir, name));
    if (name.endsWith('.gz')) text = gunzipSync(text);
    return text
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  for (const name of readdirSync(dir).sort()) {
    if (/\.tables\.jsonl(\.gz)?$/.test(name)) {
      for (const rec of jsonl(name)) {
        const bytes = new Uint8Array(Buffer.from(rec.b64 as string, 'base64'));
        // Varints start after each run's end: decode positions so edits hit real fields.
        const varints: number[] = [];
        for (let p = 0; p < bytes.length; p++) {
          if (p === 0 || !(bytes[p - 1]! & 0x80)) varints.push(p);
        }
        out.push({
          name: `${name}#${String(rec.i)}`,
          bytes,
          kind: 'varint',
          quantum: rec.quantum as number,
          size: rec.size as number,
          hints: { varints },
        });
      }
    } else if (/\.linear\.jsonl(\.gz)?$/.test(name)) {
      for (const rec of jsonl(name)) {
        const bytes = new Uint8Array(Buffer.from(rec.lin as string, 'base64'));
        out.push({
          name: `${name}#${String(rec.rec)}`,
          bytes,
          kind: 'linear',
          quantum: rec.quantum as number,
          size: rec.size as number,
          hints: { kinds: [{ offset: 0, valid: [0xfe, 0xff, 0x00, 0x01] }] },
        });
      }
    }
  }
  if (out.length === 0) throw new Error(`no pcdata tables in ${dir}`);
  return out;
}

/**
 * Version-2 files for the Tachyon mutation fuzzer (issue 19): the kind-5
 * fixture written before the recency coding, and the first 400 samples of two
 * real stack streams written now (kind 6 and predict blocks, raw and zstd),
 * every third sample on a second thread.
 */
export function version2Seeds(): Seed[] {
  const out: Seed[] = [];
  const fixture = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'v2', 'stacktable-kind5.tach')));
  out.push({ name: 'v2-kind5-fixture', bytes: fixture, hints: tachyonHints(fixture) });
  for (const name of ['py_stdlib', 'node_terser']) {
    const stream = loadStream(name) as {
      frames: FrameSpec[];
      samples: { threadId: bigint; interpreterId: number; timestampUs: number; status: number; stack: number[] }[];
      intervalUs: number;
    };
    for (const stackCoding of ['stacktable', 'predict'] as const) {
      for (const compression of ['none', 'zstd'] as const) {
        const { writer, bytes } = memoryWriter({
          sampleIntervalUs: stream.intervalUs,
          startTimeUs: 1_000_000,
          formatVersion: 2,
          stackCoding,
          compression,
        });
        const ids = new Map<number, number>();
        for (const [i, s] of stream.samples.slice(0, 400).entries()) {
          const stack = s.stack.map(
            (f) => ids.get(f) ?? (ids.set(f, writer.internFrame(stream.frames[f]!)), ids.get(f)!),
          );
          writer.writeStack(i % 3 === 2 ? 2n : s.threadId, s.interpreterId, s.timestampUs, s.status, stack);
        }
        writer.finalize();
        const file = bytes();
        out.push({ name: `v2-${name}-${stackCoding}-${compression}`, bytes: file, hints: tachyonHints(file) });
      }
    }
  }
  out.push(...modelSeeds(), ...heapSeeds());
  return out;
}

/** Version 2 with a heap section (docs/format-v2.md §9): live, alloc and free records, raw and zstd chunks. */
function heapSeeds(): Seed[] {
  const busy = plannedTrace.filter((p) => p.polls.length > 8 && p.live.length > 0);
  const plan = fc.sample(busy, { numRuns: 1, seed: 27 })[0]!;
  return (['none', 'zstd'] as const).map((compression) => {
    const options = { sampleIntervalUs: 1000, startTimeUs: 1_000_000, formatVersion: 2 as const, compression };
    const { writer, bytes } = memoryWriter(options);
    writer.writeStack(1n, 0, 1_000_500, 0, [writer.internFrame({ filename: 'f.js', funcname: 'main' })]);
    feedPlan(plan, writer.heapSink({ frameOf: frameFromV8 }), 1_000_000);
    writer.finalize();
    const file = bytes();
    return { name: `v2-heap-${compression}`, bytes: file, hints: tachyonHints(file) };
  });
}

/**
 * Version 2 with a model section (docs/format-v2.md §8): two value columns (one
 * turned float64 by a fraction), labels, samples without a time, thread names,
 * raw and zstd, so mutations reach every field of the section.
 */
function modelSeeds(): Seed[] {
  const out: Seed[] = [];
  for (const compression of ['none', 'zstd'] as const) {
    const section = new ModelSectionEncoder({
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type: 'alloc_space', unit: 'bytes' },
      ],
      defaultSampleType: 1,
      periodType: { type: 'space', unit: 'bytes' },
      period: 524288,
      durationUs: 2_000_000n,
      comments: ['fuzz seed'],
    });
    const { writer, bytes } = memoryWriter(
      { sampleIntervalUs: 1000, startTimeUs: 1_000_000, formatVersion: 2, compression },
      { modelSection: section },
    );
    const frames = ['main', 'work', 'leaf'].map((funcname, i) =>
      writer.internFrame({ filename: 'f.py', funcname, lineno: i + 1 }),
    );
    const set = section.internLabels([
      { key: 'span', str: 'a1' },
      { key: 'n', num: -3, unit: 'bytes' },
      { key: 'r', num: 0.5 },
    ]);
    section.nameThread(2n, 0, 'worker');
    const values = [new Float64Array([1, 2, 1, 3, 1, 1]), new Float64Array([512, 1e12, 0.25, -7, 0, 9])];
    for (let i = 0; i < 60; i++) {
      writer.writeStack(BigInt(1 + (i % 2)), 0, 1_000_000 + i * 1000, 2, frames.slice(0, 1 + (i % 3)).reverse());
      section.add(values, i % 6, i % 4 === 0 ? set : 0, i % 7 !== 0);
    }
    writer.finalize();
    const file = bytes();
    out.push({ name: `v2-model-${compression}`, bytes: file, hints: tachyonHints(file) });
  }
  return out;
}
