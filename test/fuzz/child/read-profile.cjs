// Child process for the resource-bound tests: opens a Tachyon file with
// ProfileReader, replays it, and prints one JSON line with the outcome and the
// process's peak RSS before and after (process.resourceUsage().maxRSS, KiB).
//   node read-profile.cjs <file> <backend> [maxDecompressedSize]
'use strict';
const path = require('path');
require('./ts-require.cjs');

const [file, backendName, cap] = process.argv.slice(2);
const { ProfileReader } = require(path.join(__dirname, '..', '..', '..', 'lib', 'tachyon', 'index.ts'));
const options = { backend: backendName };
if (cap !== undefined) options.maxDecompressedSize = Number(cap);
const rssBeforeKb = process.resourceUsage().maxRSS;
const t0 = Date.now();
let result;
try {
  const reader = ProfileReader.open(file, options);
  let samples = 0;
  for (const _ of reader.samples()) samples++;
  reader.close();
  result = { ok: true, samples };
} catch (err) {
  result = { ok: false, name: err && err.name, code: err && err.code, message: String(err && err.message) };
}
result.ms = Date.now() - t0;
result.rssBeforeKb = rssBeforeKb;
result.peakRssKb = process.resourceUsage().maxRSS;
process.stdout.write(JSON.stringify(result) + '\n');
