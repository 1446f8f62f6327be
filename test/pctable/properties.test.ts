import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PcTable, PcTableSet, decodeVarintTable, lookupVarint } from '../../lib/pctable/index';
import { expandRuns, writeVarintTable, type RunSpec } from './varint-writer';

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

// Values across int32: clustered small ones (line numbers, -1/-2 pcdata), the
// int8/int16/int32 width edges, and anything at all.
const value = fc.oneof(
  fc.integer({ min: -3, max: 40 }),
  fc.constantFrom(-129, -128, 127, 128, -32769, -32768, 32767, 32768, INT32_MIN, INT32_MAX, 0x4000_0008),
  fc.integer({ min: INT32_MIN, max: INT32_MAX }),
);
// Run lengths in quanta: short runs (dense chunks, up to n = 255), lengths
// around the 256-quantum chunk size, and runs spanning several chunks.
const quanta = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) },
  { weight: 2, arbitrary: fc.integer({ min: 250, max: 262 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 1500 }) },
);
/** Consecutive runs differ in value, as the compiler writes them (a zero delta would read as the terminator). */
const runList = fc
  .array(fc.record({ value, quanta }), { minLength: 1, maxLength: 120 })
  .map((runs) => runs.filter((r, i) => i === 0 || r.value !== runs[i - 1]!.value));

function checkEveryPc(runs: RunSpec[], quantum: number): void {
  const bytes = writeVarintTable(runs);
  const expected = expandRuns(runs, quantum);
  const size = expected.length;
  const table = PcTable.fromVarint(bytes, { size, quantum });
  expect(table.size).toBe(size);

  const decoded = decodeVarintTable(bytes, quantum);
  expect(decoded.map((r) => r.value)).toEqual(runs.map((r) => r.value));
  expect(decoded.map((r) => (r.endPc - r.startPc) / quantum)).toEqual(runs.map((r) => r.quanta));

  const pcs = Uint32Array.from({ length: size + 2 * quantum }, (_, i) => i);
  const OUTSIDE = 0x1234_5678;
  const viaMany = table.lookupMany(pcs, { outside: OUTSIDE });
  const reread = PcTable.fromLinear(table.bytes.slice(), { size, quantum });
  const viaReread = reread.lookupMany(pcs, { outside: OUTSIDE });
  let bad = -1;
  for (let pc = 0; pc < pcs.length && bad < 0; pc++) {
    const want = pc < size ? expected[pc]! : null;
    if (table.lookup(pc) !== want || reread.lookup(pc) !== want) bad = pc;
    if (viaMany[pc] !== (want ?? OUTSIDE) || viaReread[pc] !== (want ?? OUTSIDE)) bad = pc;
  }
  expect(bad).toBe(-1);
  // runtime.pcvalue's rule at the first and last PC of every run, and past the end.
  let start = 0;
  const set = new PcTableSet([table]);
  for (const run of runs) {
    const end = start + run.quanta * quantum;
    for (const pc of [start, end - 1]) {
      expect(lookupVarint(bytes, pc, quantum)).toEqual({ value: run.value, startPc: start, endPc: end });
      expect(set.lookupVarintMany(new Uint32Array([0]), new Uint32Array([pc]))[0]).toBe(run.value);
    }
    start = end;
  }
  expect(lookupVarint(bytes, size, quantum)).toBeNull();
}

describe('PcTable properties', () => {
  it('random run lists, quantum 1: encode, then every PC reads back its run', () => {
    fc.assert(
      fc.property(runList, (runs) => checkEveryPc(runs, 1)),
      { numRuns: 150 },
    );
  });

  it('random run lists, quantum 4: encode, then every PC reads back its run', () => {
    fc.assert(
      fc.property(runList, (runs) => checkEveryPc(runs, 4)),
      { numRuns: 100 },
    );
  });

  it('any quantum 1..255 and any run list round-trips through fromLinear', () => {
    fc.assert(
      fc.property(runList, fc.integer({ min: 1, max: 255 }), (runs, quantum) => {
        const bytes = writeVarintTable(runs);
        const table = PcTable.fromVarint(bytes, { quantum });
        const again = PcTable.fromLinear(table.bytes, { size: table.size, quantum });
        const expected = expandRuns(runs, quantum);
        for (let k = 0; k < 64; k++) {
          const pc = Math.floor((k / 64) * expected.length);
          expect(again.lookup(pc)).toBe(expected[pc]);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('PcTable encoding choices (seed 000), on hand-made tables', () => {
  it('a first byte of 0x00 is the value -1 at entry, not the terminator', () => {
    const bytes = Uint8Array.from([0x00, 0x05, 0x01, 0x03, 0x00]); // zigzag 0x01 = delta -1
    expect(decodeVarintTable(bytes)).toEqual([
      { value: -1, startPc: 0, endPc: 5 },
      { value: -2, startPc: 5, endPc: 8 },
    ]);
    expect(PcTable.fromVarint(bytes).lookup(6)).toBe(-2);
  });

  it('ignores bytes after the terminator', () => {
    const bytes = Uint8Array.from([0x02, 0x05, 0x00, 0xff, 0xff]);
    expect(decodeVarintTable(bytes)).toEqual([{ value: 0, startPc: 0, endPc: 5 }]);
    expect(PcTable.fromVarint(bytes).varint).toEqual(Uint8Array.from([0x02, 0x05, 0x00]));
  });

  it('shares constant chunks by value, the short last chunk included (quantum 4)', () => {
    // Chunks of 256 quanta: A | B | A (100 quanta). Chunk 0 = [n 0, vlen 0b01, 5]; chunk 1 = [0, 0b01, 7] at
    // offset 3; chunk 2 reuses offset 0. u8 index [3, 0].
    const runs = [
      { value: 5, quanta: 256 },
      { value: 7, quanta: 256 },
      { value: 5, quanta: 100 },
    ];
    const table = PcTable.fromVarint(writeVarintTable(runs), { quantum: 4 });
    expect(table.size).toBe(612 * 4);
    expect([...table.bytes]).toEqual([3, 0, 0, 1, 5, 0, 1, 7]);
    expect(table.lookup(612 * 4 - 1)).toBe(5);
    expect(table.lookup(300 * 4)).toBe(7);
  });

  it('falls back to the u16 index when the first u8 offset would read as 0xfe', () => {
    // Chunk 0: bias 1000 (int16) then 111 changes at positions 1..111 alternating
    // 1000+1 / 1000 (int8 deltas 1, 0), the last being 1000-32768 (int16): 1 + 111 + 28 + (2 + 110 + 2) = 254 bytes.
    const runs: RunSpec[] = [{ value: 1000, quanta: 1 }];
    for (let i = 1; i <= 110; i++) runs.push({ value: i % 2 ? 1001 : 1000, quanta: 1 });
    runs.push({ value: 1000 - 32768, quanta: 256 - 111 });
    runs.push({ value: 9, quanta: 10 }); // chunk 1: a constant chunk
    const table = PcTable.fromVarint(writeVarintTable(runs));
    expect(table.chunkCount).toBe(2);
    expect(table.indexWidth).toBe(2);
    expect([...table.bytes.subarray(0, 3)]).toEqual([0xfe, 0xfe, 0x00]);
    expect(table.bytes.length).toBe(3 + 254 + 3);
    expect(table.bytes[3]).toBe(111);
    expect(table.lookup(0)).toBe(1000);
    expect(table.lookup(111)).toBe(1000 - 32768);
    expect(table.lookup(256)).toBe(9);
  });

  it('uses the u8 index when the first offset is 0xfd', () => {
    // As above with the last change an int8: 253 bytes.
    const runs: RunSpec[] = [{ value: 1000, quanta: 1 }];
    for (let i = 1; i <= 110; i++) runs.push({ value: i % 2 ? 1001 : 1000, quanta: 1 });
    runs.push({ value: 1002, quanta: 256 - 111 });
    runs.push({ value: 9, quanta: 10 });
    const table = PcTable.fromVarint(writeVarintTable(runs));
    expect(table.indexWidth).toBe(1);
    expect(table.bytes[0]).toBe(0xfd);
  });

  it('writes n = 255 for a chunk that changes at every PC', () => {
    const runs: RunSpec[] = Array.from({ length: 256 }, (_, i) => ({ value: i % 2 ? -70000 : 70000, quanta: 1 }));
    const table = PcTable.fromVarint(writeVarintTable(runs));
    expect(table.chunkCount).toBe(1);
    expect(table.bytes[0]).toBe(255);
    // vlen: 64 bytes; values: bias 70000 (int32) then deltas -140000 (int32) and 0 (int8).
    expect(table.bytes.length).toBe(1 + 255 + 64 + 4 + 128 * 4 + 127);
    for (let pc = 0; pc < 256; pc++) expect(table.lookup(pc)).toBe(pc % 2 ? -70000 : 70000);
  });

  it('encodes a 7-byte table of 2^32 - 1 PCs (2^24 constant chunks sharing one) without a chunk-by-chunk cost', () => {
    const table = PcTable.fromVarint(Uint8Array.from([0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]));
    expect(table.size).toBe(0xffff_ffff);
    expect(table.chunkCount).toBe(2 ** 24);
    expect(table.indexWidth).toBe(1);
    // A u8 index of 2^24 - 1 zero offsets, then the one chunk: n = 0, vlen 0b01, value 0.
    expect(table.bytes.length).toBe(2 ** 24 - 1 + 3);
    expect(table.bytes.subarray(0, 2 ** 24 - 1).every((b) => b === 0)).toBe(true);
    expect([...table.bytes.subarray(2 ** 24 - 1)]).toEqual([0, 1, 0]);
    expect([table.lookup(0), table.lookup(0xffff_fffe), table.lookup(0xffff_ffff)]).toEqual([0, 0, null]);
  });

  it('uses the u32 index past 0xffff bytes of chunks, with wrapping int32 deltas', () => {
    const runs: RunSpec[] = [];
    for (let i = 0; i < 300 * 256; i++) runs.push({ value: i % 2 ? INT32_MAX : INT32_MIN, quanta: 1 });
    const table = PcTable.fromVarint(writeVarintTable(runs));
    expect(table.indexWidth).toBe(4);
    expect(table.bytes[0]).toBe(0xff);
    const pcs = Uint32Array.from({ length: table.size }, (_, i) => i);
    const got = table.lookupMany(pcs);
    expect(got.every((v, pc) => v === (pc % 2 ? INT32_MAX : INT32_MIN))).toBe(true);
  });
});
