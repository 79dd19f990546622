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
import { ANALYTICS_ATTEMPTS, ANALYTICS_PAYLOAD_FIELD, ANALYTICS_QUEUE, completeRecords, isBatchRef, type AnalyticsBatch, type AnalyticsJobData } from '../../core/domain/analytics.js';
import type { Store } from '../../store/repository.js';
import { jobWorker } from './job-worker.js';
import { analyticsGroup, recordsOf, type GroupOptions, type StoredCounts } from './analytics-group.js';

/** Default group commit: batches wait up to 250 ms (QUARRY_ANALYTICS_GROUP_MS) for company, 16 at most (the worker's concurrency). */
export const GROUP_DEFAULTS: GroupOptions = Object.freeze({ lingerMs: 250, maxBatches: 16, maxRecords: 4096 });

/**
 * Pauses before each further look for a payload that is not in the job's hash yet (the facade
 * sets it right after adding the job, so a worker may take the job first), in ms; then the job
 * fails and BullMQ retries it.
 */
const PAYLOAD_WAITS_MS = [2, 10, 40, 150, 400];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A job's batch: its data (jobs of earlier releases), or the JSON in its hash. */
async function batchOf(job: Job<AnalyticsJobData>, connection: Redis): Promise<AnalyticsBatch> {
  const data = job.data;
  if (!isBatchRef(data)) return data;
  const key = `${job.queueQualifiedName}:${job.id}`;
  for (let attempt = 0; ; attempt++) {
    const bytes = await connection.hgetBuffer(key, ANALYTICS_PAYLOAD_FIELD);
    if (bytes) return JSON.parse(bytes.toString('utf8')) as AnalyticsBatch;
    const wait = PAYLOAD_WAITS_MS[attempt];
    if (wait === undefined) throw new Error(`the records of analytics batch ${data.id} are not in its job (field ${ANALYTICS_PAYLOAD_FIELD} of ${key}) yet`);
    await sleep(wait);
  }
}

/** What a flush job stored: the records the store added, and those it could not take (see {@link completeRecords}). */
export interface FlushResult extends StoredCounts {
  readonly incomplete: number;
}

/**
 * Builds the processor: each job's batch is stored in a group with the batches active beside it.
 * Records that lack a field the store requires are left out and logged as a warning with their
 * ids (the stores would skip them silently); the rest of the batch is stored.
 */
export function analyticsProcessor(store: Store, connection: Redis, logger: Logger, options: GroupOptions = GROUP_DEFAULTS) {
  const group = analyticsGroup(store.analytics, options);
  return async (job: Job<AnalyticsJobData>): Promise<FlushResult> => {
    const { batch, incomplete } = completeRecords(await batchOf(job, connection));
    if (incomplete.length > 0) {
      logger.warn({ batch: job.id, incomplete: incomplete.length, records: incomplete.slice(0, 20) }, 'analytics records without a required field were not stored');
    }
    return { ...(await group(batch)), incomplete: incomplete.length };
  };
}

/** Starts the worker of the analytics queue on `connection` (which must have maxRetriesPerRequest null). */
export function analyticsWorker(store: Store, connection: Redis, logger: Logger, options: GroupOptions = GROUP_DEFAULTS): Worker<AnalyticsJobData> {
  // As many jobs active as a group may hold: they are stored together, one transaction per kind.
  const worker = jobWorker(ANALYTICS_QUEUE, analyticsProcessor(store, connection, logger, options), connection, logger, { concurrency: options.maxBatches });
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? ANALYTICS_ATTEMPTS);
    const records = isBatchRef(job.data) ? job.data.records : recordsOf(job.data);
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
