/** Processor of the maintenance queue: purges of organizations and datasets flagged deleted. */
import fs from 'node:fs';
import path from 'node:path';
import type { Job } from 'bullmq';
import { isUuid } from '../../core/domain/ids.js';
import type { Logger } from 'pino';
import { Jobs, type PurgeJob } from '../../core/domain/queues.js';
import type { Store } from '../../store/repository.js';

/** Removes a purged dataset's shard snapshots (they are derived data; the store was the truth). */
function removeIndexFiles(dataDir: string, datasetId: string): void {
  if (!isUuid(datasetId)) return;
  fs.rmSync(path.join(dataDir, 'index', datasetId), { recursive: true, force: true });
}

/** Purges an organization's rows, then its datasets' index files (derived data, found before the rows go). */
async function purgeOrganization(store: Store, dataDir: string, id: string): Promise<void> {
  const datasets = await store.datasets.idsOfOrganization(id);
  await store.organizations.purge(id);
  for (const datasetId of datasets) removeIndexFiles(dataDir, datasetId);
}

/** Builds the processor. Purges are idempotent: purging an absent resource does nothing. */
export function maintenanceProcessor(store: Store, dataDir: string, logger: Logger) {
  return async (job: Job<PurgeJob>): Promise<void> => {
    switch (job.name) {
      case Jobs.purgeOrganization:
        await purgeOrganization(store, dataDir, job.data.id);
        break;
      case Jobs.purgeDataset:
        await store.datasets.purge(job.data.id);
        removeIndexFiles(dataDir, job.data.id);
        break;
      default:
        throw new Error(`unknown maintenance job ${job.name}`);
    }
    logger.info({ job: job.name, id: job.data.id }, 'purged');
  };
}

/** Purges everything flagged deleted (the sweep that makes lost jobs harmless). */
export async function sweepDeleted(store: Store, dataDir: string, logger: Logger): Promise<void> {
  for (const id of await store.datasets.listDeleted()) {
    await store.datasets.purge(id);
    removeIndexFiles(dataDir, id);
    logger.info({ dataset: id }, 'swept deleted dataset');
  }
  for (const id of await store.organizations.listDeleted()) {
    await purgeOrganization(store, dataDir, id);
    logger.info({ organization: id }, 'swept deleted organization');
  }
}
