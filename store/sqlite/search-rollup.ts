/**
 * SQLite's side of the search rollups (../search-rollup-batch.ts): searches inserted or deleted,
 * ratings replaced and user events linked to searches, applied to both rollup tables inside the
 * transaction that wrote them. SQLite's single writer makes each key's read-modify-write atomic.
 */
import type { QueryRating } from '../../core/domain/user-events.js';
import {
  countedFlags,
  countedPositions,
  countedRating,
  eventLink,
  LINK_FLAGS_SQL,
  linkDeltas,
  linksSearch,
  mergedValues,
  mergeRollup,
  QUERY_TOTALS,
  queryTotalDeltas,
  ratingDeltas,
  ROLLUP_TABLES,
  ROLLUP_VALUE_COLUMNS,
  rollupDeltas,
  type ClickPositions,
  type LinkChange,
  type LinkFlags,
  type LinkingEvent,
  type RatingChange,
  type RollupDelta,
  type RollupKey,
  type RollupTable,
  type StoredRollup,
  type UnratedSearch,
} from '../search-rollup-batch.js';
import { SEARCH_LINK } from '../event-rollup-batch.js';
import { QUERY_PERIOD_TABLES, queryPeriodDeltas } from '../search-query-periods.js';
import type { Db } from './database.js';
import { sqliteEventLinks } from './event-rollup.js';

/** The rollup writer of one connection; call each method inside the transaction that wrote the rows. */
export interface SqliteSearchRollup {
  /** Searches just inserted (`sign` 1) or deleted (-1), with the ratings and linked user events they have. */
  searches(rows: readonly UnratedSearch[], sign: 1 | -1): void;
  /** What storing `rating` changes for its search, read before it is stored (undefined: nothing). */
  ratingChange(rating: QueryRating): RatingChange | undefined;
  /** Rating changes, once the ratings are stored. */
  ratings(changes: readonly RatingChange[]): void;
  /** What storing user event `e` changes for the search it names, read before it is stored (undefined: nothing). */
  linkChange(e: LinkingEvent): LinkChange | undefined;
  /** Flag changes of the events that were stored. */
  links(changes: readonly LinkChange[]): void;
}

/** The rollup writer of `db`. */
export function sqliteSearchRollup(db: Db): SqliteSearchRollup {
  const tables = ROLLUP_TABLES.map((t) => {
    const key = `dataset_id = ? AND ${t.column} = ? AND search_type = ? AND search_method = ?`;
    return {
      t,
      get: db.prepare(`SELECT ${ROLLUP_VALUE_COLUMNS} FROM ${t.table} WHERE ${key}`),
      put: db.prepare(
        `INSERT OR REPLACE INTO ${t.table} (dataset_id, ${t.column}, search_type, search_method, ${ROLLUP_VALUE_COLUMNS})
         VALUES (?, ?, ?, ?, ${ROLLUP_VALUE_COLUMNS.split(', ')
           .map(() => '?')
           .join(', ')})`,
      ),
      drop: db.prepare(`DELETE FROM ${t.table} WHERE ${key}`),
    };
  });
  const ratingOf = db.prepare('SELECT kind, dataset_id AS datasetId, rating FROM query_ratings WHERE query_id = ?');
  const addTotal = db.prepare(
    `INSERT INTO ${QUERY_TOTALS} (dataset_id, query, searches) VALUES (?, ?, ?) ON CONFLICT (dataset_id, query) DO UPDATE SET searches = searches + excluded.searches`,
  );
  const dropEmptyTotal = db.prepare(`DELETE FROM ${QUERY_TOTALS} WHERE dataset_id = ? AND query = ? AND searches <= 0`);
  const queryPeriods = QUERY_PERIOD_TABLES.map((t) => ({
    t,
    add: db.prepare(
      `INSERT INTO ${t.table} (dataset_id, ${t.column}, query, searches) VALUES (?, ?, ?, ?)
       ON CONFLICT (dataset_id, query, ${t.column}) DO UPDATE SET searches = searches + excluded.searches`,
    ),
    dropEmpty: db.prepare(`DELETE FROM ${t.table} WHERE dataset_id = ? AND query = ? AND ${t.column} = ? AND searches <= 0`),
  }));
  // By the user_events_request index; a search without events (most of them) is one probe.
  const flagsOf = db.prepare(`${LINK_FLAGS_SQL} WHERE request_id = ? GROUP BY request_id, dataset_id`);
  const eventLinks = sqliteEventLinks(db);
  const searchOf = db.prepare('SELECT dataset_id AS datasetId, created_at AS createdAt, search_type AS searchType, search_method AS searchMethod FROM search_queries WHERE id = ?');

  const apply = (deltasOf: (t: RollupTable) => RollupDelta[]): void => {
    for (const { t, get, put, drop } of tables) {
      for (const d of deltasOf(t)) {
        const key = [d.datasetId, d.start, d.searchType, d.searchMethod];
        const merged = mergeRollup(get.get(...key) as StoredRollup | undefined, d);
        if (merged) put.run(...key, ...mergedValues(merged));
        else drop.run(...key);
      }
    }
  };

  type RatingRow = { kind: string; datasetId: string; rating: number };
  type FlagRow = { dataset_id: string; clicked: number; converted: number; positioned: number; position_sum: number | null };
  /** The flags and click positions the stored events naming `id` give a search of `datasetId`. */
  const linked = (id: string, datasetId: string): LinkFlags & ClickPositions => {
    const rows = flagsOf.all(id) as FlagRow[];
    return { ...countedFlags(rows, datasetId), ...countedPositions(rows, datasetId) };
  };
  return {
    searches(rows, sign) {
      if (rows.length === 0) return;
      const rated = rows.map((r) => ({ ...r, rating: countedRating(ratingOf.get(r.id) as RatingRow | undefined, r.datasetId), ...linked(r.id, r.datasetId) }));
      apply((t) => rollupDeltas(rated, t, sign));
      eventLinks(SEARCH_LINK, rows, sign);
      for (const d of queryTotalDeltas(rows, sign)) {
        addTotal.run(d.datasetId, d.query, d.searches);
        if (sign < 0) dropEmptyTotal.run(d.datasetId, d.query);
      }
      for (const { t, add, dropEmpty } of queryPeriods) {
        for (const d of queryPeriodDeltas(rows, t, sign)) {
          add.run(d.datasetId, d.start, d.query, d.searches);
          if (sign < 0) dropEmpty.run(d.datasetId, d.query, d.start);
        }
      }
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
    linkChange(e) {
      if (!linksSearch(e)) return undefined;
      const search = searchOf.get(e.requestId) as RollupKey | undefined;
      if (!search || search.datasetId !== e.datasetId) return undefined;
      const link = eventLink(linked(e.requestId!, e.datasetId), e);
      return link && { search, ...link };
    },
    links(changes) {
      if (changes.length > 0) apply((t) => linkDeltas(changes, t));
    },
  };
}
