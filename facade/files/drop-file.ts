/** Deleting a file: its record and bytes, and on request its group with every chunk it made. */
import type { Logger } from 'pino';
import type { FileRecord } from '../../core/domain/files.js';
import type { Services } from '../context.js';
import { indexNow } from '../indexing.js';

/**
 * Deletes the record first, so that an import still running stops at its next commit (its
 * progress commit finds no record); with `deleteChunks` the file's group goes with its chunks in
 * one store transaction. A batch the import commits before that is a group member and goes with
 * it; one after finds the group gone and fails whole, so no chunk of the file is left behind.
 */
export async function dropChunksOfFile(services: Services, file: FileRecord, deleteChunks: boolean, log: Logger): Promise<void> {
  const { store, blobs } = services;
  await store.files.delete(file.datasetId, file.id);
  if (deleteChunks) {
    // Found by its tracking id, not the record's group id: the import may have made the group
    // after the record was read.
    const trackingId = file.importOptions?.groupTrackingId;
    const group = trackingId ? await store.groups.getByTrackingId(file.datasetId, trackingId) : undefined;
    if (group && group.fileId === file.id) {
      await store.groups.delete(file.datasetId, group.id, true);
      await indexNow(services, file.datasetId, log);
    }
  }
  await blobs.delete(file.blobKey).catch((err: unknown) => log.warn({ file: file.id, err: (err as Error).message }, 'could not delete the file bytes'));
}
