/**
 * The search analytics reports (`POST /api/analytics/search`): the canonical request of each
 * variant, and the summary reports (metrics, head queries, counts, event funnel). The graphs are
 * in ./search-graphs.ts, the listings of searches in ./search-events.ts, popular filters in
 * ./search-popular-filters.ts.
 */
import type { Granularity, RangeBounds, ReportSql } from './report-sql.js';
import type { ReportWindow, SearchQueriesRequest } from './search-events.js';
import { histogramRank } from '../latency-histogram.js';
import { QUERY_TOTALS } from '../search-rollup-batch.js';
import { rankedText } from '../text-keys.js';
import { searchSelection, type SearchAnalyticsFilter } from './search-filter.js';
import { rollupEventNames } from './event-rollup.js';
import { rollupServes, rollupTotals } from './search-rollup.js';
import { groupedHeadQueries, rangeHeadQueries } from './head-queries.js';
import type { GraphRequest, RevenueRequest } from './search-graphs.js';

/** The report variants (wire `type`). */
export const SEARCH_REPORT_TYPES = [
  'latency_graph',
  'search_usage_graph',
  'search_metrics',
  'head_queries',
  'low_confidence_queries',
  'no_result_queries',
  'search_queries',
  'count_queries',
  'query_details',
  'popular_filters',
  'ctr_metrics_over_time',
  'search_conversion_rate',
  'searches_per_user',
  'search_average_rating',
  'event_funnel',
  'search_revenue',
] as const;

/** One of {@link SEARCH_REPORT_TYPES}. */
export type SearchReportType = (typeof SEARCH_REPORT_TYPES)[number];

/** What each report variant asks for, besides its `type`. */
export interface SearchReportPayloads {
  readonly latency_graph: GraphRequest;
  readonly search_usage_graph: GraphRequest;
  readonly search_metrics: { readonly filter: SearchAnalyticsFilter };
  readonly head_queries: { readonly filter: SearchAnalyticsFilter; readonly page: ReportWindow };
  readonly low_confidence_queries: { readonly filter: SearchAnalyticsFilter; readonly page: ReportWindow; readonly threshold?: number };
  readonly no_result_queries: { readonly filter: SearchAnalyticsFilter; readonly page: ReportWindow };
  readonly search_queries: SearchQueriesRequest;
  readonly count_queries: { readonly filter: SearchAnalyticsFilter; readonly countCollapsedQueries: boolean };
  readonly query_details: { readonly requestId: string };
  readonly popular_filters: { readonly filter: SearchAnalyticsFilter };
  readonly ctr_metrics_over_time: GraphRequest;
  readonly search_conversion_rate: GraphRequest;
  readonly searches_per_user: GraphRequest;
  readonly search_average_rating: GraphRequest;
  readonly event_funnel: { readonly filter: SearchAnalyticsFilter };
  readonly search_revenue: RevenueRequest;
}

/** A validated search analytics request, one member per variant. */
export type SearchReportRequest = { [T in SearchReportType]: { readonly type: T } & SearchReportPayloads[T] }[SearchReportType];

/** The default bucket of the graphs. */
export const DEFAULT_GRANULARITY: Granularity = 'hour';

/** Percentiles of `search_metrics`, in percent. */
const PERCENTILES = [99, 95, 50] as const;

/**
 * The 1-based nearest rank of percentile `pct` among `n` ascending values: ceil(pct/100 · n),
 * in integers so that no rounding of pct/100 moves it.
 */
export const nearestRank = (pct: number, n: number): number => Math.max(1, Math.floor((pct * n + 99) / 100));

/** What `search_metrics` answers. */
type SearchMetrics = { total_queries: number; avg_latency: number; p99: number; p95: number; p50: number; total_positive_ratings: number; total_negative_ratings: number };

/** The shares (%) of positive and negative ratings among `rated` ratings. */
const ratingShares = (row: Record<string, unknown> | undefined) => {
  const rated = Number(row?.rated ?? 0);
  const percent = (k: unknown) => (rated === 0 ? 0 : (100 * Number(k ?? 0)) / rated);
  return { total_positive_ratings: percent(row?.positive), total_negative_ratings: percent(row?.negative) };
};

/**
 * `search_metrics` from the rollups (./search-rollup.ts): count, average and rating shares as the
 * raw path gives them, percentiles from the latency histogram (within LATENCY_RELATIVE_ERROR).
 */
async function rollupMetrics(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter): Promise<SearchMetrics> {
  const { groups, histogram } = await rollupTotals(sql, datasetId, filter, true);
  const total = (k: 'n' | 'total' | 'rated' | 'positive' | 'negative') => groups.reduce((a, g) => a + g[k], 0);
  const n = total('n');
  const percentile = (pct: number) => (n === 0 ? 0 : histogramRank(histogram, nearestRank(pct, n)));
  return {
    total_queries: n,
    avg_latency: n === 0 ? 0 : total('total') / n,
    p99: percentile(99),
    p95: percentile(95),
    p50: percentile(50),
    ...ratingShares({ rated: total('rated'), positive: total('positive'), negative: total('negative') }),
  };
}

/**
 * `search_metrics`: counts, latency average and percentiles, and the shares of positive and
 * negative ratings. From the rollups when the filter allows it (percentiles then approximate).
 */
export async function searchMetrics(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter): Promise<SearchMetrics> {
  if (rollupServes(filter)) return rollupMetrics(sql, datasetId, filter);
  const s = searchSelection(sql.dialect, datasetId, filter, true);
  const [row] = await sql.all(
    `SELECT COUNT(*) AS n, SUM(q.latency) AS latency, COUNT(r.rating) AS rated,
       SUM(CASE WHEN r.rating >= 1 THEN 1 ELSE 0 END) AS positive, SUM(CASE WHEN r.rating <= 0 THEN 1 ELSE 0 END) AS negative
     FROM ${s.from} ${s.where.sql()}`,
    s.where.params,
  );
  const n = Number(row?.n ?? 0);
  const at = new Map<number, number>();
  if (n > 0) {
    const ranks = PERCENTILES.map((p) => nearestRank(p, n));
    const p = searchSelection(sql.dialect, datasetId, filter);
    const rows = await sql.all<{ rn: number; latency: number }>(
      `SELECT rn, latency FROM (SELECT q.latency AS latency, ROW_NUMBER() OVER (ORDER BY q.latency, q.id) AS rn FROM ${p.from} ${p.where.sql()}) ranked
       WHERE rn IN (?, ?, ?)`,
      [...p.where.params, ...ranks],
    );
    for (const r of rows) at.set(Number(r.rn), Number(r.latency));
  }
  const percentile = (pct: number) => (n === 0 ? 0 : (at.get(nearestRank(pct, n)) ?? 0));
  return {
    total_queries: n,
    avg_latency: n === 0 ? 0 : Number(row?.latency ?? 0) / n,
    p99: percentile(99),
    p95: percentile(95),
    p50: percentile(50),
    ...ratingShares(row),
  };
}

/** Whether `filter` narrows the searches by their date only. */
const onlyDates = (filter: SearchAnalyticsFilter): boolean => rollupServes(filter) && filter.searchType === undefined && filter.searchMethod === undefined;

/** Whether `filter` narrows nothing: every search of the dataset, ever. */
const everything = (filter: SearchAnalyticsFilter): boolean => onlyDates(filter) && Object.values(filter.dateRange ?? {}).every((b) => b === undefined);

/**
 * `head_queries`: the most frequent query texts, most searched first (ties by text). Over the
 * whole history with no filter, from the query totals' index (../search-rollup-batch.ts); over a
 * date range only, from the searches per hour and day and query (./head-queries.ts).
 */
export async function headQueries(
  sql: ReportSql,
  datasetId: string,
  req: { filter: SearchAnalyticsFilter; page: ReportWindow },
): Promise<{ queries: { query: string; count: number }[] }> {
  if (everything(req.filter)) {
    const rows = await sql.all<{ query: string; n: number }>(
      `SELECT t.query AS query, t.searches AS n FROM ${QUERY_TOTALS} t WHERE t.dataset_id = ? ORDER BY t.searches DESC, ${rankedText(sql.dialect, 't.query')} LIMIT ? OFFSET ?`,
      [datasetId, req.page.limit, req.page.offset],
    );
    return { queries: rows.map((r) => ({ query: r.query, count: Number(r.n) })) };
  }
  return { queries: onlyDates(req.filter) ? await rangeHeadQueries(sql, datasetId, req.filter.dateRange, req.page) : await groupedHeadQueries(sql, datasetId, req.filter, req.page) };
}

/**
 * `count_queries`: searches per (search type, search method), most first. With
 * `countCollapsedQueries` each distinct (user, query text) counts once per pair, the user being
 * `user_id`, or the search's own id when it has none (an anonymous search is its own user).
 */
export async function countQueries(
  sql: ReportSql,
  datasetId: string,
  req: { filter: SearchAnalyticsFilter; countCollapsedQueries: boolean },
): Promise<{ total_queries: { search_type: string; search_method: string; search_count: number }[] }> {
  if (!req.countCollapsedQueries && rollupServes(req.filter)) {
    const { groups } = await rollupTotals(sql, datasetId, req.filter, false);
    groups.sort((a, b) => b.n - a.n || compare(a.searchType, b.searchType) || compare(a.searchMethod, b.searchMethod));
    return { total_queries: groups.map((g) => ({ search_type: g.searchType, search_method: g.searchMethod, search_count: g.n })) };
  }
  const s = searchSelection(sql.dialect, datasetId, req.filter);
  const source = req.countCollapsedQueries
    ? `(SELECT DISTINCT q.search_type AS search_type, q.search_method AS search_method, COALESCE(q.user_id, q.id) AS who, q.query AS query
        FROM ${s.from} ${s.where.sql()}) d`
    : `(SELECT q.search_type AS search_type, q.search_method AS search_method FROM ${s.from} ${s.where.sql()}) d`;
  const rows = await sql.all<{ search_type: string; search_method: string; n: number }>(
    `SELECT search_type, search_method, COUNT(*) AS n FROM ${source} GROUP BY search_type, search_method ORDER BY n DESC, search_type, search_method`,
    s.where.params,
  );
  return { total_queries: rows.map((r) => ({ search_type: r.search_type, search_method: r.search_method, search_count: Number(r.n) })) };
}

/** Strings in the order both engines' ORDER BY gives them (bytewise; the values are ASCII). */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `event_funnel`: the dataset's user events created in the date range, by name, most first (ties by name; from the user event rollups). */
export async function eventFunnel(
  sql: ReportSql,
  datasetId: string,
  dateRange: RangeBounds | undefined,
): Promise<{ event_names: { event_name: string; event_count: number }[] }> {
  return { event_names: await rollupEventNames(sql, datasetId, dateRange) };
}
