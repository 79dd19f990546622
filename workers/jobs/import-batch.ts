/**
 * One batch of a file import written to the store: rows already validated into chunk inputs go in
 * through `FileRepository.commitBatch`, the write path of `POST /api/chunk` (change-log entries,
 * groups) and the file's progress in one transaction. Upsert replaces a chunk whose tracking id
 * exists; without it such rows are skipped. Rows of the batch that share a tracking id are folded
 * here first (the store takes distinct ones); a batch the store refuses whole for one row's sake
 * is written row by row there, so that the refused rows become row errors and the rest still go in.
 */
import type { FileBatchRow, FileProgress, RowError } from '../../core/domain/files.js';
import type { Store } from '../../store/repository.js';

/** A row ready to store: its 1-based row number and its chunk. */
export type PendingRow = FileBatchRow;

/** What a batch did. */
export interface BatchOutcome {
  readonly imported: number;
  readonly skipped: number;
  readonly errors: RowError[];
}

/**
 * Rows that write to the same tracking id: with upsert the last one wins (as if written in turn),
 * without it the first one does and the later ones are skipped.
 */
function dedupe(rows: readonly PendingRow[], upsert: boolean): { kept: PendingRow[]; dropped: number } {
  const byId = new Map<string, number>();
  const kept: (PendingRow | null)[] = [];
  let dropped = 0;
  for (const r of rows) {
    const id = r.input.trackingId ?? null;
    const at = id === null ? undefined : byId.get(id);
    if (at === undefined) {
      if (id !== null) byId.set(id, kept.length);
      kept.push(r);
    } else if (upsert) {
      kept[at] = null;
      byId.set(id!, kept.length);
      kept.push(r);
      dropped++;
    } else {
      dropped++;
    }
  }
  return { kept: kept.filter((r): r is PendingRow => r !== null), dropped };
}

/**
 * Commits the batch: its rows' chunks and the file's progress (`progress`, with the counts of the
 * rows) in one store transaction (`files.commitBatch`), so that a run killed before the commit
 * leaves no chunk of the batch behind to be counted as skipped when the batch is written again.
 * Store outages propagate (the job retries from its last committed cursor). Undefined when the
 * file is no longer processing (deleted, or finished by another worker): nothing was written.
 */
export async function writeBatch(
  store: Store,
  file: { readonly id: string; readonly datasetId: string },
  rows: readonly PendingRow[],
  upsert: boolean,
  progress: Omit<FileProgress, 'rowsImported' | 'rowsSkipped'>,
): Promise<BatchOutcome | undefined> {
  const { kept, dropped } = dedupe(rows, upsert);
  // With upsert a row overwritten by a later row of its batch still counts as imported (written,
  // then overwritten); without it, it is skipped like a row whose tracking id is stored already.
  const carried = { rowsImported: upsert ? dropped : 0, rowsSkipped: upsert ? 0 : dropped };
  const outcome = await store.files.commitBatch(file.id, file.datasetId, { rows: kept, upsert, progress: { ...progress, ...carried } });
  if (!outcome) return undefined;
  return { imported: outcome.imported + carried.rowsImported, skipped: outcome.skipped + carried.rowsSkipped, errors: [...outcome.errors] };
}
