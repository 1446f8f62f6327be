import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../lib/errors';
import { PcTable, PcTableSet, decodeVarintTable, lookupVarint } from '../../lib/pctable/index';
import * as js from '../../lib/pctable/js';
import type { PcTableNative } from '../../lib/pctable/native';
import { requireAddon } from '../support/addon';
import { writeVarintTable } from './varint-writer';

function caught(fn: () => unknown): ProfpackError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProfpackError);
    return err as ProfpackError;
  }
  throw new Error('expected a ProfpackError, got none');
}

function expectError(fn: () => unknown, code: string, offset: number | undefined): void {
  const err = caught(fn);
  expect({ code: err.code, offset: err.offset }).toEqual({ code, offset });
}

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

describe('varint tables that are not well formed', () => {
  const cases: [string, Uint8Array, number, string, number][] = [
    ['empty input', bytes(), 1, ErrorCode.PCTABLE_TRUNCATED, 0],
    ['a lone 0x00 (delta 0, no run length)', bytes(0x00), 1, ErrorCode.PCTABLE_TRUNCATED, 1],
    ['no run length', bytes(0x02), 1, ErrorCode.PCTABLE_TRUNCATED, 1],
    ['no terminator', bytes(0x02, 0x01), 1, ErrorCode.PCTABLE_TRUNCATED, 2],
    ['a value delta cut short', bytes(0x80), 1, ErrorCode.PCTABLE_TRUNCATED, 0],
    ['a run length cut short', bytes(0x02, 0x05, 0x04, 0x81, 0x80), 1, ErrorCode.PCTABLE_TRUNCATED, 3],
    ['a 6-byte varint', bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x01, 0x00), 1, ErrorCode.PCTABLE_VARINT_OVERFLOW, 0],
    ['a 5th byte above 0x0f', bytes(0x02, 0xff, 0xff, 0xff, 0xff, 0x10, 0x00), 1, ErrorCode.PCTABLE_VARINT_OVERFLOW, 1],
    ['an empty run', bytes(0x02, 0x00, 0x00), 1, ErrorCode.PCTABLE_EMPTY_RUN, 1],
    [
      'PCs past 2^32 - 1',
      bytes(0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x02, 0x01, 0x00),
      1,
      ErrorCode.PCTABLE_PC_OVERFLOW,
      7,
    ],
    [
      'PCs past 2^32 - 1 with quantum 4',
      bytes(0x02, 0x80, 0x80, 0x80, 0x80, 0x04, 0x00),
      4,
      ErrorCode.PCTABLE_PC_OVERFLOW,
      1,
    ],
  ];
  it.each(cases)('%s', (_name, input, quantum, code, offset) => {
    expectError(() => decodeVarintTable(input, quantum), code, offset);
    expectError(() => PcTable.fromVarint(input, { quantum }), code, offset);
    expectError(() => js.decodeVarint(input, quantum), code, offset);
  });

  it('takes 2^32 - 1 bytes of PCs', () => {
    const runs = decodeVarintTable(bytes(0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00));
    expect(runs).toEqual([{ value: 0, startPc: 0, endPc: 0xffff_ffff }]);
  });

  it('refuses a size the runs disagree with, at the terminator', () => {
    expectError(
      () => PcTable.fromVarint(bytes(0x02, 0x05, 0x04, 0x03, 0x00), { size: 9 }),
      ErrorCode.PCTABLE_SIZE_MISMATCH,
      4,
    );
    expectError(
      () => PcTable.fromVarint(bytes(0x02, 0x05, 0x00), { size: 4, quantum: 4 }),
      ErrorCode.PCTABLE_SIZE_MISMATCH,
      2,
    );
    expect(PcTable.fromVarint(bytes(0x02, 0x05, 0x00), { size: 20, quantum: 4 }).size).toBe(20);
  });

  it('lookupVarint stops at the run it needs, as runtime.pcvalue does, and reports damage it reaches', () => {
    const damaged = bytes(0x02, 0x05, 0x04); // a second record without its run length
    expect(lookupVarint(damaged, 4)).toEqual({ value: 0, startPc: 0, endPc: 5 });
    expectError(() => lookupVarint(damaged, 5), ErrorCode.PCTABLE_TRUNCATED, 3);
    expect(lookupVarint(bytes(0x02, 0x05, 0x00), -1)).toBeNull();
  });

  it('refuses bad arguments', () => {
    expectError(() => decodeVarintTable(bytes(0x02, 0x01, 0x00), 0), ErrorCode.INVALID_ARGUMENT, undefined);
    expectError(() => decodeVarintTable(bytes(0x02, 0x01, 0x00), 256), ErrorCode.INVALID_ARGUMENT, undefined);
    expectError(() => decodeVarintTable([2, 1, 0] as unknown as Uint8Array), ErrorCode.INVALID_ARGUMENT, undefined);
    expectError(
      () => PcTable.fromVarint(bytes(0x02, 0x01, 0x00), { size: 6, quantum: 4 }),
      ErrorCode.INVALID_ARGUMENT,
      undefined,
    );
    const table = PcTable.fromVarint(bytes(0x02, 0x05, 0x00));
    expectError(() => table.lookup(1.5), ErrorCode.INVALID_ARGUMENT, undefined);
    expect(table.lookup(-1)).toBeNull();
    expect(table.lookup(2 ** 40)).toBeNull();
    expectError(
      () => table.lookupMany(new Uint32Array(4), { out: new Int32Array(3) }),
      ErrorCode.INVALID_ARGUMENT,
      undefined,
    );
  });

  it('PcTableSet refuses a table index past the set, an outside PC, and varint lookups without varint tables', () => {
    const a = PcTable.fromVarint(bytes(0x02, 0x05, 0x00));
    const b = PcTable.fromLinear(a.bytes, { size: 5 });
    const set = new PcTableSet([a, a]);
    expect([...set.lookupMany(Uint32Array.from([1, 0]), Uint32Array.from([4, 9]), { outside: -5 })]).toEqual([0, -5]);
    const badIndex = caught(() => set.lookupMany(Uint32Array.from([0, 2]), Uint32Array.from([0, 0])));
    expect([badIndex.code, badIndex.details]).toEqual([ErrorCode.INVALID_ARGUMENT, { index: 1 }]);
    const outside = caught(() => set.lookupVarintMany(Uint32Array.from([1, 1]), Uint32Array.from([0, 5])));
    expect([outside.code, outside.details]).toEqual([ErrorCode.PCTABLE_PC_OUT_OF_RANGE, { index: 1, pc: 5 }]);
    expectError(
      () => new PcTableSet([a, b]).lookupVarintMany(new Uint32Array(1), new Uint32Array(1)),
      ErrorCode.INVALID_ARGUMENT,
      undefined,
    );
    expectError(() => set.lookupMany(new Uint32Array(2), new Uint32Array(1)), ErrorCode.INVALID_ARGUMENT, undefined);
  });
});

describe('linear encodings that are not well formed', () => {
  // A valid two-chunk table (size 512, quantum 1): index [3], chunk 0 = [0, 0b01, 5], chunk 1 = [0, 0b01, 7].
  const valid = bytes(3, 0, 1, 5, 0, 1, 7);
  it('reads the valid one', () => {
    const table = PcTable.fromLinear(valid, { size: 512 });
    expect([table.lookup(255), table.lookup(256), table.lookup(512)]).toEqual([5, 7, null]);
  });

  const cases: [string, Uint8Array, number, string, number][] = [
    ['empty, one chunk', bytes(), 256, ErrorCode.PCTABLE_TRUNCATED, 0],
    ['empty, two chunks', bytes(), 512, ErrorCode.PCTABLE_TRUNCATED, 0],
    ['an index and no chunk', bytes(0), 512, ErrorCode.PCTABLE_TRUNCATED, 1],
    ['a u8 offset past the end', bytes(6, 0, 1, 5, 0, 1, 7), 512, ErrorCode.PCTABLE_BAD_OFFSET, 0],
    ['a u16 index cut short', bytes(0xfe, 3), 768, ErrorCode.PCTABLE_TRUNCATED, 2],
    ['a u16 offset past the end', bytes(0xfe, 3, 0, 0x40, 0, 0, 1, 5, 0, 1, 7), 768, ErrorCode.PCTABLE_BAD_OFFSET, 3],
    ['a u32 offset past the end', bytes(0xff, 0, 0, 0, 1, 0, 1, 5), 512, ErrorCode.PCTABLE_BAD_OFFSET, 1],
    ['a length code 0b00 for the bias', bytes(0, 0x00, 5), 256, ErrorCode.PCTABLE_BAD_LENGTH_CODE, 1],
    ['a length code 0b00 for a change', bytes(1, 9, 0b0001, 5, 1), 256, ErrorCode.PCTABLE_BAD_LENGTH_CODE, 2],
    ['pcs not ascending', bytes(2, 5, 3, 0b010101, 0, 1, 2), 256, ErrorCode.PCTABLE_BAD_PCS, 2],
    ['a change at position 0', bytes(1, 0, 0b0101, 0, 1), 256, ErrorCode.PCTABLE_BAD_PCS, 1],
    ['pcs past the end', bytes(9, 1, 2), 256, ErrorCode.PCTABLE_TRUNCATED, 0],
    [
      'values past the end (the reference would read 3 bytes beyond)',
      bytes(0, 0b11, 1, 2),
      256,
      ErrorCode.PCTABLE_TRUNCATED,
      2,
    ],
    [
      'a 2^32 - 1 byte table (2^24 chunks) without its index',
      bytes(0, 1, 5),
      0xffff_ffff,
      ErrorCode.PCTABLE_TRUNCATED,
      3,
    ],
  ];
  it.each(cases)('%s', (_name, input, size, code, offset) => {
    expectError(() => PcTable.fromLinear(input, { size }), code, offset);
    expectError(() => js.openLinear(input, size, 1), code, offset);
  });

  it('refuses a size that is not a positive multiple of the quantum', () => {
    expectError(() => PcTable.fromLinear(valid, { size: 0 }), ErrorCode.INVALID_ARGUMENT, undefined);
    expectError(() => PcTable.fromLinear(valid, { size: 510, quantum: 4 }), ErrorCode.INVALID_ARGUMENT, undefined);
    expectError(() => PcTable.fromLinear(valid, {}), ErrorCode.INVALID_ARGUMENT, undefined);
  });
});

/** Outcome of a call: its result, or the error's code and offset (never another kind of error). */
function outcome<T>(fn: () => T): { ok: T } | { code: string; offset: number | undefined } {
  try {
    return { ok: fn() };
  } catch (err) {
    if (!(err instanceof ProfpackError)) throw err;
    return { code: err.code, offset: err.offset };
  }
}

// The addon is loaded directly (test/support/addon.ts), so these compare the two twins
// in both runs, and the public API (whichever backend the run uses) with them.
describe('malformed input, fuzzed: a ProfpackError or a result, the same from both twins', () => {
  const native = requireAddon().pctable as PcTableNative;
  const quantum = fc.constantFrom(1, 2, 4);

  it('random bytes as varint tables', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), quantum, (input, q) => {
        const viaJs = outcome(() => [...js.fromVarint(input, q, 0).linear]);
        const viaNative = outcome(() => [...native.fromVarint(input, q, 0).linear]);
        const viaApi = outcome(() => [...PcTable.fromVarint(input, { quantum: q }).bytes]);
        expect(viaNative).toEqual(viaJs);
        expect(viaApi).toEqual(viaJs);
        const decoded = outcome(() => decodeVarintTable(input, q).length);
        const decodedNative = outcome(() => native.decodeVarint(input, q).values.length);
        expect(decodedNative).toEqual(decoded);
        if ('ok' in viaJs) expect('ok' in decoded).toBe(true);
        else expect(decoded).toEqual(viaJs);
      }),
      { numRuns: 1500 },
    );
  });

  it('damaged real encodings (bytes flipped, cut, extended) as linear tables', () => {
    const runsArb = fc.array(
      fc.record({ value: fc.integer({ min: -70000, max: 70000 }), quanta: fc.integer({ min: 1, max: 300 }) }),
      {
        minLength: 1,
        maxLength: 30,
      },
    );
    const edit = fc.record({
      at: fc.nat(),
      byte: fc.integer({ min: 0, max: 255 }),
      cut: fc.nat({ max: 8 }),
      kind: fc.constantFrom('flip', 'cut', 'both'),
    });
    fc.assert(
      fc.property(runsArb, quantum, fc.array(edit, { minLength: 1, maxLength: 3 }), (rawRuns, q, edits) => {
        const runs = rawRuns.filter((r, i) => i === 0 || r.value !== rawRuns[i - 1]!.value);
        const good = PcTable.fromVarint(writeVarintTable(runs), { quantum: q });
        let damaged = good.bytes.slice();
        for (const e of edits) {
          if (e.kind !== 'cut' && damaged.length > 0) damaged[e.at % damaged.length] = e.byte;
          if (e.kind !== 'flip') damaged = damaged.subarray(0, Math.max(0, damaged.length - e.cut));
        }
        const pcs = Uint32Array.from({ length: 97 }, (_, k) => Math.floor((k / 96) * (good.size - 1)));
        const viaJs = outcome(() => {
          const view = js.fromLinear(damaged, good.size, q);
          const out = new Int32Array(pcs.length);
          js.lookupMany(view, pcs, out, false, 0);
          return [...out];
        });
        const viaNative = outcome(() => {
          const handle = native.fromLinear(damaged, good.size, q);
          const out = new Int32Array(pcs.length);
          native.lookupMany(handle, pcs, out, false, 0);
          return [...out];
        });
        const viaApi = outcome(() => [...PcTable.fromLinear(damaged, { size: good.size, quantum: q }).lookupMany(pcs)]);
        expect(viaNative).toEqual(viaJs);
        expect(viaApi).toEqual(viaJs);
        if ('ok' in viaJs)
          expect(viaJs.ok.every((v) => Number.isInteger(v) && v >= -0x8000_0000 && v <= 0x7fff_ffff)).toBe(true);
      }),
      { numRuns: 800 },
    );
  });

  it('random bytes as linear tables of random size', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 48 }), fc.integer({ min: 1, max: 2000 }), quantum, (input, quanta, q) => {
        const size = quanta * q;
        const pcs = Uint32Array.from([0, size - 1, size]);
        const viaJs = outcome(() => {
          const out = new Int32Array(3);
          js.lookupMany(js.fromLinear(input, size, q), pcs, out, true, -7);
          return [...out];
        });
        const viaNative = outcome(() => {
          const out = new Int32Array(3);
          native.lookupMany(native.fromLinear(input, size, q), pcs, out, true, -7);
          return [...out];
        });
        const viaApi = outcome(() => {
          const table = PcTable.fromLinear(input, { size, quantum: q });
          return [table.lookup(0), table.lookup(size - 1), table.lookup(size) ?? -7];
        });
        expect(viaNative).toEqual(viaJs);
        expect(viaApi).toEqual(viaJs);
      }),
      { numRuns: 1500 },
    );
  });
});
