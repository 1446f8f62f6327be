import { defineConfig } from 'vitest/config';

// Timeouts catch hangs; under emulation (scripts/qemu-arm64.sh sets
// PROFPACK_TEST_TIMEOUT_SCALE) every test is 10-30x slower, not hung.
const scale = Number(process.env.PROFPACK_TEST_TIMEOUT_SCALE ?? '1') || 1;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native addons and child processes: separate processes, not worker threads.
    pool: 'forks',
    testTimeout: 120_000 * scale,
    hookTimeout: 300_000 * scale,
  },
});
