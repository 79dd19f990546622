/**
 * Analytics flush jobs: each job is one batch of records buffered by a facade; the worker stores
 * it, together with the batches of the jobs active beside it (./analytics-group.ts). Idempotent:
 * the store ignores record ids it already holds, so a retried job, or a batch the facade also
 * wrote directly on shutdown, is stored once. Also the retention purge: records older
 * than QUARRY_ANALYTICS_RETENTION_DAYS are deleted hourly, so the store stops growing.
 */
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ANALYTICS_ATTEMPTS, ANALYTICS_QUEUE, type AnalyticsBatch } from '../../core/domain/analytics.js';
import type { Store } from '../../store/repository.js';
import { jobWorker } from './job-worker.js';
import { analyticsGroup, recordsOf, type GroupOptions, type StoredCounts } from './analytics-group.js';

/** Default group commit: batches wait up to 250 ms (QUARRY_ANALYTICS_GROUP_MS) for company, 16 at most (the worker's concurrency). */
export const GROUP_DEFAULTS: GroupOptions = Object.freeze({ lingerMs: 250, maxBatches: 16, maxRecords: 4096 });

/** Builds the processor: each job's batch is stored in a group with the batches active beside it. */
export function analyticsProcessor(store: Store, options: GroupOptions = GROUP_DEFAULTS) {
  const group = analyticsGroup(store.analytics, options);
  return (job: Job<AnalyticsBatch>): Promise<StoredCounts> => group(job.data);
}

/** Starts the worker of the analytics queue on `connection` (which must have maxRetriesPerRequest null). */
export function analyticsWorker(store: Store, connection: Redis, logger: Logger, options: GroupOptions = GROUP_DEFAULTS): Worker<AnalyticsBatch> {
  // As many jobs active as a group may hold: they are stored together, one transaction per kind.
  const worker = jobWorker(ANALYTICS_QUEUE, analyticsProcessor(store, options), connection, logger, { concurrency: options.maxBatches });
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? ANALYTICS_ATTEMPTS);
    const records = recordsOf(job.data);
    if (last) {
      logger.error({ batch: job.id, records, attempts: job.attemptsMade, err: err.message }, 'analytics batch failed every attempt; it stays in the failed set of the analytics queue');
    } else {
      logger.warn({ batch: job.id, records, attempt: job.attemptsMade, err: err.message }, 'analytics batch failed; will retry');
    }
  });
  return worker;
}

/** How often records past their retention are deleted. */
const RETENTION_PURGE_INTERVAL_MS = 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

/** Deletes analytics records older than `retentionDays` (0 keeps everything); returns how many went. */
export async function purgeExpiredAnalytics(store: Store, retentionDays: number, logger: Logger, now = Date.now()): Promise<number> {
  if (retentionDays <= 0) return 0;
  const deleted = await store.analytics.purgeBefore(now - retentionDays * DAY_MS);
  if (deleted > 0) logger.info({ deleted, retentionDays }, 'analytics: deleted records past their retention');
  return deleted;
}

/** Runs the retention purge now and then hourly; returns the function that stops it. */
export function startAnalyticsRetention(store: Store, retentionDays: number, logger: Logger): () => void {
  if (retentionDays <= 0) return () => {};
  let running = false;
  const purge = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      await purgeExpiredAnalytics(store, retentionDays, logger);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'analytics retention purge failed; retrying at the next interval');
    } finally {
      running = false;
    }
  };
  void purge();
  const timer = setInterval(() => void purge(), RETENTION_PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
