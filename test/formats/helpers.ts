/**
 * Shared pieces of the format adapter tests: read through an adapter, sum a
 * value column (per function, per thread), write into memory while counting
 * the chunks, and expect a coded error.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { isProfpackError } from '../../lib/errors';
import type { FormatAdapter, WriteOptions } from '../../lib/formats/adapter';
import { anonymousName, threadKey, type ProfileSource } from '../../lib/profile/index';

export function read(adapter: FormatAdapter, bytes: Uint8Array | string, options = {}): ProfileSource {
  return adapter.read({ bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes }, options);
}

export interface Written {
  text: string;
  chunks: number;
  largestChunk: number;
  warnings: string[];
}

export function write(adapter: FormatAdapter, source: ProfileSource, options: WriteOptions = {}): Written {
  const parts: string[] = [];
  let largestChunk = 0;
  const warnings: string[] = [];
  adapter.write!(
    source,
    {
      path: '/dev/null',
      write(chunk) {
        const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        largestChunk = Math.max(largestChunk, s.length);
        parts.push(s);
      },
    },
    { onWarning: (m) => warnings.push(m), ...options },
  );
  return { text: parts.join(''), chunks: parts.length, largestChunk, warnings };
}

export interface Totals {
  records: number;
  total: number;
  /** Self value per function name (the leaf's). */
  self: Map<string, number>;
  /** Value per thread key. */
  perThread: Map<string, number>;
}

/** Sums one value column of a source (read once). */
export function totals(source: ProfileSource, column = source.meta.defaultSampleType): Totals {
  const out: Totals = { records: 0, total: 0, self: new Map(), perThread: new Map() };
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const v = b.values[column]![i]!;
      out.records++;
      out.total += v;
      const stack = b.stack[i]!;
      const leaf = stack === 0 ? '(empty)' : anonymousName(source.frames[source.stacks.frame(stack)]!.funcname);
      out.self.set(leaf, (out.self.get(leaf) ?? 0) + v);
      const t = source.threads[b.thread[i]!]!;
      const key = threadKey(t.threadId, t.interpreterId);
      out.perThread.set(key, (out.perThread.get(key) ?? 0) + v);
    }
  }
  return out;
}

/** Frames of every record, outermost first, as names. */
export function stacksOf(source: ProfileSource): string[][] {
  const out: string[][] = [];
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++)
      out.push(
        source.stacks
          .toArray(b.stack[i]!)
          .reverse()
          .map((f) => anonymousName(source.frames[f]!.funcname)),
      );
  }
  return out;
}

export function expectCoded(run: () => unknown, code: string, message?: RegExp): Error {
  let thrown: unknown;
  try {
    run();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'expected a ProfpackError').toBeDefined();
  expect(isProfpackError(thrown), String((thrown as Error)?.stack ?? thrown)).toBe(true);
  const err = thrown as Error & { code: string };
  expect(err.code).toBe(code);
  if (message !== undefined) expect(err.message).toMatch(message);
  return err;
}

/**
 * Any value of a JSON document replaced by one of the wrong type: the adapter
 * reads it (and every record) or throws a ProfpackError, never a raw
 * TypeError/RangeError.
 */
export function fuzzJson(adapter: FormatAdapter, doc: unknown, numRuns = 300): void {
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, p: (string | number)[]) => {
    if (paths.length > 3000) return;
    paths.push(p);
    if (Array.isArray(v)) v.slice(0, 4).forEach((x, i) => walk(x, [...p, i]));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  };
  walk(doc, []);
  const wrong = fc.constantFrom<unknown>(null, -1, 0.5, 1e300, 'x', '', [], [null], {}, true, [-1], { id: 1 }, [
    [null],
  ]);
  fc.assert(
    fc.property(fc.nat({ max: paths.length - 1 }), wrong, (i, v) => {
      const p = paths[i]!;
      let text: string;
      if (p.length === 0) text = JSON.stringify(v);
      else {
        const copy = structuredClone(doc) as Record<string | number, unknown>;
        let cur = copy;
        for (let k = 0; k < p.length - 1; k++) cur = cur[p[k]!] as Record<string | number, unknown>;
        cur[p[p.length - 1]!] = v;
        text = JSON.stringify(copy);
      }
      try {
        const src = read(adapter, text);
        for (let c = 0; c < src.meta.sampleTypes.length; c++) totals(src, c);
      } catch (err) {
        expect((err as { name?: string }).name, String((err as Error).stack)).toBe('ProfpackError');
      }
    }),
    { numRuns },
  );
}
