/**
 * The search reports that list searches themselves (`SearchQueryEvent`s): low-confidence, no-result
 * and filtered/sorted listings, and one search by id. Each search comes with its latest rating.
 */
import type { SearchKind, SearchRecord } from '../../core/domain/analytics.js';
import { fromJson, storedJson } from '../rows.js';
import { clickCondition } from './linked-events.js';
import { listingIndex } from './listing-plan.js';
import { RATING_COLUMNS, ratingFromRow, type ReportRating, type ReportWindow } from './report-rows.js';
import { pageAcrossTies } from './tie-pages.js';
import type { ReportSql } from './report-sql.js';
import { RATING_JOIN, searchSelection, type SearchAnalyticsFilter } from './search-filter.js';

/** A search's rating as reports show it. */
export type SearchRating = ReportRating;

/** A search record with its latest rating (null when unrated). */
export interface RatedSearch {
  readonly search: SearchRecord;
  readonly rating: SearchRating | null;
}

export type { ReportWindow } from './report-rows.js';

/** Columns `sort_by` of `search_queries` may name. */
export const SEARCH_SORT_COLUMNS = ['created_at', 'latency', 'top_score'] as const;

/** One of {@link SEARCH_SORT_COLUMNS}. */
export type SearchSortColumn = (typeof SEARCH_SORT_COLUMNS)[number];

const COLUMNS = `q.id, q.dataset_id, q.search_type, q.search_method, q.query, q.request_params, q.latency, q.top_score, q.results,
  q.result_count, q.user_id, q.metadata, q.created_at, ${RATING_COLUMNS}`;

type Row = Record<string, any>;

function ratedFromRow(r: Row): RatedSearch {
  return {
    search: {
      id: r.id,
      datasetId: r.dataset_id,
      kind: r.search_type as SearchKind,
      searchMethod: r.search_method,
      query: r.query,
      requestParams: fromJson(r.request_params, null),
      latencyMs: r.latency,
      topScore: r.top_score,
      results: fromJson(r.results, []),
      resultCount: r.result_count,
      userId: r.user_id,
      metadata: fromJson(r.metadata, null),
      createdAt: r.created_at,
    },
    rating: ratingFromRow(r, storedJson),
  };
}

/** What {@link listSearches} lists. */
export interface SearchListing {
  readonly filter: SearchAnalyticsFilter;
  readonly page: ReportWindow;
  /** Extra conditions on `q`: SQL with `?` placeholders, then their values. */
  readonly conditions?: readonly (readonly [string, ...unknown[]])[];
  /** The sort column of `q`; ties are always broken by id ascending. */
  readonly sortBy: SearchSortColumn;
  readonly sortOrder: 'asc' | 'desc';
  /** The index SQLite reads `q` by (./listing-plan.ts); none: the planner's choice. */
  readonly index?: string;
}

/** One page of the dataset's searches matching a listing, read without sorting a block of ties (./tie-pages.ts). */
export async function listSearches(sql: ReportSql, datasetId: string, listing: SearchListing): Promise<RatedSearch[]> {
  const { where } = searchSelection(sql.dialect, datasetId, listing.filter);
  for (const [condition, ...values] of listing.conditions ?? []) where.add(condition, ...values);
  const rows = await pageAcrossTies(sql, {
    columns: COLUMNS,
    from: `search_queries q ${listing.index === undefined ? '' : `INDEXED BY ${listing.index}`} ${RATING_JOIN}`,
    where: { sql: where.sql(), params: where.params },
    sortBy: listing.sortBy,
    sortOrder: listing.sortOrder,
    page: listing.page,
  });
  return rows.map(ratedFromRow);
}

/** `low_confidence_queries`: searches below `threshold` (all when absent), lowest top score first. */
export async function lowConfidenceQueries(
  sql: ReportSql,
  datasetId: string,
  req: { filter: SearchAnalyticsFilter; page: ReportWindow; threshold?: number },
): Promise<RatedSearch[]> {
  const conditions = req.threshold === undefined ? [] : [['q.top_score < ?', req.threshold] as const];
  const index = await listingIndex(sql, datasetId, req.filter, 'top_score', req.page);
  return listSearches(sql, datasetId, { filter: req.filter, page: req.page, conditions, sortBy: 'top_score', sortOrder: 'asc', index });
}

/** `no_result_queries`: searches that found nothing, newest first. */
export function noResultQueries(sql: ReportSql, datasetId: string, req: { filter: SearchAnalyticsFilter; page: ReportWindow }): Promise<RatedSearch[]> {
  return listSearches(sql, datasetId, { filter: req.filter, page: req.page, conditions: [['q.result_count = 0']], sortBy: 'created_at', sortOrder: 'desc' });
}

/** What `search_queries` asks for. */
export interface SearchQueriesRequest {
  readonly filter: SearchAnalyticsFilter;
  readonly page: ReportWindow;
  /** true: only searches with a linked click; false: only those without; absent: all. */
  readonly hasClicks?: boolean;
  readonly sortBy: SearchSortColumn;
  readonly sortOrder: 'asc' | 'desc';
}

/** `search_queries`: a sorted page of the searches matching the filter (and click condition). */
export async function searchQueries(sql: ReportSql, datasetId: string, req: SearchQueriesRequest): Promise<RatedSearch[]> {
  const clicks = clickCondition(req.hasClicks);
  const conditions = clicks === undefined ? [] : [[clicks] as const];
  const index = await listingIndex(sql, datasetId, req.filter, req.sortBy, req.page, req.hasClicks);
  return listSearches(sql, datasetId, { filter: req.filter, page: req.page, conditions, sortBy: req.sortBy, sortOrder: req.sortOrder, index });
}

/** `query_details`: one search of the dataset with its rating, or undefined. */
export async function searchDetails(sql: ReportSql, datasetId: string, id: string): Promise<RatedSearch | undefined> {
  const rows = await sql.all(`SELECT ${COLUMNS} FROM search_queries q ${RATING_JOIN} WHERE q.dataset_id = ? AND q.id = ?`, [datasetId, id]);
  return rows[0] === undefined ? undefined : ratedFromRow(rows[0]);
}
