/**
 * How SQLite reads a page of searches sorted by latency or top score over a date range. Two plans:
 * walk the sort index ((dataset_id, latency) or (dataset_id, top_score, id)) from its end, skipping
 * the searches outside the range, until the page is full; or read the range by (dataset_id,
 * created_at) and sort what matches. The walk reads about (offset + limit) / share rows, share being
 * the part of the dataset's searches that match; the range read reads all of the range's searches.
 * SQLite's planner guesses a range's size (without STAT4, a quarter of the rows) and read and sorted
 * every search of a 7-day range of 90 (~0.8 s at 10M events) where the walk reads ~150; for a range
 * of an hour the walk would read thousands of rows for one. The search rollups count both exactly
 * for a filter of date range, search type and method, and clicks (./search-rollup.ts), so they choose.
 */
import type { ReportWindow } from './report-rows.js';
import type { ReportSql } from './report-sql.js';
import type { SearchAnalyticsFilter } from './search-filter.js';
import { rollupBuckets } from './search-rollup.js';

/** A row walked in the sort index costs a lookup of the search in random order; a row of the range read comes in the table's order. */
const WALK_COST = 4;

/** The sort columns that have an index, and its name. */
const SORT_INDEXES: Readonly<Record<string, string>> = { latency: 'search_queries_latency', top_score: 'search_queries_top_score' };

/** The searches of the dataset matching `filter` (and the click condition), counted from the rollups. */
async function counted(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter, hasClicks: boolean | undefined): Promise<number> {
  const buckets = await rollupBuckets(sql, datasetId, filter, 'month', hasClicks === undefined ? [] : ['clicked']);
  return buckets.reduce((n, b) => n + (hasClicks === undefined ? b.n : hasClicks ? b.clicked : b.n - b.clicked), 0);
}

/**
 * The index a page of the dataset's searches matching `filter` (and the click condition), sorted by
 * `sortBy`, should be read by on SQLite, or undefined to leave the choice to the planner: on
 * PostgreSQL, without a date range (the walk), with a sort that has no index, or with a condition
 * the rollups cannot count (query text, rating, component, or a top score bound under another sort).
 */
export async function listingIndex(
  sql: ReportSql,
  datasetId: string,
  filter: SearchAnalyticsFilter,
  sortBy: string,
  page: ReportWindow,
  hasClicks?: boolean,
): Promise<string | undefined> {
  const index = SORT_INDEXES[sortBy];
  if (sql.dialect !== 'sqlite' || index === undefined || filter.dateRange === undefined) return undefined;
  if (filter.query !== undefined || filter.queryRating !== undefined || filter.componentName !== undefined) return undefined;
  if (filter.topScore !== undefined && sortBy !== 'top_score') return undefined;
  const kinds = { searchType: filter.searchType, searchMethod: filter.searchMethod };
  const [matching, inRange, all] = await Promise.all([
    counted(sql, datasetId, { ...kinds, dateRange: filter.dateRange }, hasClicks),
    counted(sql, datasetId, { dateRange: filter.dateRange }, undefined),
    counted(sql, datasetId, {}, undefined),
  ]);
  if (matching === 0) return 'search_queries_dataset';
  const walked = ((page.offset + page.limit) * all) / matching;
  return walked * WALK_COST < inRange ? index : 'search_queries_dataset';
}
