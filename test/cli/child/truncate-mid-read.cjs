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
