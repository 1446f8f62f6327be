import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native addons and child processes: separate processes, not worker threads.
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
