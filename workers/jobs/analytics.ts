/**
 * Analytics flush jobs: each job is one batch of records buffered by a facade; the worker stores
 * it. Idempotent: the store ignores record ids it already holds, so a retried job, or a batch the
 * facade also wrote directly on shutdown, is stored once. Also the retention purge: records older
 * than QUARRY_ANALYTICS_RETENTION_DAYS are deleted hourly, so the store stops growing.
 */
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ANALYTICS_ATTEMPTS, ANALYTICS_QUEUE, type AnalyticsBatch } from '../../core/domain/analytics.js';
import type { Store } from '../../store/repository.js';
import { jobWorker } from './job-worker.js';

/** Builds the processor: stores the batch's searches, then its recommendations, then its RAG answers. */
export function analyticsProcessor(store: Store) {
  return async (job: Job<AnalyticsBatch>): Promise<{ searches: number; recommendations: number; rags: number }> => {
    const searches = await store.analytics.insertSearches(job.data.searches ?? []);
    const recommendations = await store.analytics.insertRecommendations(job.data.recommendations ?? []);
    // Batches enqueued by a facade from before RAG carry no `rags`.
    const rags = await store.analytics.insertRags(job.data.rags ?? []);
    return { searches, recommendations, rags };
  };
}

/** Starts the worker of the analytics queue on `connection` (which must have maxRetriesPerRequest null). */
export function analyticsWorker(store: Store, connection: Redis, logger: Logger): Worker<AnalyticsBatch> {
  // One job at a time: SQLite has one writer, and one batch is a single short transaction.
  const worker = jobWorker(ANALYTICS_QUEUE, analyticsProcessor(store), connection, logger, { concurrency: 1 });
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? ANALYTICS_ATTEMPTS);
    const records = (job.data.searches?.length ?? 0) + (job.data.recommendations?.length ?? 0) + (job.data.rags?.length ?? 0);
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
