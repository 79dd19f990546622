/**
 * SQLite's side of the filter rollups (../filter-rollup-batch.ts): searches inserted or deleted,
 * applied to both tables inside the transaction that wrote them, and the fill from the searches
 * already stored.
 */
import { FILL_FROM, FILL_SQL, fillHour, FILTER_ROLLUP_TABLES, filterRollupDeltas, type FilteredSearch } from '../filter-rollup-batch.js';
import { HOUR_MS } from '../search-rollup-batch.js';
import type { Db } from './database.js';

/** Applies searches just inserted (`sign` 1) or deleted (-1) to the filter rollups of `db`; call it inside the transaction that wrote them. */
export type SqliteFilterRollup = (rows: readonly FilteredSearch[], sign: 1 | -1) => void;

/** The filter rollup writer of `db`. */
export function sqliteFilterRollup(db: Db): SqliteFilterRollup {
  const tables = FILTER_ROLLUP_TABLES.map((t) => ({
    t,
    add: db.prepare(
      `INSERT INTO ${t.table} (dataset_id, ${t.column}, search_type, search_method, key, clause, field, filter_type, value, searches) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (dataset_id, ${t.column}, search_type, search_method, key) DO UPDATE SET searches = searches + excluded.searches`,
    ),
    dropEmpty: db.prepare(`DELETE FROM ${t.table} WHERE dataset_id = ? AND ${t.column} = ? AND search_type = ? AND search_method = ? AND key = ? AND searches <= 0`),
  }));
  return (rows, sign) => {
    if (rows.length === 0) return;
    for (const { t, add, dropEmpty } of tables) {
      for (const d of filterRollupDeltas(rows, t, sign)) {
        const key = [d.datasetId, d.start, d.searchType, d.searchMethod, d.key];
        add.run(...key, d.clause, d.field, d.filterType, d.value, d.searches);
        if (sign < 0) dropEmpty.run(...key);
      }
    }
  };
}

/**
 * Fills the filter rollups of `db` from the searches already stored (their JSON is parsed by
 * ../filter-uses.ts, which SQL cannot match on both engines), an hour at a time; run it inside
 * the migration's transaction, on empty tables.
 */
export function fillSqliteFilterRollup(db: Db): void {
  const next = db.prepare(FILL_SQL.next(() => '?'));
  const hour = db.prepare(FILL_SQL.hour(() => '?'));
  const apply = sqliteFilterRollup(db);
  for (let start = fillHour((next.get(FILL_FROM) as { at: unknown }).at); start !== null; start = fillHour((next.get(start + HOUR_MS) as { at: unknown }).at)) {
    apply(hour.all(start, start + HOUR_MS) as FilteredSearch[], 1);
  }
}
