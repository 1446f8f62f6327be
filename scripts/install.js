// npm's install step. node-gyp-build loads a matching prebuild or compiles the
// addon; when neither works (no prebuild for this platform, no compiler) the
// install still succeeds: profpack then runs on its pure-JS twin and says so
// with one warning when loaded (PROFPACK_NO_NATIVE, lib/backend.ts).
// PROFPACK_INSTALL_VERBOSE=1 shows the compiler's output.
'use strict';
const { spawnSync } = require('child_process');

const verbose = process.env.PROFPACK_INSTALL_VERBOSE === '1';
try {
  // A prebuild (or an earlier build) that loads here needs nothing more.
  require('node-gyp-build')(require('path').join(__dirname, '..'));
  process.exit(0);
} catch {
  // none loads: build below
}
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
  const why = run.error
    ? String(run.error.message || run.error)
    : `no prebuild for ${process.platform}-${process.arch} and the build failed`;
  console.warn(
    `profpack: native addon unavailable (${why}); using the pure-JS backend. PROFPACK_INSTALL_VERBOSE=1 shows the build output.`,
  );
  // On CI the reason matters more than a quiet log: the end of the build output.
  if (process.env.CI === 'true' && !verbose)
    console.warn(`${run.stdout || ''}${run.stderr || ''}`.split('\n').slice(-30).join('\n'));
}
process.exit(0);
