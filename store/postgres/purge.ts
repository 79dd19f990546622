/**
 * Purges of deleted datasets and organizations in bounded slices, as ../sqlite/purge.ts does and
 * for the same reasons: each transaction deletes a bounded slice of one table (its row count
 * adapted to take ~50 ms), so no transaction holds locks or a connection for long, and the event
 * loop is free between slices.
 *
 * Order and resumability are those of the SQLite purger: every slice re-checks, inside its
 * transaction, that the dataset is still purgeable, and the dataset's row goes last. SQLite's
 * single writer made that check and the delete after it atomic; here the check locks the rows it
 * reads (FOR SHARE), so an organization cannot be un-flagged between them, and each transaction
 * takes the dataset's write lock first, so it is serialized with every change-log writer of the
 * dataset and with a second purge of it (a job's retry beside the workers' sweep).
 */
import { pauseAfterSlice, PURGE_SLICE_ROWS, type Purger } from '../sqlite/purge.js';
import type { PgDb, Tx } from './database.js';

export type { Purger } from '../sqlite/purge.js';

/** Bounds of the adapted slice, as in ../sqlite/purge.ts. */
const MIN_SLICE_ROWS = 50;
const MAX_SLICE_ROWS = 8000;
/** What one slice should take, in ms: the slice halves above it and doubles below half of it. */
const SLICE_TARGET_MS = 50;

/**
 * Tables holding a dataset's rows with their primary key, in the order they are purged (those of
 * ../sqlite/purge.ts; PostgreSQL has no rowid, so slices go by primary key).
 */
const DATASET_TABLES = [
  // Cascades to chunk_vectors, chunk_sparse_vectors and chunk_group_members.
  { table: 'chunks', key: 'id' },
  // Cascades to the remaining chunk_group_members.
  { table: 'chunk_groups', key: 'id' },
  { table: 'change_log', key: 'seq' },
  { table: 'dataset_events', key: 'id' },
  // Messages before their topics: a topic's delete would cascade to all its messages in one slice.
  { table: 'messages', key: 'id' },
  { table: 'topics', key: 'id' },
  { table: 'files', key: 'id' },
  // Analytics rows have no foreign key (a batch flushed after its dataset went must still insert).
  { table: 'search_queries', key: 'id' },
  // The search rollups go with the searches they aggregate; their key is composite, a slice goes by row address.
  { table: 'search_rollup_hourly', key: 'ctid' },
  { table: 'search_rollup_daily', key: 'ctid' },
  { table: 'search_query_totals', key: 'ctid' },
  // The filter rollups too (../filter-rollup-batch.ts).
  { table: 'search_filter_rollup_hourly', key: 'ctid' },
  { table: 'search_filter_rollup_daily', key: 'ctid' },
  { table: 'search_query_hourly', key: 'ctid' },
  { table: 'search_query_daily', key: 'ctid' },
  { table: 'recommendation_queries', key: 'id' },
  { table: 'rag_queries', key: 'id' },
  // The record rollups go with the answers, recommendations and events they aggregate (composite key: by row address).
  { table: 'record_rollup_hourly', key: 'ctid' },
  { table: 'record_rollup_daily', key: 'ctid' },
  { table: 'record_event_rollup_hourly', key: 'ctid' },
  { table: 'record_event_rollup_daily', key: 'ctid' },
  { table: 'rag_message_totals', key: 'ctid' },
  // The per-user rollups go with the records they count, then the user ordinals they hold (composite keys: by row address).
  { table: 'user_rollup_hourly', key: 'ctid' },
  { table: 'user_rollup_daily', key: 'ctid' },
  { table: 'analytics_users', key: 'ctid' },
  { table: 'rag_followup_totals', key: 'ctid' },
  { table: 'rag_followup_type_totals', key: 'ctid' },
  { table: 'user_events', key: 'id' },
  // The user event rollups go with the events they aggregate (composite key: by row address).
  { table: 'user_event_rollup_hourly', key: 'ctid' },
  { table: 'user_event_rollup_daily', key: 'ctid' },
  { table: 'query_ratings', key: 'query_id' },
  // Assignments before their experiments: an experiment's delete would cascade to all of them in one slice.
  { table: 'experiment_assignments', key: 'id' },
  { table: 'experiments', key: 'id' },
] as const;

/** Builds the purger of `db`. */
export function pgPurger(db: PgDb): Purger {
  // FOR SHARE: an organization un-flagged meanwhile waits for this transaction, then the next
  // slice sees it live. The dataset's own flag is never cleared, but locking both is no dearer.
  const stateSql = (lock: string) =>
    `SELECT d.deleted AS dataset_deleted, o.deleted AS org_deleted FROM datasets d JOIN organizations o ON o.id = d.organization_id WHERE d.id = $1 ${lock}`;
  const sliceSql = DATASET_TABLES.map(
    ({ table, key }) => `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE dataset_id = $1 LIMIT $2)`,
  );
  const leftoversSql = `SELECT ${DATASET_TABLES.map(({ table }) => `EXISTS (SELECT 1 FROM ${table} WHERE dataset_id = $1)`).join(' OR ')} AS left`;

  /** Whether the dataset may be purged: flagged, its organization flagged, or its row already gone. */
  const purgeable = async (tx: Tx, id: string, lock: string): Promise<boolean> => {
    const row = await tx.get<{ dataset_deleted: number; org_deleted: number }>(stateSql(lock), [id]);
    return !row || row.dataset_deleted === 1 || row.org_deleted === 1;
  };

  /** One slice of one table; -1 when the dataset is live. */
  const slice = (id: string, table: number, rows: number): Promise<number> =>
    db.tx(async (tx) => {
      await tx.lockDataset(id);
      if (!(await purgeable(tx, id, 'FOR SHARE'))) return -1;
      return tx.run(sliceSql[table]!, [id, rows]);
    });

  /**
   * Deletes the dataset's row if nothing references it any more; 'again' when a write that
   * raced the purge left rows behind (they are purged in slices too, not here).
   */
  const finish = (id: string): Promise<'live' | 'again' | 'done'> =>
    db.tx(async (tx) => {
      await tx.lockDataset(id);
      // The row it deletes is locked for update at once: a share lock upgraded later could deadlock.
      if (!(await purgeable(tx, id, 'FOR UPDATE OF d FOR SHARE OF o'))) return 'live';
      if ((await tx.get<{ left: boolean }>(leftoversSql, [id]))!.left) return 'again';
      await tx.run('DELETE FROM datasets WHERE id = $1', [id]);
      return 'done';
    });

  const dataset = async (id: string): Promise<boolean> => {
    for (;;) {
      for (let t = 0; t < DATASET_TABLES.length; t++) {
        // Rows per slice adapt to what a row of this table costs here, as in the SQLite purger.
        let rows = PURGE_SLICE_ROWS;
        for (;;) {
          const started = performance.now();
          const n = await slice(id, t, rows);
          if (n < 0) return false;
          const ms = performance.now() - started;
          await pauseAfterSlice(ms);
          if (n < rows) break;
          if (ms > SLICE_TARGET_MS) rows = Math.max(MIN_SLICE_ROWS, rows >> 1);
          else if (ms < SLICE_TARGET_MS / 2) rows = Math.min(MAX_SLICE_ROWS, rows * 2);
        }
      }
      const outcome = await finish(id);
      if (outcome !== 'again') return outcome === 'done';
    }
  };

  return {
    dataset,
    async organization(id) {
      const flagged = (await db.get<{ deleted: number }>('SELECT deleted FROM organizations WHERE id = $1', [id]))?.deleted === 1;
      if (!flagged) return false;
      for (const { id: datasetId } of await db.all<{ id: string }>('SELECT id FROM datasets WHERE organization_id = $1 ORDER BY id', [id])) {
        await dataset(datasetId);
      }
      // The row is locked before datasets are counted: a dataset being created in it commits first
      // and is counted (its foreign-key check holds a lock this waits for), or waits and then fails
      // on the missing organization, instead of being deleted by cascade with its other rows left.
      // A dataset created while the purge ran keeps the row, as in SQLite: the sweep retries.
      return db.tx(async (tx) => {
        const row = await tx.get<{ deleted: number }>('SELECT deleted FROM organizations WHERE id = $1 FOR UPDATE', [id]);
        if (row?.deleted !== 1) return false;
        if (await tx.get('SELECT 1 FROM datasets WHERE organization_id = $1 LIMIT 1', [id])) return false;
        return (await tx.run('DELETE FROM organizations WHERE id = $1', [id])) === 1;
      });
    },
  };
}
