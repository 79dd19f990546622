/**
 * After a write commits, the facade asks the core to apply the dataset's change log so the write
 * is searchable when the response goes out. The write is already durable: if the core is down,
 * it replays the log when it returns, so the request still succeeds.
 */
import type { Logger } from 'pino';
import { embedsDense, spladeSpec } from '../core/domain/dataset-config.js';
import { QuarryError } from '../core/domain/errors.js';
import type { DatasetRecord } from '../core/domain/tenancy.js';
import type { Services } from './context.js';

/** Makes the dataset's committed changes searchable (best effort when the core is unavailable). */
export async function indexNow(services: Services, datasetId: string, log: Logger): Promise<void> {
  try {
    await services.core.apply(datasetId);
  } catch (err) {
    if (err instanceof QuarryError && (err.code === 'unavailable' || err.code === 'timeout')) {
      log.warn({ dataset: datasetId, err: err.message }, 'core not reachable; the change will be indexed when it returns');
      return;
    }
    throw err;
  }
}

/** Drops a deleted dataset's shards from the core (best effort: the core also drops unknown datasets on use). */
export async function dropIndex(services: Services, datasetId: string, log: Logger): Promise<void> {
  await services.core.drop(datasetId).catch((err: unknown) => log.warn({ dataset: datasetId, err: (err as Error).message }, 'core drop failed'));
}

/** Background retries of a refused embed enqueue (0.5, 1, 2, 4 s) before the workers' sweep (every 15 s) is left to it. */
const ENQUEUE_RETRIES = 4;
/** Datasets with a background enqueue retry scheduled: one per dataset, however many writes fail. */
const retrying = new Set<string>();

/** Retries the enqueue in the background, so a Redis that just came back is used within a second. */
function retryEnqueue(services: Services, datasetId: string, attempt: number): void {
  const timer = setTimeout(() => {
    services.jobs.embedDataset(datasetId).then(
      () => retrying.delete(datasetId),
      () => {
        if (attempt + 1 < ENQUEUE_RETRIES) retryEnqueue(services, datasetId, attempt + 1);
        else retrying.delete(datasetId);
      },
    );
  }, 500 * 2 ** attempt);
  // Never keeps a stopping process alive: the chunks stay pending in the store for the sweep.
  timer.unref();
}

/**
 * Asks the job workers to embed the dataset's new or changed chunks, unless its configuration
 * needs no vectors (SEMANTIC_ENABLED false and no SPLADE encoder). Best effort: if Redis is
 * down the chunks stay pending in the store; the enqueue is retried in the background for a few
 * seconds (Redis restarting), then the workers' sweep enqueues them later.
 */
export async function embedSoon(services: Services, dataset: Pick<DatasetRecord, 'id' | 'serverConfiguration'>, log: Logger): Promise<void> {
  const cfg = dataset.serverConfiguration;
  if (!embedsDense(cfg) && spladeSpec(cfg) === null) return;
  const datasetId = dataset.id;
  try {
    await services.jobs.embedDataset(datasetId);
  } catch (err) {
    log.warn({ dataset: datasetId, err: (err as Error).message }, 'embed enqueue failed; retrying in the background, then the sweep will');
    if (retrying.has(datasetId)) return;
    retrying.add(datasetId);
    retryEnqueue(services, datasetId, 0);
  }
}
