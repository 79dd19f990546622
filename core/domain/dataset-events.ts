/**
 * The dataset (worker) events quarry records (`POST /api/dataset/events`), and how the reference's
 * event type names read against them: clients written for the reference filter by its names.
 */
import { FILE_EVENTS } from './files.js';

/** Every event type quarry records. */
export const DATASET_EVENT_TYPES = [
  'chunks_embedded',
  'chunks_sparse_encoded',
  'embedding_failed',
  'chunks_bulk_deleted',
  'bulk_delete_failed',
  FILE_EVENTS.started,
  FILE_EVENTS.finished,
  FILE_EVENTS.failed,
] as const;

/** One of {@link DATASET_EVENT_TYPES}. */
export type DatasetEventType = (typeof DATASET_EVENT_TYPES)[number];

/**
 * The reference's event types (its `EventTypeRequest`), each with the quarry event that records
 * the same happening, or null for one quarry never records (crawls, videos, ETL, per-chunk
 * updates): such a filter matches no event, as on a reference dataset where it never happened.
 * Quarry records one start, one end and one failure per import of any file, where the reference
 * names a document's (`file_uploaded`) and a CSV/JSONL file's (`csv_jsonl_processing_*`) apart.
 */
export const REFERENCE_EVENT_TYPES: Readonly<Record<string, DatasetEventType | null>> = {
  file_uploaded: FILE_EVENTS.finished,
  file_upload_failed: FILE_EVENTS.failed,
  chunks_uploaded: null,
  chunk_action_failed: null,
  chunk_updated: null,
  bulk_chunks_deleted: 'chunks_bulk_deleted',
  chunk_update_failed: null,
  dataset_delete_failed: null,
  qdrant_upload_failed: null,
  bulk_chunk_upload_failed: null,
  group_chunks_updated: null,
  group_chunks_action_failed: null,
  crawl_completed: null,
  crawl_failed: null,
  crawl_started: null,
  csv_jsonl_processing_failed: FILE_EVENTS.failed,
  csv_jsonl_processing_checkpoint: null,
  csv_jsonl_processing_completed: FILE_EVENTS.finished,
  video_uploaded: null,
  pagefind_indexing_started: null,
  pagefind_indexing_finished: null,
  etl_started: null,
  etl_completed: null,
  etl_failed: null,
};

/**
 * The stored event types a filter of `asked` names selects (quarry's own as given, the
 * reference's through {@link REFERENCE_EVENT_TYPES}), and the names that are neither.
 */
export function storedEventTypes(asked: readonly string[]): { readonly types: DatasetEventType[]; readonly unknown: string[] } {
  const types = new Set<DatasetEventType>();
  const unknown: string[] = [];
  for (const name of asked) {
    if ((DATASET_EVENT_TYPES as readonly string[]).includes(name)) types.add(name as DatasetEventType);
    else if (Object.hasOwn(REFERENCE_EVENT_TYPES, name)) {
      const ours = REFERENCE_EVENT_TYPES[name];
      if (ours) types.add(ours);
    } else unknown.push(name);
  }
  return { types: [...types], unknown };
}
