// Runs many ProfileReader lifetimes (open, replay, close) of one version-2
// zstd file in one process, synchronously, and prints how much memory
// outside V8's heap, V8's heap in use and external memory grew:
//   node --expose-gc v2-lifetimes.cjs <backend> <lifetimes> <file> <samples>
// The allocator settles first: the first few thousand lifetimes raise resident
// memory by a one-off ~40-50 MB on both backends, then it stays flat (checked
// to 40,000 lifetimes), so growth is measured over a window after a warm-up
// of WARM_UP lifetimes, where a leak of a few KB per lifetime shows.
// Stops early once growth passes 200 MB.
'use strict';
require('./ts-require.cjs');
const { outsideHeap, usage, growth } = require('../../tachyon/child/memory.cjs');
const { ProfileReader } = require('../../../lib/tachyon/index.ts');

const [which, countText, file, samplesText] = process.argv.slice(2);
const count = Number(countText);
const expected = Number(samplesText);
const STOP_BYTES = 200 * 1024 * 1024;
const WARM_UP = 4000;

function lifetime() {
  const reader = ProfileReader.open(file, { backend: which });
  let samples = 0;
  reader.replay({ collect: (_stack, timestamps) => (samples += timestamps.length) });
  reader.close();
  if (samples !== expected) throw new Error(`replayed ${samples} samples, wrote ${expected}`);
}

// The measurements come after one event-loop turn: Node runs some native
// finalizers from setImmediate, and a real program turns its loop.
const settled = () => new Promise((resolve) => setImmediate(() => resolve(usage())));

async function main() {
  // No event-loop turn between lifetimes: close() alone must free the memory.
  for (let i = 0; i < WARM_UP; i++) lifetime();
  const before = await settled();
  let done = 0;
  for (let i = 0; i < count; i++) {
    lifetime();
    done++;
    if (i % 10 === 0 && outsideHeap() - before.rss > STOP_BYTES) break;
  }
  const after = await settled();
  console.log(JSON.stringify({ done, ...growth(before, after) }));
}
main();
