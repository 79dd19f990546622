/**
 * Test configuration. Integration tests spawn the real processes from dist/ against a real Redis,
 * so files run in forked workers, at most two at a time (the target machines have two cores).
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
