// Heap readers are bounded (docs/memory.md "Limits", issue 38): live objects and events per file and per query
// are refused with ERR_V2_LIMIT before they are allocated, and the live list is linear in any ordinal order.
import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConcatenatedHeapTrace, heapProfile, openHeapFile } from '../../lib/memory/index';
import { HeapStacks } from '../../lib/record/wire/heap-events';
// The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
import { ProfileWriter } from '../../lib/index';
import { LiveList } from '../../lib/tachyon/codec/heap/live';
import { HEAP_LIMITS } from '../../lib/tachyon/codec/heap/limits';
import { thrown } from '../support/refusals';

const dir = mkdtempSync(path.join(tmpdir(), 'profpack-heap-limits-'));
let n = 0;
const START = 5_000_000;

/**
 * A heap file from the library's own writer: `objects` allocations on thread `threadId` in polls of `perPoll`,
 * never freed (or, with `free`, each poll frees the previous poll's); `descending`: each poll's ordinals below
 * every earlier poll's.
 */
function heapFile(
  objects: number,
  { perPoll = 1000, threadId = 1, free = false, descending = false, startUs = START } = {},
): string {
  const out = path.join(dir, `h${n++}.tach`);
  const w = new ProfileWriter(out, {
    sampleIntervalUs: 1000n,
    startTimeUs: BigInt(startUs),
    formatVersion: 2,
    compression: 'zstd',
  });
  w.writeStack(1n, 0, BigInt(startUs + 1), 0, [w.internFrame({ filename: 'cpu.js', funcname: 'spin' })]);
  const sink = w.heapSink();
  const stacks = new HeapStacks();
  stacks.callFrames.push({ functionName: 'hoard', url: 'a.js', lineNumber: 1, columnNumber: 1, scriptId: '0' });
  const stack = stacks.add(-1, 0);
  sink.begin({ intervalBytes: 4096 });
  let t = startUs;
  let previous: Uint32Array | null = null;
  for (let done = 0; done < objects;) {
    const k = Math.min(perPoll, objects - done);
    const ordinals = Uint32Array.from({ length: k }, (_, i) =>
      descending ? 0xf000_0000 - done - k + i + 1 : done + i + 1,
    );
    const since = t;
    t += 1000;
    sink.allocations({
      threadId,
      timeUs: t,
      sinceUs: since,
      ordinals,
      sizes: new Uint32Array(k).fill(64),
      stackIds: new Uint32Array(k).fill(stack),
      shortLived: 0,
      stacks,
    });
    if (free && previous !== null) sink.frees({ threadId, timeUs: t, sinceUs: since, ordinals: previous });
    previous = ordinals;
    done += k;
  }
  w.finalize();
  return out;
}

function withEnv(values: Record<string, string>): void {
  for (const [k, v] of Object.entries(values)) process.env[k] = v;
}

afterEach(() => {
  delete process.env[HEAP_LIMITS.live.env];
  delete process.env[HEAP_LIMITS.events.env];
});

function readAll(file: string): number {
  const trace = openHeapFile(file)!;
  let objects = 0;
  for (const b of trace.events()) objects += b.ordinals.length;
  return objects;
}

describe('heap read limits', () => {
  it('a file with more live objects than the limit is refused, coded, at its record, under the limit it reads', () => {
    const file = heapFile(3000);
    expect(readAll(file)).toBe(3000);
    withEnv({ [HEAP_LIMITS.live.env]: '2500' });
    const err = thrown(() => readAll(file));
    expect(err.code).toBe('ERR_V2_LIMIT');
    expect(err.message).toContain(HEAP_LIMITS.live.env);
    expect(typeof err.offset).toBe('number');
    // The same refusal through a question (top --heap's).
    expect(thrown(() => heapProfile(openHeapFile(file)!)).code).toBe('ERR_V2_LIMIT');
    withEnv({ [HEAP_LIMITS.live.env]: '3000' });
    expect(heapProfile(openHeapFile(file)!).info.allocations).toBe(3000);
  });

  it('the default refuses a tiny file declaring millions of live objects before holding them', () => {
    // 2^21 + 4096 objects in polls of 65,536: a few KB of zstd. The decoder must stop at the limit.
    const file = heapFile(HEAP_LIMITS.live.fallback + 4096, { perPoll: 65536 });
    const err = thrown(() => readAll(file));
    expect(err.code).toBe('ERR_V2_LIMIT');
    expect(err.message).toContain(`past the limit of ${HEAP_LIMITS.live.fallback}`);
  });

  it('events past the limit are refused, even when few are live at once', () => {
    const file = heapFile(4000, { free: true, perPoll: 100 });
    expect(readAll(file)).toBe(4000 + 3900);
    withEnv({ [HEAP_LIMITS.events.env]: '5000' });
    const err = thrown(() => readAll(file));
    expect(err.code).toBe('ERR_V2_LIMIT');
    expect(err.message).toContain(HEAP_LIMITS.events.env);
    // Before any record: the header's totals say so.
    expect(err.offset).toBeLessThan(200);
  });

  it('per query: files each under the limit, together over it, are refused', () => {
    // Two rotated files of one process, whose threads' objects all stay live.
    const a = heapFile(600, { threadId: 1 });
    const b = heapFile(600, { threadId: 2, startUs: START + 10_000_000 });
    const both = (): ConcatenatedHeapTrace => new ConcatenatedHeapTrace([openHeapFile(a)!, openHeapFile(b)!]);
    withEnv({ [HEAP_LIMITS.live.env]: '1000' });
    expect(heapProfile(openHeapFile(a)!).info.allocations).toBe(600);
    const err = thrown(() => heapProfile(both()));
    expect(err.code).toBe('ERR_V2_LIMIT');
    expect(err.message).toContain('heap query');
    withEnv({ [HEAP_LIMITS.live.env]: '1200' });
    expect(heapProfile(both()).info.allocations).toBe(1200);
  });

  it('a bad override is a coded error', () => {
    const file = heapFile(10);
    withEnv({ [HEAP_LIMITS.live.env]: 'lots' });
    expect(thrown(() => readAll(file)).code).toBe('ERR_INVALID_ARGUMENT');
  });
});

describe('live list: linear in any ordinal order', () => {
  it('matches a sorted-array model for any insert order and any frees', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ insert: fc.nat(50) }),
            fc.record({ gaps: fc.array(fc.nat(6), { maxLength: 4 }) }),
            fc.record({ find: fc.array(fc.nat(50), { maxLength: 4 }) }),
          ),
          { maxLength: 200 },
        ),
        (ops) => {
          const list = new LiveList(true);
          const model: number[] = [];
          for (const op of ops) {
            if ('insert' in op) {
              list.insert(op.insert, op.insert * 2, op.insert * 3, op.insert * 4);
              let at = model.length;
              while (at > 0 && model[at - 1]! > op.insert) at--;
              model.splice(at, 0, op.insert);
            } else if ('gaps' in op) {
              let cursor = model.length;
              for (const gap of op.gaps) {
                const p = list.take(gap, cursor);
                const want = cursor - 1 - gap;
                expect(p).toBe(want < 0 ? -1 : want);
                if (p < 0) break;
                expect(list.taken).toBe(model[p]);
                model.splice(p, 1);
                cursor = p;
              }
            } else {
              let cursor = model.length;
              for (const ordinal of [...op.find].sort((x, y) => y - x)) {
                let p = cursor - 1;
                while (p >= 0 && model[p]! > ordinal) p--;
                const found = list.find(ordinal, cursor);
                if (p < 0 || model[p] !== ordinal) expect(found).toBeNull();
                else {
                  expect(found).toEqual([cursor - 1 - p, p]);
                  model.splice(p, 1);
                  cursor = p;
                }
              }
            }
            expect(list.length).toBe(model.length);
          }
          const c = list.columns();
          expect([...c.ordinals]).toEqual(model);
          expect([...c.sizes]).toEqual(model.map((o) => o * 2));
          expect([...c.timesUs]).toEqual(model.map((o) => o * 4));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('objects that arrive below every earlier one are not moved one by one', () => {
    // The sorted array moved every object above an insert: 30,000 objects in descending polls moved ~n²/2 of them.
    const file = heapFile(30_000, { perPoll: 100, descending: true });
    const copy = Uint32Array.prototype.copyWithin;
    let moved = 0;
    Uint32Array.prototype.copyWithin = function (this: Uint32Array, target: number, start: number, end?: number) {
      moved += (end ?? this.length) - start;
      return copy.call(this, target, start, end);
    };
    try {
      expect(readAll(file)).toBe(30_000);
    } finally {
      Uint32Array.prototype.copyWithin = copy;
    }
    expect(moved).toBeLessThan(30_000 * 4);
  });
});
