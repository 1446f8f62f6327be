// The heap section's live list (lib/tachyon/codec/heap/live.ts) against a plain array kept in ordinal order by
// splicing: inserts in any order (repeated ordinals too), the coder's find() and the decoder's take(), checked after
// every operation through columns() and ordinalAt().
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LiveList } from '../../../../lib/tachyon/codec/heap/live';

interface Model {
  ordinal: number;
  size: number;
  stack: number;
  timeUs: number;
}

/** The place an insert takes: after every object with an ordinal ≤ its own. */
function modelInsert(model: Model[], o: Model): void {
  let at = model.length;
  while (at > 0 && model[at - 1]!.ordinal > o.ordinal) at--;
  model.splice(at, 0, o);
}

const operation = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), ordinal: fc.nat(60), size: fc.nat(1000) }),
  // V8's case: ordinals above every one so far.
  fc.record({ op: fc.constant('append' as const), step: fc.integer({ min: 1, max: 5 }), size: fc.nat(1000) }),
  fc.record({ op: fc.constant('find' as const), pick: fc.nat(), cursorBack: fc.nat(3), miss: fc.boolean() }),
  fc.record({ op: fc.constant('take' as const), gap: fc.nat(8), cursorBack: fc.nat(3) }),
);

describe('LiveList', () => {
  it('holds the same objects in the same order as a spliced array, whatever the order of inserts and removals', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 300 }), fc.boolean(), (ops, payload) => {
        const list = new LiveList(payload);
        const model: Model[] = [];
        let top = 100;
        let n = 0;
        for (const o of ops) {
          if (o.op === 'insert' || o.op === 'append') {
            const ordinal = o.op === 'insert' ? o.ordinal : (top += o.step);
            const object = { ordinal, size: o.size, stack: n % 7, timeUs: n * 10 };
            n++;
            list.insert(object.ordinal, object.size, object.stack, object.timeUs);
            modelInsert(model, object);
          } else if (o.op === 'find') {
            const cursor = Math.max(0, model.length - o.cursorBack);
            const wanted = o.miss ? 1_000_000 : cursor > 0 ? model[o.pick % cursor]!.ordinal : 5;
            // The model: the last position below the cursor holding that ordinal.
            let p = cursor - 1;
            while (p >= 0 && model[p]!.ordinal > wanted) p--;
            const expected = p >= 0 && model[p]!.ordinal === wanted ? [cursor - 1 - p, p] : null;
            expect(list.find(wanted, cursor)).toEqual(expected);
            if (expected !== null) model.splice(p, 1);
          } else {
            const cursor = Math.max(0, model.length - o.cursorBack);
            const p = cursor - 1 - o.gap;
            expect(list.take(o.gap, cursor)).toBe(p < 0 ? -1 : p);
            if (p >= 0) expect(list.taken).toBe(model.splice(p, 1)[0]!.ordinal);
          }
          expect(list.length).toBe(model.length);
        }
        const c = list.columns();
        expect([...c.ordinals]).toEqual(model.map((m) => m.ordinal));
        if (payload) {
          expect([...c.sizes]).toEqual(model.map((m) => m.size));
          expect([...c.stacks]).toEqual(model.map((m) => m.stack));
          expect([...c.timesUs]).toEqual(model.map((m) => m.timeUs));
        }
        for (let p = 0; p < model.length; p++) expect(list.ordinalAt(p)).toBe(model[p]!.ordinal);
      }),
      { numRuns: 300 },
    );
  });
});
