// npm's install step. node-gyp-build loads a matching prebuild or compiles the
// addon; when neither works (no prebuild for this platform, no compiler) the
// install still succeeds: profpack then runs on its pure-JS twin and says so
// with one warning when loaded (PROFPACK_NO_NATIVE, lib/backend.ts).
// PROFPACK_INSTALL_VERBOSE=1 shows the compiler's output.
'use strict';
const { spawnSync } = require('child_process');

const verbose = process.env.PROFPACK_INSTALL_VERBOSE === '1';
let run;
try {
  run = spawnSync(process.execPath, [require.resolve('node-gyp-build/bin.js')], {
    stdio: ['ignore', verbose ? 'inherit' : 'pipe', verbose ? 'inherit' : 'pipe'],
    encoding: 'utf8',
  });
} catch (err) {
  run = { status: 1, error: err };
}
if (run.status !== 0) {
  const why = run.error ? String(run.error.message || run.error) : `no prebuild for ${process.platform}-${process.arch} and the build failed`;
  console.warn(`profpack: native addon unavailable (${why}); using the pure-JS backend. PROFPACK_INSTALL_VERBOSE=1 shows the build output.`);
}
process.exit(0);
