/**
 * The searches per (dataset, UTC hour or day, query text), `search_query_hourly` and
 * `search_query_daily`: `head_queries` over a date range (./reports/head-queries.ts) ranks the
 * query texts of the whole days and hours of the range from them instead of grouping every
 * search of the range (7 days at 10M events: ~370k searches, but a few thousand of these rows).
 *
 * Written beside the search rollups and the query totals (./search-rollup-batch.ts), by the same
 * statements (each store's `search-rollup.ts`: the analytics batch insert, counting only the rows
 * it stored, and the retention purge, from the rows it deleted), in their transaction; the dataset
 * purge deletes these rows with its searches. So each row is always the count of the stored
 * searches of its key, and a key with none left has no row. PostgreSQL keys and ranks the query
 * texts by their md5 and a prefix (./text-keys.ts).
 *
 * Why not one table keyed by day only: a range's partial edge days would then be read from the
 * raw searches, up to two days of them (~100k at 10M events); with hours, at most two partial
 * hours are.
 */
import { DAY_MS, HOUR_MS, periodStart, type PeriodTable } from './search-rollup-batch.js';

/** One query count table. */
export type QueryPeriodTable = PeriodTable<'search_query_hourly' | 'search_query_daily'>;

/** Searches per (dataset, hour, query). */
export const QUERY_HOURLY: QueryPeriodTable = { table: 'search_query_hourly', column: 'hour', periodMs: HOUR_MS };
/** Searches per (dataset, day, query). */
export const QUERY_DAILY: QueryPeriodTable = { table: 'search_query_daily', column: 'day', periodMs: DAY_MS };
/** Both query count tables. */
export const QUERY_PERIOD_TABLES: readonly QueryPeriodTable[] = [QUERY_HOURLY, QUERY_DAILY];

/** What one batch adds to (or, negative, takes from) one row of a query count table. */
export interface QueryPeriodDelta {
  readonly datasetId: string;
  readonly start: number;
  readonly query: string;
  searches: number;
}

/** The rows counted per key of `table` (sign 1: inserted, -1: deleted), in key order, so every writer touches keys in the same order. */
export function queryPeriodDeltas(
  rows: readonly { datasetId: string; createdAt: number; query: string }[],
  table: QueryPeriodTable,
  sign: 1 | -1,
): QueryPeriodDelta[] {
  const byKey = new Map<string, QueryPeriodDelta>();
  for (const r of rows) {
    const start = periodStart(r.createdAt, table.periodMs);
    const key = JSON.stringify([r.datasetId, start, r.query]);
    const d = byKey.get(key) ?? byKey.set(key, { datasetId: r.datasetId, start, query: r.query, searches: 0 }).get(key)!;
    d.searches += sign;
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The migration statement that fills `table` from the searches already stored. */
export function queryPeriodBackfillSql(table: QueryPeriodTable): string {
  const p = table.periodMs;
  return `INSERT INTO ${table.table} (dataset_id, ${table.column}, query, searches)
  SELECT dataset_id, (created_at / ${p}) * ${p}, query, COUNT(*) FROM search_queries GROUP BY dataset_id, (created_at / ${p}) * ${p}, query;`;
}

