import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
// @ts-expect-error: a plain ES module script with no declarations
import { tierFromEnv, tiers } from './scripts/test-tiers.mjs';

// Timeouts catch hangs; under emulation (scripts/qemu-arm64.sh sets
// PROFPACK_TEST_TIMEOUT_SCALE) every test is 10-30x slower, not hung.
const scale = Number(process.env.PROFPACK_TEST_TIMEOUT_SCALE ?? '1') || 1;

// PROFPACK_TEST_TIER=quick or slow runs one tier (scripts/test-tiers.mjs: a file is quick unless its first line tags
// it slow); unset, every file.
const tier: 'quick' | 'slow' | undefined = tierFromEnv();
const slowFiles = (): string[] => {
  const found = tiers();
  if (found.bad.length > 0) throw new Error(found.bad.join('\n'));
  return found.slow;
};

export default defineConfig({
  test: {
    include: tier === 'slow' ? slowFiles() : ['test/**/*.test.ts'],
    exclude: tier === 'quick' ? [...configDefaults.exclude, ...slowFiles()] : configDefaults.exclude,
    // Native addons and child processes: separate processes, not worker threads.
    pool: 'forks',
    // vitest's default is one fork fewer than the CPUs: one fork on a 2-core CI
    // machine, whose other core then idles. The suite holds under two competing
    // busy loops (scripts/test-under-load.sh), so two forks are safe there.
    maxWorkers: Number(process.env.PROFPACK_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    testTimeout: 120_000 * scale,
    hookTimeout: 300_000 * scale,
  },
});
