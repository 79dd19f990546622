/**
 * Purges of deleted datasets and organizations in bounded slices.
 *
 * One transaction over a whole dataset (7.2 s for 200,000 chunks) blocked the purging process's
 * event loop (BullMQ lock renewals, other tenants' jobs) and held SQLite's one write lock, so the
 * other processes' writes waited out the busy timeout and failed with SQLITE_BUSY. Here each
 * transaction deletes a bounded slice of one table (its row count adapted to take ~50 ms), and the
 * event loop (and the write lock) is free between slices.
 *
 * Order and resumability: every slice first checks, inside its transaction, that the dataset is
 * still purgeable (flagged deleted, or of an organization flagged deleted, or already gone), so
 * nothing of a live dataset is ever touched. The dataset's own row is deleted last, once nothing
 * references it: while it exists the purge is unfinished, the dataset stays flagged and invisible,
 * and the job's retry or the workers' sweep finishes it (each slice only deletes what is left).
 * An organization's row goes after all of its datasets, for the same reason.
 */
import type { Db } from './database.js';

/**
 * Rows deleted per transaction at first (and by a dataset clear). A chunk's vectors and group
 * memberships go with it by cascade: a slice of 1000 chunks with small vectors took ~65 ms on 2
 * loaded cores, which is the longest another writer then waits.
 */
export const PURGE_SLICE_ROWS = 1000;
/** Bounds of the adapted slice: large vectors make a chunk costlier, bare log rows cheaper. */
const MIN_SLICE_ROWS = 50;
const MAX_SLICE_ROWS = 8000;
/** What one slice should take, in ms: the slice halves above it and doubles below half of it. */
const SLICE_TARGET_MS = 50;

/** Tables holding a dataset's rows, in the order they are purged (chunks first: their cascades are the bulk). */
const DATASET_TABLES = [
  // Cascades to chunk_vectors, chunk_sparse_vectors and chunk_group_members.
  'chunks',
  // Cascades to the remaining chunk_group_members.
  'chunk_groups',
  'change_log',
  'dataset_events',
  // Messages before their topics: a topic's delete would cascade to all its messages in one slice.
  'messages',
  'topics',
  'files',
  // Analytics rows have no foreign key (a batch flushed after its dataset went must still insert).
  'search_queries',
  // The search rollups go with the searches they aggregate (../search-rollup-batch.ts).
  'search_rollup_hourly',
  'search_rollup_daily',
  'search_query_totals',
  // The filter rollups too (../filter-rollup-batch.ts).
  'search_filter_rollup_hourly',
  'search_filter_rollup_daily',
  'search_query_hourly',
  'search_query_daily',
  'recommendation_queries',
  'rag_queries',
  // The record rollups go with the answers, recommendations and events they aggregate (../record-rollup-batch.ts).
  'record_rollup_hourly',
  'record_rollup_daily',
  'record_event_rollup_hourly',
  'record_event_rollup_daily',
  'rag_message_totals',
  // The per-user rollups go with the records they count, then the user ordinals they hold (../user-rollup-batch.ts).
  'user_rollup_hourly',
  'user_rollup_daily',
  'analytics_users',
  'rag_followup_totals',
  'rag_followup_type_totals',
  'user_events',
  // The user event rollups go with the events they aggregate (../event-rollup-batch.ts).
  'user_event_rollup_hourly',
  'user_event_rollup_daily',
  'query_ratings',
  // Assignments before their experiments: an experiment's delete would cascade to all of them in one slice.
  'experiment_assignments',
  'experiments',
] as const;

/**
 * The pause after a slice that took `sliceMs`: as long as the slice (at most SLICE_TARGET_MS).
 * It lets the rest of the process run, and other connections take the write lock. A writer that
 * found the lock taken sleeps in SQLite's busy handler (1, 2, 5, ... then 100 ms between tries);
 * with no gap between slices it kept waking while the next slice held the lock (a write waited
 * over a second beside a 40,000-chunk clear), while a gap as long as the slice is free for about
 * half of any sleep. The purge or clear takes up to twice as long; it runs in the background.
 */
export function pauseAfterSlice(sliceMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(sliceMs, 1), SLICE_TARGET_MS)));
}

/** Sliced purges over one connection. */
export interface Purger {
  /**
   * Deletes every row of a dataset that is flagged deleted (or belongs to an organization flagged
   * deleted), its own row last. Returns false, having touched nothing, when the dataset is live.
   */
  dataset(id: string): Promise<boolean>;
  /** Purges every dataset of a flagged organization, then its row (memberships and keys by cascade). */
  organization(id: string): Promise<boolean>;
}

/** Builds the purger of `db`. */
export function sqlitePurger(db: Db): Purger {
  const state = db.prepare(
    'SELECT d.deleted AS dataset_deleted, o.deleted AS org_deleted FROM datasets d JOIN organizations o ON o.id = d.organization_id WHERE d.id = ?',
  );
  // rowid (change_log: seq, its rowid) keeps each slice an index range scan on (dataset_id, ...).
  const slices = DATASET_TABLES.map((table) =>
    db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE dataset_id = ? LIMIT ?)`),
  );
  const leftovers = db.prepare(
    `SELECT ${DATASET_TABLES.map((t) => `EXISTS (SELECT 1 FROM ${t} WHERE dataset_id = @id)`).join(' OR ')} AS left`,
  );
  const deleteDataset = db.prepare('DELETE FROM datasets WHERE id = ?');
  const orgDeleted = db.prepare('SELECT deleted FROM organizations WHERE id = ?');
  const orgDatasets = db.prepare('SELECT id FROM datasets WHERE organization_id = ? ORDER BY id');
  const deleteOrg = db.prepare('DELETE FROM organizations WHERE id = ? AND deleted = 1 AND NOT EXISTS (SELECT 1 FROM datasets WHERE organization_id = ?)');

  /** Whether the dataset may be purged: flagged, its organization flagged, or its row already gone. */
  const purgeable = (id: string): boolean => {
    const row = state.get(id) as { dataset_deleted: number; org_deleted: number } | undefined;
    return !row || row.dataset_deleted === 1 || row.org_deleted === 1;
  };

  /** One slice of one table; -1 when the dataset is live. */
  const slice = db.transaction((id: string, table: number, rows: number): number => {
    if (!purgeable(id)) return -1;
    return slices[table]!.run(id, rows).changes;
  });

  /**
   * Deletes the dataset's row if nothing references it any more; 'again' when a write that
   * raced the purge left rows behind (they are purged in slices too, not here).
   */
  const finish = db.transaction((id: string): 'live' | 'again' | 'done' => {
    if (!purgeable(id)) return 'live';
    if ((leftovers.get({ id }) as { left: number }).left) return 'again';
    deleteDataset.run(id);
    return 'done';
  });

  const dataset = async (id: string): Promise<boolean> => {
    for (;;) {
      for (let t = 0; t < DATASET_TABLES.length; t++) {
        // Rows per slice adapt to what a row of this table costs here, so a slice takes about the
        // target time whatever the vector size or the machine's load.
        let rows = PURGE_SLICE_ROWS;
        for (;;) {
          const started = performance.now();
          const n = slice.immediate(id, t, rows);
          if (n < 0) return false;
          const ms = performance.now() - started;
          await pauseAfterSlice(ms);
          if (n < rows) break;
          if (ms > SLICE_TARGET_MS) rows = Math.max(MIN_SLICE_ROWS, rows >> 1);
          else if (ms < SLICE_TARGET_MS / 2) rows = Math.min(MAX_SLICE_ROWS, rows * 2);
        }
      }
      const outcome = finish.immediate(id);
      if (outcome !== 'again') return outcome === 'done';
    }
  };

  return {
    dataset,
    async organization(id) {
      const flagged = (orgDeleted.get(id) as { deleted: number } | undefined)?.deleted === 1;
      if (!flagged) return false;
      for (const { id: datasetId } of orgDatasets.all(id) as { id: string }[]) await dataset(datasetId);
      // A dataset created while the purge ran (the flag had not reached that request yet) keeps the row: the sweep retries.
      return deleteOrg.run(id, id).changes === 1;
    },
  };
}
