/**
 * After a write commits, the facade asks the core to apply the dataset's change log so the write
 * is searchable when the response goes out. The write is already durable: if the core is down,
 * it replays the log when it returns, so the request still succeeds.
 */
import type { Logger } from 'pino';
import { QuarryError } from '../core/domain/errors.js';
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

/**
 * Asks the job workers to embed the dataset's new or changed chunks. Best effort: if Redis is
 * down the chunks stay pending in the store and the workers' sweep enqueues them later.
 */
export async function embedSoon(services: Services, datasetId: string, log: Logger): Promise<void> {
  await services.jobs.embedDataset(datasetId).catch((err: unknown) => log.warn({ dataset: datasetId, err: (err as Error).message }, 'embed enqueue failed; the sweep will retry'));
}
