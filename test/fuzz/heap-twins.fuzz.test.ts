/**
 * The heap section's two decoders (issue 38): the addon's
 * (native/tachyon/v2/heap_decoder.cc) and the JS twin (heap-decode.ts) give
 * the same records, the same stacks in the same order, and on bad input the
 * same error code at the same offset, on sections the library's writer makes
 * (raw and zstd chunks, random plans) and on those sections mutated (bytes
 * set, cut, spliced), under the default limits and under small ones.
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProfpackError } from '../../lib/errors';
import { readProfileV2 } from '../../lib/tachyon/read/v2/file';
import { HeapSectionDecoder } from '../../lib/tachyon/codec/heap/decode';
import { ByteSink } from '../../lib/tachyon/codec/bytes';
import {
  encodeHeapChunk,
  encodeHeapHeader,
  HEAP_MAX_THREADS,
  HeapRecordFlag,
} from '../../lib/tachyon/codec/heap/format';
import { HEAP_LIMITS } from '../../lib/tachyon/codec/heap/limits';
import type { V2Native } from '../../lib/tachyon/codec/native';
import { feedPlan, heapFileWriter, plannedTrace, type PlannedTrace } from '../support/heap-traces';
import { scratchDir } from '../support/scratch-dir';
import { nativeTwin } from './twins';

const v2Native = nativeTwin<V2Native>('v2');
const dir = scratchDir('profpack-heap-twins-');
const START = 7_000_000;
let files = 0;

interface Section {
  bytes: Uint8Array;
  offset: number;
  frames: number;
}

function sectionOf(plan: PlannedTrace, compression: 'zstd' | 'none'): Section {
  const out = path.join(dir, `h${files++}.tach`);
  const w = heapFileWriter(out, START, { compression, backend: 'js' });
  w.writeStack(1n, 0, BigInt(START + 1), 0, [w.internFrame({ filename: 'cpu.js', funcname: 'spin' })]);
  feedPlan(plan, w.heapSink(), START);
  w.finalize();
  const profile = readProfileV2(readFileSync(out));
  return { bytes: profile.heap!.bytes, offset: profile.heap!.offset, frames: profile.frames.length };
}

/**
 * Every record as plain values (each object's stack as its frames) and the outcome. (A record that fails may have
 * handed some stacks to stackOf before the JS twin meets its error; those belong to no record.)
 */
function decode(s: Section, native: V2Native | null, frameCount = s.frames): unknown {
  const stacks: string[] = [];
  const records: unknown[] = [];
  const stackOf = (frames: Uint32Array, depth: number): number => stacks.push(frames.slice(0, depth).join(',')) - 1;
  let outcome: unknown = 'ok';
  try {
    const decoder = new HeapSectionDecoder(s.bytes, s.offset, START, frameCount, stackOf, native);
    for (const r of decoder.records()) {
      records.push({
        ...r,
        ordinals: [...r.ordinals],
        sizes: [...r.sizes],
        stacks: [...r.stackIds].map((id) => (id === 0xffffffff ? null : stacks[id])),
        stackIds: undefined,
        allocTimesUs: r.allocTimesUs === null ? null : [...r.allocTimesUs],
        freed: [...r.freed],
      });
    }
  } catch (err) {
    if (!isProfpackError(err)) throw err;
    outcome = { code: err.code, offset: err.offset };
  }
  return { records, outcome };
}

function withLimits<T>(live: number | null, events: number | null, fn: () => T): T {
  const saved = [process.env[HEAP_LIMITS.live.env], process.env[HEAP_LIMITS.events.env]];
  const set = (name: string, value: number | string | null | undefined): void => {
    if (value === null || value === undefined) delete process.env[name];
    else process.env[name] = String(value);
  };
  set(HEAP_LIMITS.live.env, live);
  set(HEAP_LIMITS.events.env, events);
  try {
    return fn();
  } finally {
    set(HEAP_LIMITS.live.env, saved[0]);
    set(HEAP_LIMITS.events.env, saved[1]);
  }
}

function expectTwins(s: Section, frameCount = s.frames): { outcome: unknown } {
  const js = decode(s, null, frameCount) as { outcome: unknown };
  expect(decode(s, v2Native, frameCount)).toEqual(js);
  return js;
}

/** Edits of a section past its header: bytes set, a cut, a span repeated (records doubled, frees replayed). */
const edits = (length: number) =>
  fc.record({
    set: fc.array(fc.tuple(fc.nat(length - 1), fc.nat(255)), { maxLength: 4 }),
    cut: fc.option(fc.nat(length), { nil: undefined }),
    splice: fc.option(fc.tuple(fc.nat(length), fc.nat(length), fc.nat(length)), { nil: undefined }),
  });

function edited(bytes: Uint8Array, e: { set: [number, number][]; cut?: number; splice?: [number, number, number] }) {
  let out = bytes.slice();
  for (const [at, value] of e.set) out[at] = value;
  if (e.splice !== undefined) {
    const [from, to, at] = e.splice;
    const piece = out.slice(Math.min(from, to), Math.max(from, to));
    out = Uint8Array.from([...out.subarray(0, at), ...piece, ...out.subarray(at)]);
  }
  return e.cut === undefined ? out : out.subarray(0, e.cut);
}

describe('heap section decoders: native and JS twins', () => {
  it('valid sections of random plans give the same records (raw and zstd chunks)', () => {
    let outcomes = 0;
    fc.assert(
      fc.property(plannedTrace, fc.constantFrom('none' as const, 'zstd' as const), (plan, compression) => {
        const s = sectionOf(plan, compression);
        expect(expectTwins(s).outcome).toBe('ok');
        outcomes++;
      }),
      { numRuns: 40 },
    );
    // Every run reached its end (at least 40: PROFPACK_FC_RUNS_SCALE may ask for more).
    expect(outcomes).toBeGreaterThanOrEqual(40);
  });

  it('mutated sections give the same records, then the same code at the same offset', () => {
    const plans = fc.sample(plannedTrace, { numRuns: 6, seed: 38 });
    const sections = plans.map((p) => sectionOf(p, 'none'));
    const seen = new Set<string>();
    for (const s of sections) {
      fc.assert(
        fc.property(edits(s.bytes.length), fc.nat(3), (e, frameCut) => {
          const bytes = edited(s.bytes, e);
          const { outcome } = expectTwins({ ...s, bytes }, Math.max(0, s.frames - frameCut));
          seen.add(typeof outcome === 'string' ? outcome : (outcome as { code: string }).code);
        }),
        { numRuns: 150, seed: s.bytes.length },
      );
    }
    // The mutations reach more than one refusal (and some edits still decode).
    expect(seen.size).toBeGreaterThan(4);
  });

  it('past HEAP_MAX_THREADS both refuse at the same thread (zstd chunk of memory records)', () => {
    const sink = new ByteSink();
    for (let i = 0; i <= HEAP_MAX_THREADS; i++) {
      sink.u8(HeapRecordFlag.Memory);
      for (const v of [i, i, 2, 9, 1]) sink.uvarint(v); // a new thread, its id, time +1, external, ArrayBuffer bytes
    }
    const header = encodeHeapHeader({ intervalBytes: 1, records: 0, allocations: 0, frees: 0, live: 0, shortLived: 0 });
    const chunk = encodeHeapChunk(sink.bytes.subarray(0, sink.length), 3);
    const bytes = Uint8Array.from([...header, ...chunk]);
    // Records and outcome only: 65,536 records spelled out are slow to compare.
    const run = (native: V2Native | null): { records: number; code?: string; offset?: number } => {
      let records = 0;
      try {
        for (const _ of new HeapSectionDecoder(bytes, 500, START, 1, () => 0, native).records()) records++;
      } catch (err) {
        if (!isProfpackError(err)) throw err;
        return { records, code: err.code, offset: err.offset };
      }
      return { records };
    };
    const js = run(null);
    expect(js).toMatchObject({ records: HEAP_MAX_THREADS, code: 'ERR_V2_LIMIT' });
    expect(run(v2Native)).toEqual(js);
  });

  it('under small limits both refuse at the same record with ERR_V2_LIMIT', () => {
    const plan = fc.sample(
      plannedTrace.filter((p) => p.polls.length > 5),
      { numRuns: 1, seed: 7 },
    )[0]!;
    const s = sectionOf(plan, 'zstd');
    const codes = new Set<unknown>();
    for (const [live, events] of [
      [1, null],
      [3, null],
      [null, 5],
      [null, 40],
      [2, 9],
    ] as const) {
      codes.add((withLimits(live, events, () => expectTwins(s)).outcome as { code?: string }).code);
    }
    expect(codes).toEqual(new Set(['ERR_V2_LIMIT']));
  });
});
