/**
 * What both stores' `FileRepository.commitBatch` decide the same way: which refusal of a chunk
 * write is a row's fault (the row becomes a row error, the rest of the batch still goes in) and
 * which is the store's (the whole transaction is rolled back and the job retries), and the
 * progress a batch commits once its rows are written.
 */
import { QuarryError } from '../core/domain/errors.js';
import type { FileBatchOutcome, FileProgress, RowError } from '../core/domain/files.js';

/**
 * A refusal that is about the data (a group gone, text the store cannot hold, a tracking id
 * taken), not the store being unavailable or broken: the batch is written again row by row.
 */
export function refusedForData(err: unknown): err is QuarryError {
  return err instanceof QuarryError && err.code !== 'unavailable' && err.code !== 'timeout' && err.code !== 'internal';
}

/** The progress a batch commits: the caller's, with what writing its rows did added (errors in row order). */
export function batchProgress(progress: FileProgress, outcome: FileBatchOutcome): FileProgress {
  const errors: RowError[] = outcome.errors.length === 0 ? [...progress.errors] : [...progress.errors, ...outcome.errors].sort((a, b) => a.row - b.row);
  return {
    ...progress,
    rowsImported: progress.rowsImported + outcome.imported,
    rowsSkipped: progress.rowsSkipped + outcome.skipped,
    errors,
  };
}
