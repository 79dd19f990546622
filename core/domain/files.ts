/**
 * Files: CSV/JSONL imports through a presigned upload and documents split into chunks. One module
 * so that the facade (routes), the job workers (the import), the store (the `files` table) and the
 * blob stores agree on one shape.
 *
 * The life of a CSV/JSONL file: `POST /api/file/csv_or_jsonl` stores a record in `awaiting_upload`,
 * enqueues its import job (delayed) and answers a presigned PUT URL; the job starts when the upload
 * completes (the embedded blob route promotes it at once; with S3 it finds the object by polling)
 * and moves the file to `processing`. A document arrives with its bytes and starts `queued`. The
 * job commits rows in batches, each batch's chunks and the file's cursor and counts in one store
 * transaction ({@link FileBatch}), so a worker killed mid-file resumes at the last committed
 * cursor, finds none of the rows after it stored, and counts each row once (no row lost, none
 * duplicated, none counted as skipped for having been written by the killed run).
 */
import type { ChunkInput } from './chunk.js';

/** What a file holds, chosen by its extension. */
export type FileKind = 'csv' | 'jsonl' | 'document';

/** Where a file is in its life. */
export type FileStatus = 'awaiting_upload' | 'queued' | 'processing' | 'done' | 'failed';

/** The chunk fields a CSV column or JSONL key can be mapped to (`ChunkReqPayloadFields`). */
export const MAPPING_TARGETS = [
  'link',
  'tag_set',
  'num_value',
  'tracking_id',
  'group_tracking_ids',
  'time_stamp',
  'lat',
  'lon',
  'image_urls',
  'weight',
  'boost_phrase',
] as const;

/** One mapping target. */
export type MappingTarget = (typeof MAPPING_TARGETS)[number];

/** One mapping of the request: a column (CSV header name or JSONL key) to a chunk field. */
export interface ColumnMapping {
  readonly csvJsonlField: string;
  readonly chunkReqPayloadField: MappingTarget;
}

/** How a file's rows become chunks: the request's fields, validated. */
export interface RowImportOptions {
  /** Joined into every row's tag set, before the row's mapped tags. */
  readonly tagSet: readonly string[];
  readonly link: string | null;
  /** Epoch ms given to every chunk (a mapped `time_stamp` column wins). */
  readonly timeStamp: number | null;
  /** Tracking id of the file's group; rows get `<groupTrackingId>|<row index>` unless mapped. */
  readonly groupTrackingId: string;
  /** True (default): a row whose tracking id exists replaces that chunk; false: such rows are skipped. */
  readonly upsertByTrackingId: boolean;
  readonly mappings: readonly ColumnMapping[];
  readonly fulltextBoostFactor: number | null;
  readonly semanticBoostFactor: number | null;
}

/** How a document is split into chunks. */
export interface DocumentSplitOptions {
  /** Target chunk size in characters. */
  readonly targetChars: number;
  /** Characters shared by consecutive chunks. */
  readonly overlapChars: number;
}

/** One row that could not be imported. */
export interface RowError {
  /** 1-based row number: CSV data rows after the header, JSONL lines. */
  readonly row: number;
  readonly reason: string;
}

/**
 * Where an import stands, committed with each batch: the next row to read starts at `byteOffset`
 * of the blob and has 0-based index `rowIndex`. A CSV's header is kept so that reading can restart
 * mid-file.
 */
export interface ImportCursor {
  readonly byteOffset: number;
  readonly rowIndex: number;
  readonly header: readonly string[] | null;
}

/** The stored record of a file. */
export interface FileRecord {
  readonly id: string;
  readonly datasetId: string;
  readonly fileName: string;
  readonly kind: FileKind;
  readonly status: FileStatus;
  readonly description: string;
  readonly link: string | null;
  readonly metadata: unknown;
  readonly tagSet: readonly string[];
  readonly timeStamp: number | null;
  /** Bytes uploaded (0 until the upload completes). */
  readonly size: number;
  /** Key of the uploaded bytes in the blob store. */
  readonly blobKey: string;
  /** MIME type of a document (`text/plain`, `text/markdown`, `text/html`, `application/pdf`); null for CSV/JSONL. */
  readonly contentType: string | null;
  /** The group the file's chunks join; null until the import creates it. */
  readonly groupId: string | null;
  /** How rows become chunks (a document's chunks use its tags, link, time stamp and group tracking id). */
  readonly importOptions: RowImportOptions | null;
  /** Document split options; null for CSV/JSONL. */
  readonly splitOptions: DocumentSplitOptions | null;
  /** Rows (or document chunks) committed so far: imported, skipped or failed. */
  readonly rowsDone: number;
  /** Rows of the file; null until the import has read to its end. */
  readonly rowsTotal: number | null;
  /** Rows stored as chunks (created or updated). */
  readonly rowsImported: number;
  /** Rows skipped because their tracking id existed (`upsert_by_tracking_id: false`). */
  readonly rowsSkipped: number;
  /** Bytes of the blob read through the last committed batch. */
  readonly bytesDone: number;
  /** The first {@link MAX_STORED_ROW_ERRORS} row errors, in row order. */
  readonly errors: readonly RowError[];
  /** Every row error, counted. */
  readonly errorCount: number;
  /** Why the whole file failed (status `failed`); null otherwise. */
  readonly failure: string | null;
  readonly cursor: ImportCursor | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A new file record, as the route builds it: the record's own fields, before any progress. */
export type NewFile = Pick<
  FileRecord,
  | 'id'
  | 'datasetId'
  | 'fileName'
  | 'kind'
  | 'status'
  | 'description'
  | 'link'
  | 'metadata'
  | 'tagSet'
  | 'timeStamp'
  | 'size'
  | 'blobKey'
  | 'contentType'
  | 'importOptions'
  | 'splitOptions'
>;

/** One batch's progress, committed with its chunks (FileBatch): counts are added, the cursor replaced. */
export interface FileProgress {
  readonly cursor: ImportCursor;
  readonly rowsDone: number;
  readonly rowsImported: number;
  readonly rowsSkipped: number;
  readonly bytesDone: number;
  /** Errors of this batch's rows (appended while fewer than MAX_STORED_ROW_ERRORS are stored; all counted). */
  readonly errors: readonly RowError[];
}

/** A row of a {@link FileBatch}: its 1-based row number (for its error) and its validated chunk. */
export interface FileBatchRow {
  readonly row: number;
  readonly input: ChunkInput;
}

/**
 * One batch of an import, committed whole: its rows' chunks and the file's progress in one
 * transaction, so the stored chunks and the committed cursor never disagree (a run that dies
 * before the commit leaves neither; the next run writes the batch again as if for the first time).
 */
export interface FileBatch {
  /** Rows to store, with distinct tracking ids (the caller folds repeats within the batch). */
  readonly rows: readonly FileBatchRow[];
  /** True: a row whose tracking id is stored replaces that chunk; false: it is skipped and counted skipped. */
  readonly upsert: boolean;
  /**
   * The rest of the batch's progress: the cursor after it, its rows done and bytes, the errors
   * met reading it, and the rows the caller counted itself (repeats it folded). The store adds
   * what writing `rows` did before committing it.
   */
  readonly progress: FileProgress;
}

/** What writing a {@link FileBatch}'s rows did (beyond the counts the caller gave). */
export interface FileBatchOutcome {
  /** Rows stored (created or replaced). */
  readonly imported: number;
  /** Rows skipped because their tracking id was stored (`upsert` false). */
  readonly skipped: number;
  /** Rows the store refused (a group gone, text it cannot hold), in row order. */
  readonly errors: readonly RowError[];
}

/** Row errors kept on a file record; the rest are counted only. */
export const MAX_STORED_ROW_ERRORS = 1000;

/** Payload of file import jobs: one job per file. */
export interface FileImportJob {
  readonly fileId: string;
  readonly datasetId: string;
}

/** The job id that keeps one import job per file. */
export const fileImportJobId = (fileId: string): string => `file-${fileId}`;

/** The blob folder of a dataset's files (removed whole when the dataset is purged). */
export const datasetBlobPrefix = (datasetId: string): string => `datasets/${datasetId}`;

/** The blob key of a file's bytes. */
export const fileBlobKey = (datasetId: string, fileId: string): string => `${datasetBlobPrefix(datasetId)}/files/${fileId}`;

/** The file id of a key {@link fileBlobKey} made, or undefined for any other key. */
export const fileIdOfBlobKey = (key: string): string | undefined => /^datasets\/[0-9a-f-]{36}\/files\/([0-9a-f-]{36})$/.exec(key)?.[1];

/** Dataset event types the import records. */
export const FILE_EVENTS = {
  started: 'file_import_started',
  finished: 'file_import_finished',
  failed: 'file_import_failed',
} as const;
