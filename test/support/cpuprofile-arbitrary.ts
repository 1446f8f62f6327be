/**
 * Generated flat .cpuprofile documents (fast-check): a tree over ids 1..n, call frames with every kind of string
 * and number, samples of its nodes, positionTicks on one node, an optional `$profpack` and an unknown member.
 */
import fc from 'fast-check';

/** `json` with " \r\n" around each punctuator outside strings. */
export function spread(json: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += json[++i]!;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      out += c;
      inString = true;
    } else out += ',:[]{}'.includes(c) ? ` ${c}\r\n` : c;
  }
  return out;
}

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', '(root)', 'a "quoted" }{ name', 'back\\slash', 'é 日本 🙂', 'tab\there', 'file:///x/y.js'),
);
const num = fc.oneof(fc.integer({ min: -1, max: 5000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
const callFrame = fc.record({
  functionName: text,
  scriptId: fc.oneof(fc.constantFrom('0', '12'), fc.nat(99)),
  url: text,
  lineNumber: num,
  columnNumber: num,
});

/** A flat profile: a tree over ids 1..n (node k's parent among the earlier ones), samples of its nodes. */
export const profile = fc
  .record({
    frames: fc.array(callFrame, { minLength: 1, maxLength: 4 }),
    parents: fc.array(fc.nat(), { maxLength: 12 }),
    picks: fc.array(fc.nat(), { maxLength: 12 }),
    samples: fc.array(fc.nat(), { maxLength: 20 }),
    deltas: fc.array(num, { maxLength: 20 }),
    ticks: fc.array(fc.record({ line: fc.integer({ min: -2, max: 99 }), ticks: fc.nat(9) }), { maxLength: 3 }),
    startTime: num,
    meta: fc.option(fc.record({ version: fc.constant(1), sampleIntervalUs: fc.nat(2000) }), { nil: undefined }),
    extra: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
  })
  .map((g) => {
    const count = g.parents.length + 1;
    const nodes = Array.from({ length: count }, (_, k) => ({
      id: k + 1,
      callFrame: g.frames[(g.picks[k] ?? k) % g.frames.length]!,
      hitCount: 0,
      children: [] as number[],
      ...(k === 1 && g.ticks.length > 0 ? { positionTicks: g.ticks } : {}),
    }));
    g.parents.forEach((p, j) => nodes[p % (j + 1)]!.children.push(j + 2));
    const samples = g.samples.map((s) => (s % count) + 1);
    return {
      nodes,
      startTime: g.startTime,
      endTime: g.startTime + 1000,
      samples,
      timeDeltas: samples.map((_, i) => g.deltas[i] ?? 1),
      ...(g.meta === undefined ? {} : { $profpack: g.meta }),
      ...(g.extra === undefined ? {} : { extra: g.extra }),
    };
  });
