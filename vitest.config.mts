import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Timeouts catch hangs; under emulation (scripts/qemu-arm64.sh sets
// PROFPACK_TEST_TIMEOUT_SCALE) every test is 10-30x slower, not hung.
const scale = Number(process.env.PROFPACK_TEST_TIMEOUT_SCALE ?? '1') || 1;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
