import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';
// @ts-expect-error: a plain ES module script with no declarations
import { tierFromEnv, tiers } from './scripts/test-tiers.mjs';

// Timeouts catch hangs; under emulation (scripts/qemu-arm64.sh sets
// PROFPACK_TEST_TIMEOUT_SCALE) every test is 10-30x slower, not hung.
const scale = Number(process.env.PROFPACK_TEST_TIMEOUT_SCALE ?? '1') || 1;

// PROFPACK_FC_RUNS_SCALE=N runs every fast-check property N times as many times as its numRuns says (default 1:
// as written), to meet rare counterexamples before CI does: test/support/fast-check-scaled.ts stands in for
// 'fast-check' (but for its own import of it). Timeouts grow with the runs.
const fcRunsScale = Number(process.env.PROFPACK_FC_RUNS_SCALE ?? '1');
const fcScaled = fileURLToPath(new URL('./test/support/fast-check-scaled.ts', import.meta.url));
const fcScalePlugin: Plugin = {
  name: 'profpack-fc-runs-scale',
  enforce: 'pre',
  resolveId: (id, importer) => (id === 'fast-check' && importer !== fcScaled ? fcScaled : null),
};
const timeoutScale = scale * Math.max(1, fcRunsScale || 1);

// PROFPACK_TEST_TIER=quick or slow runs one tier (scripts/test-tiers.mjs: a file is quick unless its first line tags
// it slow); unset, every file.
const tier: 'quick' | 'slow' | undefined = tierFromEnv();
const slowFiles = (): string[] => {
  const found = tiers();
  if (found.bad.length > 0) throw new Error(found.bad.join('\n'));
  return found.slow;
};

export default defineConfig({
  plugins: fcRunsScale === 1 ? [] : [fcScalePlugin],
  test: {
    include: tier === 'slow' ? slowFiles() : ['test/**/*.test.ts'],
    exclude: tier === 'quick' ? [...configDefaults.exclude, ...slowFiles()] : configDefaults.exclude,
    // Native addons and child processes: separate processes, not worker threads.
    pool: 'forks',
    // vitest's default is one fork fewer than the CPUs: one fork on a 2-core CI
    // machine, whose other core then idles. The suite holds under two competing
    // busy loops (scripts/test-under-load.sh), so two forks are safe there.
    maxWorkers: Number(process.env.PROFPACK_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    testTimeout: 120_000 * timeoutScale,
    hookTimeout: 300_000 * timeoutScale,
  },
});
