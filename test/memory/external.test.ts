// External memory over time (lib/memory/external.ts): each thread's line from its samples, its least-squares
// growth against the series' own slope, and when `leaks` calls it a suspect.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXTERNAL_SUSPECT_MIN_BYTES, externalMemoryTrends, HeapTraceCollector } from '../../lib/memory/index';

const START = 1_000_000;

function traceOf(samples: { threadId: number; ms: number; external: number }[]): HeapTraceCollector {
  const trace = new HeapTraceCollector();
  trace.begin({ intervalBytes: 4096 });
  for (const s of samples)
    trace.memory({
      threadId: s.threadId,
      timeUs: START + s.ms * 1000,
      externalBytes: s.external,
      arrayBuffersBytes: Math.floor(s.external / 2),
    });
  return trace;
}

describe('external memory trends', () => {
  it('a line climbing at a steady pace: its slope exactly, R² 1, a suspect', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 40 }),
        fc.integer({ min: 100, max: 5000 }),
        fc.integer({ min: 1 << 20, max: 64 << 20 }),
        (n, stepMs, perStep) => {
          const samples = Array.from({ length: n }, (_, i) => ({
            threadId: 0,
            ms: i * stepMs,
            external: 4096 + i * perStep,
          }));
          const [t] = externalMemoryTrends(traceOf(samples));
          const slopePerMin = (perStep / stepMs) * 60_000;
          expect(t!.growthBytesPerMin / slopePerMin).toBeCloseTo(1, 6);
          expect(t!.fit).toBeCloseTo(1, 6);
          expect(t!.suspect).toBe(true);
          expect(t!.endBytes).toBe(samples[n - 1]!.external);
          expect(t!.arrayBuffersEndBytes).toBe(Math.floor(samples[n - 1]!.external / 2));
          expect(t!.samples).toBe(n);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('a line that comes and goes, or grows by less than 1 MiB, is no suspect; threads stay apart', () => {
    const samples = [];
    for (let i = 0; i < 20; i++) {
      samples.push({ threadId: 0, ms: i * 500, external: (i % 2) * (30 << 20) });
      samples.push({ threadId: 3, ms: i * 500 + 1, external: 1000 + i * ((EXTERNAL_SUSPECT_MIN_BYTES - 1) / 20) });
    }
    const trends = externalMemoryTrends(traceOf(samples));
    expect(trends.map((t) => [t.threadId, t.suspect])).toEqual([
      ['0', false],
      ['3', false],
    ]);
    expect(trends[0]!.peakBytes).toBe(30 << 20);
    expect(trends[1]!.fit).toBeCloseTo(1, 6);
  });

  it('a trace without external samples has no line', () => {
    expect(externalMemoryTrends(traceOf([]))).toEqual([]);
  });
});
