/**
 * The filter rollups (issue 15, `popular_filters`): per (dataset, UTC hour or day, search type,
 * search method) and per filter use (clause, field, filter type: ./filter-uses.ts), how many
 * searches used it, and per value of a use how many searches named that value. A report over
 * months reads a few thousand rows instead of parsing the request params of millions of searches
 * (./reports/search-popular-filters.ts).
 *
 * A filter's row has a null `value`; a value's row names it. Both kinds share one table per
 * period, keyed by a hash of (clause, field, filter type[, value]) rather than by those texts: a
 * field name is free text (a search event's request params may hold one of 60 KB), past the size
 * of a PostgreSQL index entry. The hash is 132 bits of SHA-256, so no two uses or values of a
 * dataset share a key, even chosen ones.
 *
 * Both stores keep them in the transaction that inserts or deletes rows of `search_queries`
 * (./sqlite/filter-rollup.ts, ./postgres/filter-rollup.ts), from the request params of the rows
 * it actually touched: every row is the count of its key's stored searches, and a key with none
 * left has no row. Nothing else about a search (ratings, linked events) moves them. Every value
 * is a count, so each change is an upsert of a signed delta; keys are written in one order.
 */
import { createHash } from 'node:crypto';
import { usesOfParams } from './filter-uses.js';
import { DAY_MS, HOUR_MS, periodStart, type PeriodTable } from './search-rollup-batch.js';

/** One filter rollup table. */
export type FilterRollupTable = PeriodTable<'search_filter_rollup_hourly' | 'search_filter_rollup_daily'>;

/** The hourly filter rollup (whole hours of a range). */
export const FILTER_HOURLY: FilterRollupTable = { table: 'search_filter_rollup_hourly', column: 'hour', periodMs: HOUR_MS };
/** The daily filter rollup (whole days of a range). */
export const FILTER_DAILY: FilterRollupTable = { table: 'search_filter_rollup_daily', column: 'day', periodMs: DAY_MS };
/** Both filter rollup tables. */
export const FILTER_ROLLUP_TABLES: readonly FilterRollupTable[] = [FILTER_HOURLY, FILTER_DAILY];

/** The migration statement that creates `table` (integers as `integer`: SQLite's INTEGER, PostgreSQL's BIGINT). */
export const filterRollupTableSql = (table: FilterRollupTable, integer: 'INTEGER' | 'BIGINT'): string => `
  CREATE TABLE ${table.table} (
    dataset_id TEXT NOT NULL,
    ${table.column} ${integer} NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    key TEXT NOT NULL,
    clause TEXT NOT NULL,
    field TEXT NOT NULL,
    filter_type TEXT NOT NULL,
    value TEXT,
    searches ${integer} NOT NULL,
    PRIMARY KEY (dataset_id, ${table.column}, search_type, search_method, key)
  );`;

/** What the filter rollups need of a `search_queries` row, as stored. */
export interface FilteredSearch {
  readonly datasetId: string;
  readonly createdAt: number;
  readonly searchType: string;
  readonly searchMethod: string;
  /** The stored JSON text of its request params. */
  readonly requestParams: string;
}

/** What one batch adds to (or, negative, takes from) one rollup row. */
export interface FilterDelta {
  readonly datasetId: string;
  readonly start: number;
  readonly searchType: string;
  readonly searchMethod: string;
  readonly key: string;
  readonly clause: string;
  readonly field: string;
  readonly filterType: string;
  /** Null for the filter's own row. */
  readonly value: string | null;
  searches: number;
}

/** The stored key of a use (no value) or of one of its values. */
const rowKey = (parts: readonly string[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);

/** The rows aggregated per key of `table` (sign 1: inserted, -1: deleted), in key order; searches without filters add nothing. */
export function filterRollupDeltas(rows: readonly FilteredSearch[], table: FilterRollupTable, sign: 1 | -1): FilterDelta[] {
  const byKey = new Map<string, FilterDelta>();
  const keyOf = new Map<string, string>();
  const add = (r: FilteredSearch, start: number, parts: string[], value: string | null) => {
    const id = JSON.stringify(parts);
    const key = keyOf.get(id) ?? keyOf.set(id, rowKey(parts)).get(id)!;
    const at = JSON.stringify([r.datasetId, start, r.searchType, r.searchMethod, key]);
    const d = byKey.get(at);
    if (d) d.searches += sign;
    else byKey.set(at, { datasetId: r.datasetId, start, searchType: r.searchType, searchMethod: r.searchMethod, key, clause: parts[0]!, field: parts[1]!, filterType: parts[2]!, value, searches: sign });
  };
  for (const r of rows) {
    const uses = usesOfParams(r.requestParams);
    if (uses.length === 0) continue;
    const start = periodStart(Number(r.createdAt), table.periodMs);
    for (const u of uses) {
      add(r, start, [u.clause, u.field, u.filterType], null);
      for (const v of u.values) add(r, start, [u.clause, u.field, u.filterType, v], v);
    }
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/**
 * A fill (the migration's, the bench loader's) reads the stored searches an hour at a time (by the
 * created_at index), so that each step's deltas fold into few rows and its memory stays one hour
 * of searches: the statement that finds the next stored search at or after `$1`, and the one that
 * reads the searches of [`$1`, `$2`) whose request params can hold a `filters` member.
 */
export const FILL_SQL = {
  next: (p: (n: number) => string): string => `SELECT MIN(created_at) AS at FROM search_queries WHERE created_at >= ${p(1)}`,
  hour: (p: (n: number) => string): string =>
    `SELECT dataset_id AS "datasetId", created_at AS "createdAt", search_type AS "searchType", search_method AS "searchMethod", request_params AS "requestParams"
     FROM search_queries WHERE created_at >= ${p(1)} AND created_at < ${p(2)} AND request_params LIKE '%"filters"%'`,
};

/** Where a fill's next hour starts, given the first stored search at or after the last one's end (null: none left). */
export const fillHour = (at: unknown): number | null => (at === null || at === undefined ? null : Math.floor(Number(at) / HOUR_MS) * HOUR_MS);

/** Where a fill starts: before any epoch-ms time stamp. */
export const FILL_FROM = -Number.MAX_SAFE_INTEGER;
