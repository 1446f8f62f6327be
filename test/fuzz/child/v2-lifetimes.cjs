// Runs many ProfileReader lifetimes (open, replay, close) of one version-2
// zstd file in one process, synchronously, and prints how much memory
// outside V8's heap, V8's heap in use and external memory grew:
//   node --expose-gc v2-lifetimes.cjs <backend> <lifetimes> <file> <samples>
// Stops early once growth passes 4x the 50 MB bound the test checks.
'use strict';
require('./ts-require.cjs');
const { outsideHeap, usage, growth } = require('../../tachyon/child/memory.cjs');
const { ProfileReader } = require('../../../lib/tachyon/index.ts');

const [which, countText, file, samplesText] = process.argv.slice(2);
const count = Number(countText);
const expected = Number(samplesText);
const STOP_BYTES = 200 * 1024 * 1024;

function lifetime() {
  const reader = ProfileReader.open(file, { backend: which });
  let samples = 0;
  reader.replay({ collect: (_stack, timestamps) => (samples += timestamps.length) });
  reader.close();
  if (samples !== expected) throw new Error(`replayed ${samples} samples, wrote ${expected}`);
}

// No event-loop turn between lifetimes: close() alone must free the memory.
for (let i = 0; i < 50; i++) lifetime();
const before = usage();
let done = 0;
for (let i = 0; i < count; i++) {
  lifetime();
  done++;
  if (i % 10 === 0 && outsideHeap() - before.rss > STOP_BYTES) break;
}
const after = usage();
console.log(JSON.stringify({ done, ...growth(before, after) }));
