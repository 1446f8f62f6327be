/**
 * formatValue, the one formatter of the CLI and the pages: the printed number, read back with its unit's scale,
 * is the value within the rounding of the digits printed (the oracle is the value itself, not an earlier output),
 * and the flame page's injected copy is the very function.
 */
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatValue } from '../../lib/profile/index';
import { formatScript } from '../../lib/view/html';

const SCALE: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4, PB: 1024 ** 5 };
Object.assign(SCALE, { ns: 1, µs: 1e3, ms: 1e6, s: 1e9, '': 1 });
const NANOS: Record<string, number> = { nanoseconds: 1, ns: 1, microseconds: 1e3, us: 1e3, milliseconds: 1e6 };
Object.assign(NANOS, { ms: 1e6, seconds: 1e9, s: 1e9, count: 1, bytes: 1, objects: 1 });

/** The printed text as a number in the value's own unit (ns for times), and the half-step of its last digit. */
function readBack(text: string, unit: string): { value: number; halfStep: number } {
  const m = /^(-?\d+(?:\.(\d+))?(?:e[+-]\d+)?)([a-zµ]*|[A-Z]+)$/i.exec(text);
  expect(m, text).not.toBeNull();
  const suffix = m![3]!;
  const scale = SCALE[suffix];
  expect(scale, `${text}: suffix`).toBeDefined();
  const decimals = m![2]?.length ?? 0;
  // Times print in ns scales; read back in the value's own unit.
  const per = unit === 'bytes' ? 1 : NANOS[unit]!;
  return { value: (Number(m![1]) * scale!) / per, halfStep: (0.5 * 10 ** -decimals * scale!) / per };
}

describe('formatValue', () => {
  it("keeps an integer part's trailing zero (230.15 ms, 529.6, 310.2 KB)", () => {
    expect(formatValue(230.15e6, 'nanoseconds')).toBe('230ms');
    expect(formatValue(529.6, 'count')).toBe('530');
    expect(formatValue(310.2 * 1024, 'bytes')).toBe('310KB');
    expect(formatValue(-310.2 * 1024, 'bytes')).toBe('-310KB');
    expect(formatValue(100.4, 'milliseconds')).toBe('100ms');
    expect(formatValue(2.5, 'seconds')).toBe('2.5s');
    expect(formatValue(20.04, 'count')).toBe('20');
    expect(formatValue(1500, 'nanoseconds')).toBe('1.5µs');
  });

  it('prints a number that parses back within rounding, for any value, unit and magnitude', () => {
    const unit = fc.constantFrom('count', 'bytes', 'nanoseconds', 'ns', 'microseconds', 'milliseconds', 'seconds');
    const magnitude = fc.integer({ min: -9, max: 15 });
    const mantissa = fc.double({ min: 1, max: 10, noNaN: true, maxExcluded: true });
    const sign = fc.constantFrom(1, -1);
    const integral = fc.boolean();
    fc.assert(
      fc.property(unit, magnitude, mantissa, sign, integral, (u, e, m, s, whole) => {
        const v = whole ? s * Math.round(m * 10 ** e) : s * m * 10 ** e;
        const text = formatValue(v, u);
        const { value, halfStep } = readBack(text, u);
        // toFixed rounds the binary value; allow its last-bit error beside the printed half-step.
        expect(Math.abs(value - v), `${v} ${u} -> ${text}`).toBeLessThanOrEqual(
          halfStep * (1 + 1e-9) + Math.abs(v) * 1e-12,
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('is the formatter the flame page runs (injected as source, not a copy)', () => {
    const window: { profpackFormat?: (v: number, unit: string) => string } = {};
    // A fresh context: the script names nothing of this module's scope.
    runInNewContext(formatScript(), { window });
    fc.assert(
      fc.property(
        fc.double({ min: -1e15, max: 1e15, noNaN: true }),
        fc.constantFrom('count', 'bytes', 'nanoseconds', 'microseconds', 'seconds'),
        (v, u) => {
          expect(window.profpackFormat!(v, u)).toBe(formatValue(v, u));
        },
      ),
      { numRuns: 500 },
    );
  });
});
