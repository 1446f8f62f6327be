// Runs the vitest suite twice: on the native backend (which must really
// load: backend.ts throws when PROFPACK_BACKEND=native and the addon fails)
// and on the pure-JS twin. `--tier quick` (npm test) or `--tier slow` runs one
// tier of scripts/test-tiers.mjs; with no --tier, every file (npm run test:all,
// CI). Other arguments go to vitest (e.g. a file filter). Ends with one
// "N passed, N failed" line over both runs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tierFromEnv, tiers } from './test-tiers.mjs';

const extra = process.argv.slice(2);
const tierAt = extra.indexOf('--tier');
if (tierAt >= 0) process.env.PROFPACK_TEST_TIER = extra.splice(tierAt, 2)[1] ?? '(nothing after --tier)';
const tier = tierFromEnv();
if (tier) {
  const files = tiers();
  if (files.bad.length > 0) throw new Error(files.bad.join('\n'));
  const other = tier === 'quick' ? 'slow' : 'quick';
  console.log(
    `test-both: the ${tier} tier, ${files[tier].length} of ${files.quick.length + files.slow.length} test files ` +
      `(the ${files[other].length} ${other} ones run with npm run test:all; docs/development.md)`,
  );
  // A file named on the command line but in the other tier would vanish with "no test files": say where it is.
  for (const f of files[other].filter((f) => extra.some((arg) => !arg.startsWith('-') && f.includes(arg))))
    console.log(`test-both: ${f} is in the ${other} tier, not run here (node scripts/test-both.mjs ${f} runs it)`);
}
// The quick tier runs the budgeted fuzzers (test/fuzz/mutate.ts) for 8 s in all instead of 40.
if (tier === 'quick' && !process.env.PROFPACK_FUZZ_SECONDS) process.env.PROFPACK_FUZZ_SECONDS = '8';

// Interop tests run CPython 3.15's own reader and writer. Install it (about
// 5 s the first time, 20 ms after) and hand its path to the tests; if it
// cannot be installed, those tests fail rather than skip.
if (!process.env.TACHYON_CPYTHON) {
  console.log(
    'test-both: CPython 3.15 for the interop tests (../shared/tools/cpython315/install.sh: installed once, about 5 s; then reused)',
  );
  const installer = path.resolve(
    import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname),
    '..',
    '..',
    'shared',
    'tools',
    'cpython315',
    'install.sh',
  );
  const got = spawnSync('bash', [installer], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (got.status === 0 && got.stdout.trim()) process.env.TACHYON_CPYTHON = got.stdout.trim().split('\n').at(-1);
  else console.log(`CPython 3.15 could not be installed (${installer}): interop tests will fail`);
}
// Go's pprof and Chromium for the conformance and browser tests (apt-get when missing; it says so first).
console.log(
  'test-both: checking for go, chromium and clickhouse (scripts/test-tools.sh installs them with apt-get when missing)',
);
spawnSync(
  'bash',
  [path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), 'test-tools.sh')],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);
const backends = (process.env.PROFPACK_TEST_BACKENDS ?? 'native,js').split(',');
// PROFPACK_TEST_REPORT_DIR keeps vitest's JSON reports (per-file durations: how the tiers were chosen).
const keep = process.env.PROFPACK_TEST_REPORT_DIR;
if (keep) mkdirSync(keep, { recursive: true });
const dir = keep || mkdtempSync(path.join(tmpdir(), 'profpack-test-'));
let passed = 0;
let failed = 0;
let ok = true;
const failures = [];

for (const name of backends) {
  const report = path.join(dir, `${name}.json`);
  console.log(`\n=== vitest with PROFPACK_BACKEND=${name} ===`);
  const run = spawnSync(
    process.execPath,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      ...extra,
    ],
    { stdio: 'inherit', env: { ...process.env, PROFPACK_BACKEND: name } },
  );
  if (run.status !== 0) ok = false;
  try {
    const result = JSON.parse(readFileSync(report, 'utf8'));
    passed += result.numPassedTests;
    failed += result.numFailedTests;
    if (result.numTotalTests === 0) ok = false;
    console.log(`[${name}] ${result.numPassedTests} passed, ${result.numFailedTests} failed`);
    // Named again at the very end: CI keeps only the tail of a long log.
    for (const file of result.testResults ?? []) {
      const tests = file.assertionResults ?? [];
      for (const test of tests) {
        if (test.status === 'failed')
          failures.push(
            `[${name}] ${path.relative(process.cwd(), file.name)} > ${test.fullName}: ${(test.failureMessages ?? [])[0]?.split('\n')[0] ?? ''}`,
          );
      }
      // A file whose set-up failed (beforeAll, an import) fails with its tests skipped, none counted as failed.
      if (file.status === 'failed' && !tests.some((t) => t.status === 'failed')) {
        failed++;
        failures.push(
          `[${name}] ${path.relative(process.cwd(), file.name)}: ${String(file.message ?? 'failed').split('\n')[0]}`,
        );
      }
    }
  } catch {
    ok = false;
    console.log(`[${name}] no report: vitest did not finish`);
  }
}
if (!keep) rmSync(dir, { recursive: true, force: true });
if (!ok && failed === 0) failed = 1; // a run that crashed counts as a failure
if (failures.length > 0) console.log(`\nFailed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);
