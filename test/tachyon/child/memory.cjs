// What a lifetimes child measures (node --expose-gc), shared by
// reader-lifetimes.cjs and writer-lifetimes.cjs.
// RSS less V8's heap total: Node 24's V8 keeps up to ~100 MB of emptied heap
// pages after a full GC (heapTotal grows while heapUsed stays flat), which
// is not memory the library holds; V8's heap in use is reported on its own.
'use strict';

/** Resident memory outside V8's heap: where native allocations show. */
function outsideHeap() {
  const m = process.memoryUsage();
  return m.rss - m.heapTotal;
}

/**
 * After a full collection: what is still held, not garbage V8 has not got round
 * to. Twice, because V8 frees dead ArrayBuffers' memory on a background sweep
 * that the next collection completes: after one, up to ~50 MB of dead 256 KiB
 * staging arrays can still count as external and resident.
 */
function usage() {
  global.gc();
  global.gc();
  const m = process.memoryUsage();
  return { rss: outsideHeap(), heapUsed: m.heapUsed, external: m.external };
}

/** The growth from `before` to `after`, as the tests read it. */
function growth(before, after) {
  return {
    rssGrowth: after.rss - before.rss,
    heapUsedGrowth: after.heapUsed - before.heapUsed,
    externalGrowth: after.external - before.external,
  };
}

module.exports = { outsideHeap, usage, growth };
