// Child process for the recover bound test: recover(IN, OUT) with a backend,
// then one JSON line with the outcome and the process's peak RSS before and
// after (process.resourceUsage().maxRSS, KiB).
//   node recover-profile.cjs <in> <out> <backend>
'use strict';
const path = require('path');
require('./ts-require.cjs');

const [input, output, backendName] = process.argv.slice(2);
const { recover } = require(path.join(__dirname, '..', '..', '..', 'lib', 'tachyon', 'index.ts'));
const rssBeforeKb = process.resourceUsage().maxRSS;
let result;
try {
  result = { ok: true, ...recover(input, output, { backend: backendName }) };
} catch (err) {
  result = { ok: false, name: err && err.name, code: err && err.code, message: String(err && err.message) };
}
result.rssBeforeKb = rssBeforeKb;
result.peakRssKb = process.resourceUsage().maxRSS;
process.stdout.write(JSON.stringify(result) + '\n');
