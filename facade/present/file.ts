/** Files on the wire: the reference's File metadata, and the progress of its import. */
import type { FileRecord } from '../../core/domain/files.js';
import { formatOptionalTimestamp, formatTimestamp } from '../../core/domain/time.js';
import { withFields } from '../../core/domain/with-fields.js';

/** File metadata `{id, file_name, created_at, updated_at, size, metadata, link, time_stamp, dataset_id, tag_set}` (tag_set comma separated, as the reference). */
export function fileMetadata(f: FileRecord): Record<string, unknown> {
  return {
    id: f.id,
    file_name: f.fileName,
    created_at: formatTimestamp(f.createdAt),
    updated_at: formatTimestamp(f.updatedAt),
    size: f.size,
    metadata: f.metadata ?? null,
    link: f.link,
    time_stamp: formatOptionalTimestamp(f.timeStamp),
    dataset_id: f.datasetId,
    tag_set: f.tagSet.length > 0 ? f.tagSet.join(',') : null,
  };
}

/**
 * `GET /api/file/{id}`: the metadata, the download URL (`s3_url`, the reference's name, whatever
 * the blob store) and where the import stands: status, rows done of the total (null until the end
 * is read), bytes, the row errors kept (row numbers 1-based) and their count, and the group.
 */
export function fileWithProgress(f: FileRecord, downloadUrl: string | null): Record<string, unknown> {
  return withFields(fileMetadata(f), {
    s3_url: downloadUrl,
    status: f.status,
    kind: f.kind,
    group_id: f.groupId,
    rows_done: f.rowsDone,
    rows_total: f.rowsTotal,
    rows_imported: f.rowsImported,
    rows_skipped: f.rowsSkipped,
    bytes_done: f.bytesDone,
    errors: f.errors.map((e) => ({ row: e.row, reason: e.reason })),
    error_count: f.errorCount,
    failure: f.failure,
  });
}
