/**
 * SQLite's side of the search rollups (../search-rollup-batch.ts): searches inserted or deleted,
 * and ratings replaced, applied to both rollup tables inside the transaction that wrote them.
 * SQLite's single writer makes each key's read-modify-write atomic.
 */
import type { QueryRating } from '../../core/domain/user-events.js';
import {
  countedRating,
  mergeRollup,
  ratingDeltas,
  ROLLUP_TABLES,
  rollupDeltas,
  type RatingChange,
  type RollupDelta,
  type RollupKey,
  type RollupTable,
  type StoredRollup,
  type UnratedSearch,
} from '../search-rollup-batch.js';
import type { Db } from './database.js';

/** The rollup writer of one connection; call each method inside the transaction that wrote the rows. */
export interface SqliteSearchRollup {
  /** Searches just inserted (`sign` 1) or deleted (-1), with the ratings they have. */
  searches(rows: readonly UnratedSearch[], sign: 1 | -1): void;
  /** What storing `rating` changes for its search, read before it is stored (undefined: nothing). */
  ratingChange(rating: QueryRating): RatingChange | undefined;
  /** Rating changes, once the ratings are stored. */
  ratings(changes: readonly RatingChange[]): void;
}

/** The rollup writer of `db`. */
export function sqliteSearchRollup(db: Db): SqliteSearchRollup {
  const tables = ROLLUP_TABLES.map((t) => {
    const key = `dataset_id = ? AND ${t.column} = ? AND search_type = ? AND search_method = ?`;
    return {
      t,
      get: db.prepare(`SELECT searches, latency_sum, latency_histogram, rated, positive, negative FROM ${t.table} WHERE ${key}`),
      put: db.prepare(
        `INSERT OR REPLACE INTO ${t.table} (dataset_id, ${t.column}, search_type, search_method, searches, latency_sum, latency_histogram, rated, positive, negative)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      drop: db.prepare(`DELETE FROM ${t.table} WHERE ${key}`),
    };
  });
  const ratingOf = db.prepare('SELECT kind, dataset_id AS datasetId, rating FROM query_ratings WHERE query_id = ?');
  const searchOf = db.prepare('SELECT dataset_id AS datasetId, created_at AS createdAt, search_type AS searchType, search_method AS searchMethod FROM search_queries WHERE id = ?');

  const apply = (deltasOf: (t: RollupTable) => RollupDelta[]): void => {
    for (const { t, get, put, drop } of tables) {
      for (const d of deltasOf(t)) {
        const key = [d.datasetId, d.start, d.searchType, d.searchMethod];
        const merged = mergeRollup(get.get(...key) as StoredRollup | undefined, d);
        if (merged) put.run(...key, merged.searches, merged.latencySum, merged.histogram, merged.rated, merged.positive, merged.negative);
        else drop.run(...key);
      }
    }
  };

  type RatingRow = { kind: string; datasetId: string; rating: number };
  return {
    searches(rows, sign) {
      if (rows.length === 0) return;
      const rated = rows.map((r) => ({ ...r, rating: countedRating(ratingOf.get(r.id) as RatingRow | undefined, r.datasetId) }));
      apply((t) => rollupDeltas(rated, t, sign));
    },
    ratingChange(rating) {
      const search = searchOf.get(rating.queryId) as RollupKey | undefined;
      if (!search) return undefined;
      const before = countedRating(ratingOf.get(rating.queryId) as RatingRow | undefined, search.datasetId);
      const after = countedRating(rating, search.datasetId);
      return before === after ? undefined : { search, before, after };
    },
    ratings(changes) {
      if (changes.length > 0) apply((t) => ratingDeltas(changes, t));
    },
  };
}
