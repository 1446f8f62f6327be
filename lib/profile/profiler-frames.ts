/**
 * CPython's sampling profiler records its own frames under the program it runs (`python -m
 * profiling.sampling run` starts the script from `_sync_coordinator.py`). CPython 3.15's collectors hide them
 * from every view and text output (`_is_internal_frame` in `Lib/profiling/sampling/collector.py`: a frame whose
 * filename ends with one of `_INTERNAL_FRAME_SUFFIXES`, `constants.py`), while its binary (Tachyon) collector
 * keeps them. profpack does the same: views, aggregation and non-Tachyon outputs see a source through
 * `withoutProfilerFrames`; Tachyon rewrites never do (docs/formats.md, "CPython's profiler frames").
 */
import { grown } from '../typed-arrays';
import { StackTable } from './stack-table';
import type { ProfileSource } from './source';
import type { Frame, SampleBatch } from './types';

/** `_INTERNAL_FRAME_SUFFIXES` of CPython 3.15's `profiling/sampling/constants.py`. */
export const PROFILER_FRAME_SUFFIXES: readonly string[] = ['_sync_coordinator.py'];

/** Whether CPython's collectors hide `frame` (its filename ends with a profiler suffix). */
export function isProfilerFrame(frame: Frame): boolean {
  return frame.filename !== '' && PROFILER_FRAME_SUFFIXES.some((s) => frame.filename.endsWith(s));
}

const FILTERED = Symbol('withoutProfilerFrames');

/**
 * `source` with the profiler's frames taken out of every stack, wherever they sit (as CPython filters the
 * whole stack). Frame ids stay the source's. Until a profiler frame shows up, the source's own stack table and
 * batches pass through untouched; from then on stacks get a table of their own, built in source id order. A stack
 * of profiler frames only becomes the empty stack: the record is kept and counted as `(no stack)`, where
 * CPython's collectors drop it (docs/formats.md). The cost is per distinct stack, never per sample.
 */
export function withoutProfilerFrames<S extends ProfileSource>(source: S): S {
  if ((source as { [FILTERED]?: true })[FILTERED] === true) return source;
  let stacks: StackTable | undefined; // ours from the first profiler frame on; until then the source's serves
  let map = new Uint32Array(1024);
  let mapped = 1; // source stack ids below this are mapped; 0 is the empty stack
  let identity = true; // no profiler frame met yet: every id maps to itself
  const hidden: (boolean | undefined)[] = [];
  let out = new Uint32Array(0);

  const hides = (frameId: number): boolean => {
    let h = hidden[frameId];
    if (h === undefined) {
      const frame = source.frames[frameId];
      // A frame id past the table is the consumer's to refuse (with its ProfpackError), not ours.
      h = frame !== undefined && isProfilerFrame(frame);
      if (frame !== undefined) hidden[frameId] = h;
    }
    return h;
  };
  // A prefix table interns a parent before its children, so one pass in id order maps every stack.
  const sync = (): StackTable => {
    const from = source.stacks;
    const n = from.size;
    if (n > map.length) map = grown(map, n - 1, 0);
    if (identity) {
      // No profiler frame yet: every stack is its own, so nothing is built (the common case costs a scan).
      let s = mapped;
      while (s < n && !hides(from.frame(s))) s++;
      mapped = s;
      if (s === n) return from;
      identity = false;
      stacks = new StackTable();
      for (let i = 1; i < s; i++) map[i] = stacks.push(map[from.parent(i)]!, from.frame(i));
    }
    const own = stacks!;
    for (let s = mapped; s < n; s++) {
      const frame = from.frame(s);
      const parent = map[from.parent(s)]!;
      map[s] = hides(frame) ? parent : own.push(parent, frame);
    }
    mapped = n;
    return own;
  };

  return Object.create(source, {
    [FILTERED]: { value: true },
    stacks: { get: sync, enumerable: true },
    batches: {
      value: function* (): Iterable<SampleBatch> {
        for (const b of source.batches()) {
          sync();
          if (identity) {
            yield b;
            continue;
          }
          if (out.length < b.length) out = new Uint32Array(Math.max(b.length, out.length * 2));
          for (let i = 0; i < b.length; i++) out[i] = map[b.stack[i]!]!;
          yield { ...b, stack: out.subarray(0, b.length) };
        }
      },
    },
  }) as S;
}
