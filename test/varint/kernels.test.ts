/**
 * The batch u32 varint kernels per SIMD level: BMI2's pext belongs to the avx2
 * level (where pext is fast), the portable kernel to every other, and each
 * decodes what a hand-written LEB128 encoder wrote, and fails with the JS
 * twin's code and offset. The level is switched with the setKernelLevel test
 * hook, so one process runs both kernels.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import * as js from '../../lib/varint/js';
import { VarintKind } from '../../lib/varint/kinds';
import { requireAddon } from '../support/addon';

const addon = requireAddon();
const levels: string[] = addon.svb.kernelLevels();
const initial: string = addon.svb.kernelLevel();
afterAll(() => addon.svb.setKernelLevel(initial));

// 7 bits at a time, low group first: the values are the truth, not profpack's encoder.
function leb(x: number): number[] {
  const out: number[] = [];
  for (; x >= 0x80; x = Math.floor(x / 0x80)) out.push((x % 0x80) | 0x80);
  out.push(x);
  return out;
}

// Runs of one-byte values (the 64-at-a-time path), of 5-byte values (the twelve-at-a-time path) and mixed lengths.
const runs = fc.array(
  fc.oneof(
    fc.array(fc.integer({ min: 0, max: 127 }), { minLength: 60, maxLength: 130 }),
    fc.array(fc.integer({ min: 0x1000_0000, max: 0xffff_ffff }), { minLength: 12, maxLength: 40 }),
    fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { maxLength: 20 }),
  ),
  { maxLength: 6 },
);

function attempt(f: () => number): { end?: number; code?: string; offset?: number } {
  try {
    return { end: f() };
  } catch (err) {
    return { code: (err as { code: string }).code, offset: (err as { offset: number }).offset };
  }
}

describe('batch varint kernels per SIMD level', () => {
  it('the level picks the kernel: bmi2 at avx2 where pext is fast, portable otherwise', () => {
    const kernels = new Set<string>();
    for (const level of levels) {
      addon.svb.setKernelLevel(level);
      const kernel = addon.varint.batchKernel();
      expect(kernel).toBe(level === 'avx2' && addon.features.fastPext ? 'bmi2' : 'portable');
      kernels.add(kernel);
    }
    // This suite covers both kernels wherever the CPU has fast pext.
    if (addon.features.fastPext && levels.includes('avx2')) expect([...kernels].sort()).toEqual(['bmi2', 'portable']);
  });

  for (const level of levels) {
    it(`at ${level}: u32 and zigzag32 batches decode hand-encoded values from any offset`, () => {
      addon.svb.setKernelLevel(level);
      fc.assert(
        fc.property(runs, fc.nat(), fc.nat(7), (parts, cut, pad) => {
          const values = parts.flat();
          const bytes = Uint8Array.from([...Array<number>(pad).fill(0x80 | 5), ...values.flatMap(leb)]);
          const count = values.length === 0 ? 0 : cut % (values.length + 1);
          const u32 = new Uint32Array(count);
          const end = addon.varint.decodeMany(VarintKind.U32, bytes, pad, count, u32);
          expect([...u32]).toEqual(values.slice(0, count));
          expect(end).toBe(pad + values.slice(0, count).flatMap(leb).length);
          const zig = new Int32Array(count);
          expect(addon.varint.decodeMany(VarintKind.Zigzag32, bytes, pad, count, zig)).toBe(end);
          expect([...zig]).toEqual(values.slice(0, count).map((u) => (u >>> 1) ^ -(u & 1)));
        }),
        { numRuns: 300 },
      );
    });

    it(`at ${level}: bad bytes fail with the JS twin's code and offset`, () => {
      addon.svb.setKernelLevel(level);
      // Long 5-byte runs with one byte corrupted: the windowed paths meet the error, not just the careful loop.
      const corrupted = fc
        .tuple(
          fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { minLength: 20, maxLength: 60 }),
          fc.nat(),
          fc.nat(255),
        )
        .map(([values, at, byte]) => {
          const bytes = Uint8Array.from(values.flatMap(leb));
          bytes[at % bytes.length] = byte;
          return { bytes: bytes.subarray(0, bytes.length - (at % 3)), count: values.length };
        });
      fc.assert(
        fc.property(corrupted, fc.constantFrom(VarintKind.U32, VarintKind.Zigzag32), ({ bytes, count }, kind) => {
          const make = (): Uint32Array | Int32Array =>
            kind === VarintKind.U32 ? new Uint32Array(count) : new Int32Array(count);
          const outN = make();
          const outJ = make();
          const n = attempt(() => addon.varint.decodeMany(kind, bytes, 0, count, outN));
          const j = attempt(() => js.decodeMany(kind, bytes, 0, count, outJ));
          expect(n).toEqual(j);
          if (n.end !== undefined) expect(outN).toEqual(outJ);
        }),
        { numRuns: 500 },
      );
    });
  }
});
