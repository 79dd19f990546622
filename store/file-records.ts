/**
 * The `files` table's columns, its row ↔ {@link FileRecord} conversion, and the records a file
 * write makes, shared by both stores: they keep the same columns and value types (JSON as text,
 * epoch ms integers), so the same call stores the same row and answers the same record on each.
 */
import { MAX_STORED_ROW_ERRORS, type FileProgress, type FileRecord, type FileStatus, type NewFile } from '../core/domain/files.js';
import { fromJson, toJson } from './rows.js';

/** Every column of `files`, in the order {@link fileRowValues} gives their values. */
export const FILE_COLUMNS = [
  'id',
  'dataset_id',
  'file_name',
  'kind',
  'status',
  'description',
  'link',
  'metadata',
  'tag_set',
  'time_stamp',
  'size',
  'blob_key',
  'content_type',
  'group_id',
  'import_options',
  'split_options',
  'rows_done',
  'rows_total',
  'rows_imported',
  'rows_skipped',
  'bytes_done',
  'errors',
  'error_count',
  'failure',
  'cursor',
  'created_at',
  'updated_at',
] as const;

/** {@link FILE_COLUMNS} as a select list. */
export const FILE_COLUMN_LIST = FILE_COLUMNS.join(', ');

/** What a transition may set beside the status (see `FileRepository.transition`). */
export interface FileTransitionPatch {
  readonly size?: number;
  readonly groupId?: string;
  readonly rowsTotal?: number;
  readonly failure?: string | null;
}

type Row = Record<string, any>;

/** A `files` row as a record. */
export function fileFromRow(r: Row): FileRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    fileName: r.file_name,
    kind: r.kind,
    status: r.status,
    description: r.description,
    link: r.link,
    metadata: fromJson(r.metadata, null),
    tagSet: fromJson(r.tag_set, []),
    timeStamp: r.time_stamp,
    size: r.size,
    blobKey: r.blob_key,
    contentType: r.content_type,
    groupId: r.group_id,
    importOptions: fromJson(r.import_options, null),
    splitOptions: fromJson(r.split_options, null),
    rowsDone: r.rows_done,
    rowsTotal: r.rows_total,
    rowsImported: r.rows_imported,
    rowsSkipped: r.rows_skipped,
    bytesDone: r.bytes_done,
    errors: fromJson(r.errors, []),
    errorCount: r.error_count,
    failure: r.failure,
    cursor: fromJson(r.cursor, null),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** A record's column values, in {@link FILE_COLUMNS} order. */
export function fileRowValues(f: FileRecord): unknown[] {
  return [
    f.id,
    f.datasetId,
    f.fileName,
    f.kind,
    f.status,
    f.description,
    f.link,
    toJson(f.metadata),
    JSON.stringify(f.tagSet),
    f.timeStamp,
    f.size,
    f.blobKey,
    f.contentType,
    f.groupId,
    toJson(f.importOptions),
    toJson(f.splitOptions),
    f.rowsDone,
    f.rowsTotal,
    f.rowsImported,
    f.rowsSkipped,
    f.bytesDone,
    JSON.stringify(f.errors),
    f.errorCount,
    f.failure,
    toJson(f.cursor),
    f.createdAt,
    f.updatedAt,
  ];
}

/** The record of a new file: nothing read or imported yet. */
export function newFileRecord(input: NewFile, now: number): FileRecord {
  return {
    id: input.id,
    datasetId: input.datasetId,
    fileName: input.fileName,
    kind: input.kind,
    status: input.status,
    description: input.description,
    link: input.link,
    // Read back from JSON text, so the record answered equals the one read later.
    metadata: input.metadata ?? null,
    tagSet: [...input.tagSet],
    timeStamp: input.timeStamp,
    size: input.size,
    blobKey: input.blobKey,
    contentType: input.contentType,
    groupId: null,
    importOptions: input.importOptions,
    splitOptions: input.splitOptions,
    rowsDone: 0,
    rowsTotal: null,
    rowsImported: 0,
    rowsSkipped: 0,
    bytesDone: 0,
    errors: [],
    errorCount: 0,
    failure: null,
    cursor: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A file moved to `status` with the patch's fields set (absent fields keep theirs); updated_at never goes back. */
export function transitionedFile(current: FileRecord, status: FileStatus, patch: FileTransitionPatch, now: number): FileRecord {
  return {
    ...current,
    status,
    size: patch.size ?? current.size,
    groupId: patch.groupId ?? current.groupId,
    rowsTotal: patch.rowsTotal ?? current.rowsTotal,
    failure: patch.failure === undefined ? current.failure : patch.failure,
    updatedAt: Math.max(now, current.updatedAt),
  };
}

/**
 * A file after one batch's progress: counts added, the cursor replaced, the batch's errors kept
 * while fewer than {@link MAX_STORED_ROW_ERRORS} are stored (so the stored ones are always the
 * file's first errors, in row order) and all of them counted.
 */
export function progressedFile(current: FileRecord, progress: FileProgress, now: number): FileRecord {
  const room = Math.max(0, MAX_STORED_ROW_ERRORS - current.errors.length);
  return {
    ...current,
    cursor: progress.cursor,
    rowsDone: current.rowsDone + progress.rowsDone,
    rowsImported: current.rowsImported + progress.rowsImported,
    rowsSkipped: current.rowsSkipped + progress.rowsSkipped,
    bytesDone: current.bytesDone + progress.bytesDone,
    errors: room > 0 && progress.errors.length > 0 ? [...current.errors, ...progress.errors.slice(0, room)] : current.errors,
    errorCount: current.errorCount + progress.errors.length,
    updatedAt: Math.max(now, current.updatedAt),
  };
}

/**
 * The statement of `FileRepository.rowsToCome` with the dataset id as `param` (`?` or `$1`):
 * SQLite reads DOUBLE PRECISION as REAL, PostgreSQL as float8, so both divide in floating point.
 */
export function rowsToComeSql(param: string): string {
  return `SELECT COALESCE(SUM(CAST(size - bytes_done AS DOUBLE PRECISION) * rows_done / bytes_done), 0) AS n
    FROM files WHERE dataset_id = ${param} AND status = 'processing' AND bytes_done > 0 AND rows_done > 0 AND size > bytes_done`;
}
