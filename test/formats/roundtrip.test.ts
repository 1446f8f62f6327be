// test tier: slow (every shared vector through every format and CPython's reader, ~12 s)
/**
 * Every shared Tachyon vector CPython accepts (its samples from CPython's own
 * expected.json, no profpack reader involved) written through every format's
 * adapter into a file and read back through the registry: each format keeps
 * what it has a place for — per record (stack, thread, time, status, values)
 * where the format is per sample, per function and thread in the sample
 * type's unit where it aggregates.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProfile, writeProfile, type FormatName, type WriteOptions } from '../../lib/formats/index';
import { aggregate } from '../../lib/query/aggregate';
import type { Frame, ProfileSource } from '../../lib/profile/index';
import { acceptedVectors, readExpected } from '../support/vectors';
import { builderFromExpected, projectSource } from '../support/model';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-roundtrip-');

const positive = (v: number | null) => (v !== null && v >= 1 ? v : null);
/** What every format keeps of a frame: name, file, line (pprof and V8 have no line 0 or negative lines). */
const frame = (f: Frame) => JSON.stringify([f.funcname, f.filename, positive(f.lineno)]);

let n = 0;
function through(
  source: ProfileSource,
  format: FormatName,
  options: WriteOptions = {},
): ReturnType<typeof openProfile> {
  const file = path.join(dir, `${n++}.${format}`);
  writeProfile(source, file, format, { onWarning: () => undefined, ...options });
  return openProfile(file, { format });
}

/** Per function and thread: [self, total] of a type, as `top --thread` gives them. */
function byFunction(source: ProfileSource, sampleType: string): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  // A streaming source knows its threads once it has been read.
  aggregate(source, { sampleType, limit: 1 });
  const threads = new Set(
    source.threads.map((t) => (t.interpreterId === 0 ? `${t.threadId}` : `${t.threadId}@${t.interpreterId}`)),
  );
  for (const thread of threads) {
    for (const r of aggregate(source, { sampleType, thread, limit: 0 }).rows)
      out[`${thread} ${r.funcname === '' ? '(anonymous)' : r.funcname} ${r.filename}`] = [r.self, r.total];
  }
  return out;
}

const SAFE = 2 ** 53;

/**
 * CPython 3.15's collectors leave out the sampling profiler's own frames (`_is_internal_frame`: a file name
 * ending in `_sync_coordinator.py`, its `_INTERNAL_FRAME_SUFFIXES`); every output but Tachyon does the same.
 */
const profilerFrame = (f: Frame) => f.filename.endsWith('_sync_coordinator.py');

describe('every shared vector CPython accepts, through every format', () => {
  const names = acceptedVectors();
  it('found the vectors', () => expect(names.length).toBeGreaterThan(40));
  for (const name of names) {
    it(name, () => {
      const expected = readExpected(name);
      const model = builderFromExpected(expected);
      const exactTimes = expected.samples.every((s) => Number(s.timestamp_us) < SAFE);
      const keepAll = { time: exactTimes, status: true, values: ['samples', 'wall'], frame };
      const want = projectSource(model, keepAll);
      const shown = { ...keepAll, hide: profilerFrame };
      const wantShown = projectSource(model, shown);
      // Per record, every value: Tachyon version 2 and pprof. Version 2 keeps times as exact integers
      // below 2^53 µs (285 years); s13's times near 2^63 are refused with a code.
      if (exactTimes) expect(projectSource(through(model, 'tachyon', { version: 2 }), keepAll)).toEqual(want);
      else
        expect(() => through(model, 'tachyon', { version: 2 })).toThrow(
          expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
        );
      // pprof values are int64: s13's gaps of 2^63 µs (in ns) cannot be held, so writing is refused, coded
      // (never wrapped or clamped); counts alone still go out.
      const beyondInt64 = [...model.batches()].some((b) =>
        b.values[1]!.subarray(0, b.length).some((v) => v >= 2 ** 63),
      );
      if (exactTimes) expect(projectSource(through(model, 'pprof'), keepAll)).toEqual(wantShown);
      else if (beyondInt64)
        for (const options of [{}, { aggregate: true }])
          expect(() => through(model, 'pprof', options)).toThrow(
            expect.objectContaining({ code: 'ERR_CONVERT_BAD_INPUT', message: expect.stringMatching(/beyond int64/) }),
          );
      else
        expect(projectSource(through(model, 'pprof'), { ...keepAll, values: ['samples'] })).toEqual(
          projectSource(model, { ...shown, values: ['samples'] }),
        );
      // Version 1: the ticks; a REPEAT run reads back as one record weighing its count.
      const counts = byFunction(model, 'samples');
      expect(byFunction(through(model, 'tachyon'), 'samples')).toEqual(counts);
      // Aggregating formats: per function and thread, in both types.
      if (!beyondInt64) expect(byFunction(through(model, 'pprof', { aggregate: true }), 'samples')).toEqual(counts);
      if (exactTimes)
        expect(byFunction(through(model, 'pprof', { aggregate: true }), 'wall')).toEqual(byFunction(model, 'wall'));
      if (model.threads.length === 1) {
        // One thread: collapsed lines carry no thread prefix, so the thread reads back as 0; a line break
        // inside a name cannot be written (it becomes a space).
        const unthreaded = (m: Record<string, [number, number]>) =>
          Object.fromEntries(Object.entries(m).map(([k, v]) => [k.replace(/^\S+ /, '').replace(/[\r\n]/g, ' '), v]));
        expect(unthreaded(byFunction(through(model, 'collapsed', { sampleType: 'samples' }), 'samples'))).toEqual(
          unthreaded(counts),
        );
        // speedscope names its time type "time"; its values are the model's.
        const ss = through(model, 'speedscope', { sampleType: 'wall' });
        expect(aggregate(ss, { limit: 0 }).total).toBe(aggregate(model, { sampleType: 'wall' }).total);
      }
      // .cpuprofile holds one thread: each thread written alone keeps its samples' stacks and times.
      for (const t of model.threads) {
        const key = t.interpreterId === 0 ? `${t.threadId}` : `${t.threadId}@${t.interpreterId}`;
        const one = through(model, 'cpuprofile', { thread: key });
        const ticks = (s: ProfileSource) =>
          projectSource(s, { time: exactTimes, frame }).map((line) => line.replace(/^\S+ /, ''));
        const alone = projectSource(model, { time: exactTimes, frame, hide: profilerFrame })
          .filter((line) => line.startsWith(`${key} `))
          .map((line) => line.replace(/^\S+ /, ''));
        expect(ticks(one)).toEqual(alone);
      }
    });
  }
});
