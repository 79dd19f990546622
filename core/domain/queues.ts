/** Every BullMQ queue, job and Redis key name of quarry, in one place. */
import type { Filter } from './filter.js';

/** Queue names. */
export const Queues = {
  /** Deferred deletions of organizations and datasets. */
  maintenance: 'quarry-maintenance',
  /** Embedding of chunks whose dense vector is missing or outdated, one job per dataset. */
  embed: 'quarry-embed',
  /** Deletions of the chunks matching a filter (DELETE /api/chunk), one job per request. */
  bulkDelete: 'quarry-bulk-delete',
  /** CSV/JSONL imports and document splits, one job per file (see core/domain/files.ts). */
  fileImport: 'quarry-file-import',
} as const;

/** Job names per queue. */
export const Jobs = {
  purgeOrganization: 'purge-organization',
  purgeDataset: 'purge-dataset',
  embedDataset: 'embed-dataset',
  bulkDeleteChunks: 'bulk-delete-chunks',
  importFile: 'import-file',
} as const;

/**
 * Payload of embed jobs: the worker embeds whatever the dataset has pending. A job runs in turns
 * (see workers/jobs/embed.ts); the counts carry the earlier turns' totals to the event recorded
 * when the dataset is done.
 */
export interface EmbedJob {
  readonly datasetId: string;
  /** Dense vectors stored by this job's earlier turns. */
  readonly embedded?: number;
  /** SPLADE vectors stored by this job's earlier turns. */
  readonly encoded?: number;
}

/** The job id that keeps at most one waiting embed job per dataset. */
export const embedJobId = (datasetId: string): string => `embed-${datasetId}`;

/** Attempts of an embed job before it is dead-lettered (kept in BullMQ's failed set and reported as a dataset event). */
export const EMBED_ATTEMPTS = 5;

/** Payload of purge jobs. */
export interface PurgeJob {
  readonly id: string;
}

/** Attempts of a bulk delete job, 1 s apart doubling (~17 min in all: a core restart is waited out); each attempt resumes, what it deleted being gone. */
export const BULK_DELETE_ATTEMPTS = 10;

/**
 * Payload of bulk delete jobs: the chunks of the dataset matching the filter (the filter AST, as
 * the core takes it) and created at or before `requestedAt` (ms since the epoch, the time of the
 * request: chunks written after it are not the caller's target, as the reference guards it).
 */
export interface BulkDeleteJob {
  readonly datasetId: string;
  readonly filter: Filter;
  readonly requestedAt: number;
}

/** Attempts of a file import job, 1 s apart doubling; every attempt resumes at the file's committed cursor. */
export const FILE_IMPORT_ATTEMPTS = 8;
