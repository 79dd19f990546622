/**
 * One batch of a file import written to the store: rows already validated into chunk inputs go in
 * through `ChunkRepository.createMany`, the write path of `POST /api/chunk` (one transaction, a
 * change-log entry per chunk). Upsert replaces a chunk whose tracking id exists; without it such
 * rows are skipped. A batch the store refuses whole for one row's sake is written row by row so
 * that the refused rows become row errors and the rest still go in.
 */
import type { ChunkInput } from '../../core/domain/chunk.js';
import { QuarryError } from '../../core/domain/errors.js';
import type { RowError } from '../../core/domain/files.js';
import type { Store } from '../../store/repository.js';

/** A row ready to store: its 1-based row number and its chunk. */
export interface PendingRow {
  readonly row: number;
  readonly input: ChunkInput;
}

/** What a batch did. */
export interface BatchOutcome {
  readonly imported: number;
  readonly skipped: number;
  readonly errors: RowError[];
}

/** A refusal that is about the data, not the store being unavailable: the batch is retried row by row. */
function refusedForData(err: unknown): err is QuarryError {
  return err instanceof QuarryError && err.code !== 'unavailable' && err.code !== 'timeout' && err.code !== 'internal';
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

/** Writes the batch; store outages propagate (the job retries from its last committed cursor). */
export async function writeBatch(store: Store, datasetId: string, rows: readonly PendingRow[], upsert: boolean): Promise<BatchOutcome> {
  const { kept, dropped } = dedupe(rows, upsert);
  // With upsert a row overwritten by a later row of its batch still counts as imported (written,
  // then overwritten); without it, it is skipped like a row whose tracking id is stored already.
  const carried = upsert ? dropped : 0;
  let toWrite = kept;
  let skipped = upsert ? 0 : dropped;
  if (!upsert) {
    const ids = kept.map((r) => r.input.trackingId).filter((id): id is string => typeof id === 'string');
    const existing = new Set((await store.chunks.getManyByTrackingIds(datasetId, ids)).map((c) => c.trackingId));
    toWrite = kept.filter((r) => !(r.input.trackingId && existing.has(r.input.trackingId)));
    skipped += kept.length - toWrite.length;
  }
  if (toWrite.length === 0) return { imported: carried, skipped, errors: [] };
  const flags = toWrite.map(() => upsert);
  try {
    await store.chunks.createMany(datasetId, toWrite.map((r) => r.input), flags);
    return { imported: toWrite.length + carried, skipped, errors: [] };
  } catch (err) {
    if (!refusedForData(err)) throw err;
  }
  // One row spoiled the batch: find it (them) by writing each row alone.
  const errors: RowError[] = [];
  let imported = carried;
  for (const r of toWrite) {
    try {
      await store.chunks.createMany(datasetId, [r.input], [upsert]);
      imported++;
    } catch (err) {
      if (!refusedForData(err)) throw err;
      errors.push({ row: r.row, reason: err.message });
    }
  }
  return { imported, skipped, errors };
}
