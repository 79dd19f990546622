/**
 * Processor of the maintenance queue: purges of organizations and datasets flagged deleted.
 *
 * Order, always: index files (and uploaded files) first, then the rows in slices (`store/sqlite/purge.ts`), the flagged
 * row itself last. The flagged row is what the workers' sweep finds, so while it exists a purge
 * cut short (a killed job, a failed slice) is retried and finished; the index files go before it
 * because nothing could find them once the row is gone. So a dataset or organization whose row is
 * gone has no index files left either.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Job } from 'bullmq';
import type { BlobStore } from '../../core/blob/blob-store.js';
import { datasetBlobPrefix } from '../../core/domain/files.js';
import { isUuid } from '../../core/domain/ids.js';
import type { Logger } from 'pino';
import { Jobs, type PurgeJob } from '../../core/domain/queues.js';
import type { Store } from '../../store/repository.js';

/** Where a purge removes a dataset's files: its index snapshots under the data dir, and its uploaded files. */
export interface PurgeFiles {
  readonly dataDir: string;
  readonly blobs: Pick<BlobStore, 'deleteAll'>;
}

/** Removes a purged dataset's shard snapshots (derived data; the store was the truth) and its uploaded files. */
async function removeIndexFiles(files: PurgeFiles, datasetId: string): Promise<void> {
  if (!isUuid(datasetId)) return;
  fs.rmSync(path.join(files.dataDir, 'index', datasetId), { recursive: true, force: true });
  await files.blobs.deleteAll(datasetBlobPrefix(datasetId));
}

/** Purges a flagged dataset: its index files, then its rows. False when it is live (nothing done) or not finished. */
async function purgeDataset(store: Store, files: PurgeFiles, id: string): Promise<boolean> {
  // A live dataset keeps its files (a stray job must not remove them); the store re-checks per slice.
  if (await store.datasets.get(id)) return false;
  await removeIndexFiles(files, id);
  return store.datasets.purge(id);
}

/** Purges a flagged organization: its datasets' index files, then its rows. False when it is live or not finished. */
async function purgeOrganization(store: Store, files: PurgeFiles, id: string): Promise<boolean> {
  if (!(await store.organizations.get(id, true))?.deleted) return false;
  for (const datasetId of await store.datasets.idsOfOrganization(id)) await removeIndexFiles(files, datasetId);
  return store.organizations.purge(id);
}

/** Builds the processor. Purges are idempotent: purging an absent resource does nothing. */
export function maintenanceProcessor(store: Store, files: PurgeFiles, logger: Logger) {
  return async (job: Job<PurgeJob>): Promise<void> => {
    let done: boolean;
    switch (job.name) {
      case Jobs.purgeOrganization:
        done = await purgeOrganization(store, files, job.data.id);
        break;
      case Jobs.purgeDataset:
        done = await purgeDataset(store, files, job.data.id);
        break;
      default:
        throw new Error(`unknown maintenance job ${job.name}`);
    }
    logger.info({ job: job.name, id: job.data.id, done }, done ? 'purged' : 'nothing purged (live, or left for the sweep)');
  };
}

/** Purges everything flagged deleted (the sweep that makes lost jobs and purges cut short harmless). */
export async function sweepDeleted(store: Store, files: PurgeFiles, logger: Logger): Promise<void> {
  for (const id of await store.datasets.listDeleted()) {
    if (await purgeDataset(store, files, id)) logger.info({ dataset: id }, 'swept deleted dataset');
  }
  for (const id of await store.organizations.listDeleted()) {
    if (await purgeOrganization(store, files, id)) logger.info({ organization: id }, 'swept deleted organization');
  }
}
