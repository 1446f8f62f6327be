// Runs many ProfileReader lifetimes (open, replay, close) in one process,
// synchronously, and prints how much its RSS and external memory grew:
// argv = backend, lifetimes, file (20,000 samples). Its own process, so no
// other test's garbage or a parallel worker's load moves the numbers; stops
// early once growth passes 4x the bound the test checks.
'use strict';
require('../../fuzz/child/ts-require.cjs');
const { outsideHeap, usage, growth } = require('./memory.cjs');
const { ProfileReader } = require('../../../lib/tachyon/index.ts');

const [which, countText, file] = process.argv.slice(2);
const count = Number(countText);
const STOP_BYTES = 200 * 1024 * 1024;

function lifetime() {
  const reader = ProfileReader.open(file, { backend: which });
  let samples = 0;
  reader.replay({ collect: (_stack, timestamps) => (samples += timestamps.length) });
  reader.close();
  if (samples !== 20_000) throw new Error(`replayed ${samples} samples, wrote 20000`);
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
