/**
 * The filter every search report shares (`SearchAnalyticsFilter`), as one FROM + WHERE over
 * `search_queries q`. Every statement starts `WHERE q.dataset_id = ?` with the date bounds on
 * `q.created_at` next, so both engines walk the (dataset_id, created_at) index.
 */
import type { SearchKind } from '../../core/domain/analytics.js';
import { jsonText, Where, type Dialect, type RangeBounds } from './report-sql.js';

/** The kinds of search a report can be narrowed to (the reference's filter `search_type`). */
export const SEARCH_FILTER_TYPES = ['search', 'autocomplete', 'search_over_groups', 'search_within_groups'] as const satisfies readonly SearchKind[];

/** One of {@link SEARCH_FILTER_TYPES}. */
export type SearchFilterType = (typeof SEARCH_FILTER_TYPES)[number];

/** The search methods as `search_queries.search_method` holds them (the wire's aliases already mapped). */
export const SEARCH_METHODS = ['semantic', 'fulltext', 'hybrid', 'bm25'] as const;

/** One of {@link SEARCH_METHODS}. */
export type SearchMethod = (typeof SEARCH_METHODS)[number];

/** `SearchAnalyticsFilter`, canonical: every absent member matches everything. */
export interface SearchAnalyticsFilter {
  /** Epoch-ms bounds on the search's `created_at`. */
  readonly dateRange?: RangeBounds;
  readonly searchType?: SearchFilterType;
  readonly searchMethod?: SearchMethod;
  /** The exact query text. */
  readonly query?: string;
  /** Bounds on the search's rating; unrated searches never match a rating bound. */
  readonly queryRating?: RangeBounds;
  readonly topScore?: RangeBounds;
  /** `metadata.component_name` of the search. */
  readonly componentName?: string;
}

/**
 * The search's latest rating (PUT /api/analytics/search), joined on the record's id within its
 * dataset. Ratings sent through the RAG route rate RAG answers and are left out.
 */
export const RATING_JOIN = `LEFT JOIN query_ratings r ON r.query_id = q.id AND r.dataset_id = q.dataset_id AND r.kind = 'search'`;

/**
 * `search_queries q`, read through its (dataset_id, created_at) index on SQLite. With the dataset
 * equally selective in the (dataset_id, latency) and (dataset_id, top_score) indexes that sorted
 * listings walk, SQLite's planner took either for a dataset's aggregate and read the rows in
 * random order (head queries 1.4 s instead of 0.34 s at 320k searches, 59 s instead of 8.7 s at
 * 6M); the created_at order is the table's own. PostgreSQL's planner has statistics to choose by.
 */
const searchesTable = (dialect: Dialect): string => (dialect === 'sqlite' ? 'search_queries q INDEXED BY search_queries_dataset' : 'search_queries q');

/** FROM and WHERE of the searches a report reads. */
export interface SearchSelection {
  /** `search_queries q`, with the rating joined as `r` when needed. */
  readonly from: string;
  readonly where: Where;
}

/**
 * The dataset's searches matching `filter`. The rating is joined when the filter bounds it or
 * `withRating` asks for it (reports that read `r.rating`).
 */
export function searchSelection(dialect: Dialect, datasetId: string, filter: SearchAnalyticsFilter, withRating = false): SearchSelection {
  const where = new Where().add('q.dataset_id = ?', datasetId).range('q.created_at', filter.dateRange);
  if (filter.searchType !== undefined) where.add('q.search_type = ?', filter.searchType);
  if (filter.searchMethod !== undefined) where.add('q.search_method = ?', filter.searchMethod);
  if (filter.query !== undefined) where.add('q.query = ?', filter.query);
  where.range('q.top_score', filter.topScore);
  where.range('r.rating', filter.queryRating);
  if (filter.componentName !== undefined) where.add(`${jsonText(dialect, 'q.metadata', 'component_name')} = ?`, filter.componentName);
  const rating = withRating || filter.queryRating !== undefined;
  const table = searchesTable(dialect);
  return { from: rating ? `${table} ${RATING_JOIN}` : table, where };
}

/** The linked-event conditions, kept here too for the reports that import them with the filter. */
export { HAS_CLICK, HAS_CONVERSION, linkedEvent } from './linked-events.js';
