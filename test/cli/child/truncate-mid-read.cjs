// Preloaded into a CLI run (node --require): after $PROFPACK_TRUNCATE_AFTER
// samples, truncates the file being read to 4 KiB, as a rotating agent would
// while `profpack top` reads it. Deterministic, unlike a racing second process.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { ProfileReader } = require(path.join(process.env.PROFPACK_DIST, 'tachyon', 'index.js'));
const samples = ProfileReader.prototype.samples;
ProfileReader.prototype.samples = function* truncating() {
  let n = 0;
  for (const s of samples.call(this)) {
    yield s;
    if (++n === Number(process.env.PROFPACK_TRUNCATE_AFTER)) fs.truncateSync(process.env.PROFPACK_TRUNCATE_FILE, 4096);
  }
};
// The model's Tachyon source replays through replayNodes (runs of samples): truncate there too.
const replayNodes = ProfileReader.prototype.replayNodes;
ProfileReader.prototype.replayNodes = function truncatingNodes(visitor) {
  let n = 0;
  const counted = {
    start: (nodes) => visitor.start(nodes),
    reset: () => visitor.reset(),
    samples(t, node, status, firstUs, lastUs, count) {
      visitor.samples(t, node, status, firstUs, lastUs, count);
      const before = n;
      n += count;
      const after = Number(process.env.PROFPACK_TRUNCATE_AFTER);
      if (before < after && n >= after) fs.truncateSync(process.env.PROFPACK_TRUNCATE_FILE, 4096);
    },
  };
  return replayNodes.call(this, counted);
};
