/**
 * Bulk delete jobs (DELETE /api/chunk with a filter): the chunks matching the filter, as the
 * core's filters define matching (the same as search), are listed in id order through the core's
 * scroll and deleted through the store's delete path (one transaction per batch, a change-log
 * entry per chunk), then the core applies the log so search follows. Only chunks created at or
 * before the request are deleted. Idempotent: a retried job finds only what is still there.
 */
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CoreClient } from '../../core/client/core-client.js';
import { QuarryError } from '../../core/domain/errors.js';
import { BULK_DELETE_ATTEMPTS, Queues, type BulkDeleteJob } from '../../core/domain/queues.js';
import type { Store } from '../../store/repository.js';
import { jobWorker } from './job-worker.js';

/** Ids listed and deleted per batch (one core scroll, one store transaction, one apply). */
const BATCH = 1000;

/** Lists and deletes the matching chunks batch by batch; returns how many were deleted. */
async function deleteMatching(store: Store, core: CoreClient, job: Job<BulkDeleteJob>): Promise<number> {
  const { datasetId, filter, requestedAt } = job.data;
  // Writes committed before the request must be in the index the filter is evaluated on.
  await core.apply(datasetId);
  let deleted = 0;
  let from = '';
  for (;;) {
    // One id past the batch: where the next batch starts (the scroll's offset is inclusive).
    const ids = await core.scroll({ dataset_id: datasetId, filter, offset_chunk_id: from, limit: BATCH + 1 });
    const batch = ids.slice(0, BATCH);
    if (batch.length > 0) {
      deleted += await store.chunks.deleteMany(datasetId, batch, requestedAt);
      await core.apply(datasetId);
      await job.updateProgress({ deleted });
    }
    if (ids.length <= BATCH) return deleted;
    from = ids[BATCH]!;
  }
}

/** Builds the processor; returns how many chunks were deleted. */
export function bulkDeleteProcessor(store: Store, core: CoreClient, logger: Logger) {
  return async (job: Job<BulkDeleteJob>): Promise<{ deleted: number }> => {
    const { datasetId } = job.data;
    if (!(await store.datasets.get(datasetId))) return { deleted: 0 };
    let deleted: number;
    try {
      deleted = await deleteMatching(store, core, job);
    } catch (err) {
      // A dataset deleted meanwhile has nothing left to delete; anything else is retried.
      if (err instanceof QuarryError && err.code === 'not_found' && !(await store.datasets.get(datasetId))) return { deleted: 0 };
      throw err;
    }
    await store.events.add(datasetId, 'chunks_bulk_deleted', { count: deleted });
    logger.info({ dataset: datasetId, deleted }, 'bulk delete done');
    return { deleted };
  };
}

/** Starts the worker of the bulk delete queue on `connection` (which must have maxRetriesPerRequest null). */
export function bulkDeleteWorker(store: Store, core: CoreClient, connection: Redis, logger: Logger): Worker<BulkDeleteJob> {
  // One job at a time: SQLite has one writer.
  const worker = jobWorker(Queues.bulkDelete, bulkDeleteProcessor(store, core, logger), connection, logger, { concurrency: 1 });
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? BULK_DELETE_ATTEMPTS);
    logger.error({ dataset: job.data.datasetId, attempt: job.attemptsMade, last, err: err.message }, 'bulk delete failed');
    if (last) void store.events.add(job.data.datasetId, 'bulk_delete_failed', { error: err.message, attempts: job.attemptsMade }).catch(() => {});
  });
  return worker;
}
