/**
 * Test configuration. Integration tests spawn the real processes from dist/ against a real Redis,
 * so files run in forked workers, at most two at a time (the target machines have two cores).
 * The tenant-isolation suite measures another tenant's latency while one attacks, so it runs last
 * and alone: a second test file beside it would be measured too.
 */
import { defineConfig } from 'vitest/config';

const ISOLATED = ['test/adversarial/tenant-isolation.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    globalSetup: ['test/helpers/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: ISOLATED, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'isolation', include: ISOLATED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
