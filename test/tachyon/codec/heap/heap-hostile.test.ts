// Hostile heap sections (docs/format-v2.md §9): cut, mutated and hand-made
// sections give a ProfpackError with a code and an offset inside the section,
// never another error, a hang or an allocation the bytes do not pay for; and
// both writer backends write the same heap file byte for byte.
import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../../lib/backend';
import { ErrorCode, isProfpackError } from '../../../../lib/errors';
import { FOOTER_SIZE } from '../../../../lib/tachyon/format';
import { openHeapTrace } from '../../../../lib/tachyon/index';
import { readProfileV2 } from '../../../../lib/tachyon/read/v2/file';
import { ByteSink } from '../../../../lib/tachyon/codec/bytes';
import { HEAP_OFFSET_IN_FOOTER } from '../../../../lib/tachyon/codec/format';
import { HeapSectionDecoder } from '../../../../lib/tachyon/codec/heap/decode';
import {
  encodeHeapChunk,
  encodeHeapHeader,
  HEAP_MAX_THREADS,
  HeapRecordFlag,
  type HeapTotals,
} from '../../../../lib/tachyon/codec/heap/format';
import { thrown } from '../../../support/refusals';
import { feedPlan, heapFileWriter, plannedTrace, type PlannedTrace } from '../../../support/heap-traces';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-v2-heap-bad-'));
let n = 0;
const file = (): string => path.join(dir, `b${n++}.tach`);
const START = 5_000_000;

function writeHeapFile(
  plan: PlannedTrace,
  compression: 'zstd' | 'none',
  writerBackend: 'native' | 'js' = backend.name,
): string {
  const out = file();
  const w = heapFileWriter(out, START, { compression, backend: writerBackend });
  const cpu = w.internFrame({ filename: 'cpu.js', funcname: 'spin' });
  w.writeStack(1n, 0, BigInt(START + 1), 0, [cpu]);
  feedPlan(plan, w.heapSink(), START);
  w.finalize();
  return out;
}

/** Decodes a section (its bytes at `offset`) to the end; returns the records or throws. */
function decodeAll(section: Uint8Array, offset: number, frameCount = 64): number {
  const decoder = new HeapSectionDecoder(section, offset, START, frameCount, (_, depth) => depth);
  let records = 0;
  for (const _ of decoder.records()) records++;
  return records;
}

function sectionOf(out: string): { bytes: Uint8Array; offset: number; frames: number } {
  const profile = readProfileV2(readFileSync(out));
  return { bytes: profile.heap!.bytes, offset: profile.heap!.offset, frames: profile.frames.length };
}

function expectCoded(fn: () => unknown, section: { bytes: Uint8Array; offset: number }): void {
  const err = thrown(fn);
  expect(err.code).toMatch(/^ERR_/);
  expect(typeof err.offset).toBe('number');
  expect(err.offset!).toBeGreaterThanOrEqual(section.offset);
  expect(err.offset!).toBeLessThanOrEqual(section.offset + section.bytes.length);
}

const busyPlan = fc.sample(
  plannedTrace.filter((p) => p.polls.length > 5),
  { numRuns: 1, seed: 42 },
)[0]!;

describe('hostile heap sections', () => {
  it('every cut of a section is refused with a code and an offset', () => {
    for (const compression of ['none', 'zstd'] as const) {
      const s = sectionOf(writeHeapFile(busyPlan, compression));
      const whole = decodeAll(s.bytes, s.offset, s.frames);
      expect(whole).toBeGreaterThan(0);
      const step = Math.max(1, Math.floor(s.bytes.length / 300));
      for (let cut = 0; cut < s.bytes.length; cut += step)
        expectCoded(() => decodeAll(s.bytes.subarray(0, cut), s.offset, s.frames), s);
    }
  });

  it('mutated sections decode or give a coded error, never anything else', () => {
    const s = sectionOf(writeHeapFile(busyPlan, 'none'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(s.bytes.length - 1), fc.nat(255)), { minLength: 1, maxLength: 4 }),
        (edits) => {
          const bytes = s.bytes.slice();
          for (const [at, value] of edits) bytes[at] = value;
          try {
            decodeAll(bytes, s.offset, s.frames);
          } catch (err) {
            expect(isProfpackError(err)).toBe(true);
            expect(typeof (err as { offset?: unknown }).offset).toBe('number');
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  /** A section of one raw chunk holding `records`, with totals that match unless given. */
  function handMade(records: Uint8Array, totals: Partial<HeapTotals> = {}): Uint8Array {
    const header = encodeHeapHeader({
      intervalBytes: 4096,
      records: 2,
      allocations: 1,
      frees: 1,
      live: 0,
      shortLived: 0,
      ...totals,
    });
    const chunk = encodeHeapChunk(records, null);
    const out = new Uint8Array(header.length + chunk.length);
    out.set(header);
    out.set(chunk, header.length);
    return out;
  }

  /** One allocation (ordinal 1, size 8, no stack) on thread 9. */
  function allocRecord(sink: ByteSink): void {
    sink.u8(HeapRecordFlag.Alloc);
    sink.uvarint(0);
    sink.uvarint(9);
    sink.uvarint(2); // time +1
    sink.uvarint(2); // span 1
    sink.uvarint(1); // n
    sink.uvarint(0); // short-lived
    for (const length of [1, 0, 1, 0, 0]) sink.uvarint(length);
    sink.uvarint(2); // ordinal +1
    sink.uvarint(16); // size +8
    sink.u8(0); // k = 0
    sink.uvarint(0); // dist 0: the empty stack
  }

  it('a free that skips more live objects than there are: ERR_V2_BAD_HEAP at its gap', () => {
    const sink = new ByteSink();
    allocRecord(sink);
    sink.u8(HeapRecordFlag.Free);
    sink.uvarint(0);
    sink.uvarint(2);
    sink.uvarint(0);
    sink.uvarint(1); // m = 1
    for (let c = 0; c < 5; c++) sink.uvarint(0);
    const gapAt = sink.length;
    sink.uvarint(1); // skips 1 of the 1 live object: nothing left to free
    const section = handMade(sink.bytes.slice(0, sink.length));
    const err = thrown(() => decodeAll(section, 1000));
    expect(err.code).toBe(ErrorCode.V2_BAD_HEAP);
    expect(err.offset).toBe(1000 + section.length - sink.length + gapAt);
    // The gap 0 is the one live object: the same section with it decodes.
    const fixed = section.slice();
    fixed[fixed.length - 1] = 0;
    expect(decodeAll(fixed, 1000)).toBe(2);
  });

  it('a section defining more than HEAP_MAX_THREADS threads: ERR_V2_LIMIT at the first thread past it', () => {
    // A memory record per new thread (7 bytes each): 1 M of them were 3 MB of zstd and 3.2 GB in the JS decoder.
    const threads = (n: number): { sink: ByteSink; lastAt: number } => {
      const sink = new ByteSink();
      let lastAt = 0;
      for (let i = 0; i < n; i++) {
        lastAt = sink.length;
        sink.u8(HeapRecordFlag.Memory);
        sink.uvarint(i); // a new thread
        sink.uvarint(i); // its id
        for (let c = 0; c < 3; c++) sink.uvarint(0); // time, external, ArrayBuffer bytes
      }
      return { sink, lastAt };
    };
    const full = threads(HEAP_MAX_THREADS);
    const totals = { records: HEAP_MAX_THREADS, allocations: 0, frees: 0 };
    expect(decodeAll(handMade(full.sink.bytes.slice(0, full.sink.length), totals), 0)).toBe(HEAP_MAX_THREADS);
    const over = threads(HEAP_MAX_THREADS + 1);
    const section = handMade(over.sink.bytes.slice(0, over.sink.length), { ...totals, records: HEAP_MAX_THREADS + 1 });
    const err = thrown(() => decodeAll(section, 1000));
    expect(err.code).toBe(ErrorCode.V2_LIMIT);
    expect(err.offset).toBe(1000 + section.length - over.sink.length + over.lastAt + 1);
  });

  it('huge counts are refused before anything is allocated', () => {
    const sink = new ByteSink();
    sink.u8(HeapRecordFlag.Alloc);
    sink.uvarint(0);
    sink.uvarint(9);
    sink.uvarint(0);
    sink.uvarint(0);
    sink.uvarint(0xffff_ffff); // n
    sink.uvarint(0);
    expect(thrown(() => decodeAll(handMade(sink.bytes.slice(0, sink.length)), 0)).code).toBe(ErrorCode.V2_LIMIT);
    const small = new ByteSink();
    allocRecord(small);
    small.bytes[5] = 60; // n = 60 objects in a few bytes
    expect(
      thrown(() => decodeAll(handMade(small.bytes.slice(0, small.length), { records: 1, frees: 0 }), 0)).code,
    ).toBe(ErrorCode.V2_BAD_HEAP);
    // A chunk declaring 2^40 decompressed bytes.
    const header = encodeHeapHeader({ intervalBytes: 1, records: 0, allocations: 0, frees: 0, live: 0, shortLived: 0 });
    const chunk = new ByteSink();
    chunk.u8(1);
    chunk.uvarint(1);
    chunk.uvarint(2 ** 40);
    chunk.u8(0);
    const limited = thrown(() => decodeAll(Uint8Array.from([...header, ...chunk.bytes.subarray(0, chunk.length)]), 0));
    expect(limited.code).toBe(ErrorCode.V2_LIMIT);
  });

  it('totals that disagree with the records are refused; a good hand-made section reads', () => {
    const sink = new ByteSink();
    allocRecord(sink);
    expect(decodeAll(handMade(sink.bytes.slice(0, sink.length), { records: 1, frees: 0 }), 0)).toBe(1);
    expect(
      thrown(() => decodeAll(handMade(sink.bytes.slice(0, sink.length), { records: 1, frees: 0, allocations: 2 }), 0))
        .code,
    ).toBe(ErrorCode.V2_BAD_HEAP);
  });

  it('a memory record (flag 8) holds two byte counts and nothing else: combined with alloc it is refused', () => {
    const memory = (flags: number): Uint8Array => {
      const sink = new ByteSink();
      sink.u8(flags);
      sink.uvarint(0);
      sink.uvarint(9);
      sink.uvarint(2); // time +1
      sink.uvarint(50 << 20); // external
      sink.uvarint(48 << 20); // arrayBuffers
      return sink.bytes.slice(0, sink.length);
    };
    const totals = { records: 1, allocations: 0, frees: 0 };
    const decoder = new HeapSectionDecoder(handMade(memory(HeapRecordFlag.Memory), totals), 0, START, 1, () => 0);
    const [record] = [...decoder.records()];
    expect(record).toMatchObject({
      flags: HeapRecordFlag.Memory,
      threadId: 9n,
      timeUs: START + 1,
      externalBytes: 50 << 20,
      arrayBuffersBytes: 48 << 20,
    });
    const mixed = handMade(memory(HeapRecordFlag.Memory | HeapRecordFlag.Alloc), totals);
    const err = thrown(() => decodeAll(mixed, 0));
    expect(err.code).toBe(ErrorCode.V2_BAD_HEAP);
    expect(err.offset).toBe(mixed.length - memory(0).length);
  });

  it('a heap section offset outside the file: ERR_V2_BAD_HEADER at the footer field, through openHeapTrace', () => {
    const out = writeHeapFile(busyPlan, 'zstd');
    const bytes = readFileSync(out);
    const at = bytes.length - FOOTER_SIZE + HEAP_OFFSET_IN_FOOTER;
    bytes.writeBigUInt64LE(BigInt(bytes.length), at);
    const bad = file();
    writeFileSync(bad, bytes);
    const err = thrown(() => openHeapTrace(bad));
    expect(err.code).toBe(ErrorCode.V2_BAD_HEADER);
    expect(err.offset).toBe(at);
  });

  // The native writer loads only on the native run; the JS run checks its twin is deterministic.
  const other = backend.name === 'native' ? 'js' : backend.name;
  it(`the ${backend.name} and ${other} writers write the same heap file, byte for byte`, () => {
    fc.assert(
      fc.property(plannedTrace, fc.constantFrom<'zstd' | 'none'>('zstd', 'none'), (plan, compression) => {
        const a = readFileSync(writeHeapFile(plan, compression, backend.name));
        const b = readFileSync(writeHeapFile(plan, compression, other));
        expect(Buffer.compare(a, b)).toBe(0);
      }),
      { numRuns: 15 },
    );
  });
});
