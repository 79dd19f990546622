/**
 * Test configuration. Integration tests spawn the real processes from dist/ against a real Redis,
 * so files run in forked workers, at most two at a time (the target machines have two cores).
 * The tenant-isolation suite measures another tenant's latency while one attacks, so it runs last
 * and alone: a second test file beside it would be measured too.
 *
 * Every suite that runs the service runs twice, except those of SQLITE_ONLY: on SQLite (project
 * `suite`) and on PostgreSQL (project `postgres`: QUARRY_TEST_STORE=postgres gives each stack a
 * database of its own, test/helpers/stack.ts). The store contract tests (test/store) run both
 * stores themselves.
 */
import { defineConfig } from 'vitest/config';

const ISOLATED = ['test/adversarial/tenant-isolation.test.ts'];
/**
 * Suites that test SQLite itself (its write thread, read caches, sliced purges under its single
 * write lock, pending counts through its partial indexes), measure latency, or test a part the
 * store only feeds (the core's shards, the RAG transport): they do not run on PostgreSQL.
 */
const SQLITE_ONLY = [
  'test/adversarial/purge-isolation.test.ts',
  'test/adversarial/pending-count.test.ts',
  'test/adversarial/supervised-redis.test.ts',
  // Copies a SQLite store into PostgreSQL: it runs both by itself.
  'test/integration/migrate-to-postgres.test.ts',
  // Blob stores keep bytes outside the store: the PostgreSQL run would test the same thing again.
  'test/integration/blob-upload.test.ts',
  'test/integration/s3-blob-store.test.ts',
  'test/integration/file-import-s3.test.ts',
  // The job process's event loop while the embedded model embeds: the store only receives the
  // vectors (both stores' vector writes have their own contract test), and the run takes 35-70 s.
  'test/adversarial/embed-event-loop.test.ts',
  // The local GGUF model in the job workers: the store only receives the answer's record.
  'test/integration/rag-local-model.test.ts',
  // No store of the project's choosing at all: the recorder suite opens a SQLite store itself
  // (25 s, its Redis outages), the stream reader and the scanners use none. The postgres run
  // would repeat them exactly.
  'test/integration/analytics-recorder.test.ts',
  'test/integration/rag-stream-reader.test.ts',
  'test/adversarial/linear-scanners.test.ts',
  // The core's own behaviour (shard invariance, isolation, growth, compaction, deadlines): the
  // store only feeds the shards, through the reads that search-recovery (rebuilds from it after a
  // kill, replays its log), search-oracle and the rest run on PostgreSQL as well. ~110 s of the
  // suite's CPU, which is saturated on two cores (deploy/test.sh's run must stay well under 20 min).
  'test/integration/search-shards.test.ts',
  'test/integration/shard-growth.test.ts',
  'test/integration/idle-compaction.test.ts',
  'test/adversarial/shard-safety.test.ts',
  'test/adversarial/shard-safety-deadlines.test.ts',
  // The RAG transport between the HTTP process and the job workers (Redis streams, alive keys,
  // deadlines): the store only receives a complete answer's record, as rag-generate checks on both.
  'test/adversarial/rag-deadline.test.ts',
  'test/adversarial/rag-worker-kill.test.ts',
  'test/adversarial/rag-worker-pause.test.ts',
];

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
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/integration/**/*.test.ts', 'test/adversarial/**/*.test.ts', 'test/compat/**/*.test.ts'],
          exclude: [...ISOLATED, ...SQLITE_ONLY],
          env: { QUARRY_TEST_STORE: 'postgres' },
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'isolation', include: ISOLATED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
