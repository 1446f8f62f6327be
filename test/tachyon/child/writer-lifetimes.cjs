// Runs many ProfileWriter lifetimes in one process and prints how much its
// RSS and external memory grew: argv = backend, zstd level ('none' for no
// compression), lifetimes, 'sync' | 'async' (an event-loop turn between
// lifetimes), directory. Stops early once growth passes 4x the bound the
// test checks, so a leaking build cannot take the machine's memory.
'use strict';
require('../../fuzz/child/ts-require.cjs');
const { outsideHeap, usage, growth } = require('./memory.cjs');
const path = require('path');
const { ProfileWriter } = require('../../../lib/tachyon/index.ts');

const [which, level, countText, mode, dir] = process.argv.slice(2);
const count = Number(countText);
const STOP_BYTES = 200 * 1024 * 1024;

function lifetime(i) {
  const options = { sampleIntervalUs: 1000, backend: which, compression: level === 'none' ? 'none' : 'zstd' };
  if (level !== 'none') options.level = Number(level);
  const w = new ProfileWriter(path.join(dir, `w${i % 4}.bin`), options);
  const f = w.internFrame({ filename: 'a.py', funcname: `f${i}`, lineno: i });
  for (let t = 0; t < 20; t++) w.writeStack(t % 3, 0, 1000 * t, 1, [f]);
  // Both ends of a writer's life release it: finalize, and close without it.
  if (i % 2 === 0) w.finalize();
  else w.close();
}

// Measured without an event-loop turn before it: N-API finalizers wait for one.
async function main() {
  // Warm up (module loading, the first context, the JIT, V8 and malloc reaching
  // their working sizes) so the growth measured is what lifetimes keep. Half
  // as many as measured, 200 at least: with 200 before 1,000 uncompressed native
  // lifetimes, RSS still stepped up by 15-26 MB inside the measured window at
  // times (malloc arenas of V8's compiler threads), then stayed flat to 4,000.
  for (let i = 0; i < Math.max(200, count / 2); i++) lifetime(i);
  const before = usage();
  let done = 0;
  for (let i = 0; i < count; i++) {
    lifetime(i);
    done++;
    if (mode === 'async') await new Promise((resolve) => setImmediate(resolve));
    if (i % 10 === 0 && outsideHeap() - before.rss > STOP_BYTES) break;
  }
  const after = usage();
  console.log(JSON.stringify({ done, ...growth(before, after) }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
