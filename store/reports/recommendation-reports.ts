/**
 * The recommendation reports (`POST /api/analytics/recommendations`) over `recommendation_queries`,
 * wire-shaped but for the listed recommendations, which come as records. The recommendations are
 * those of the dataset matching the `RecommendationAnalyticsFilter` (dates on their
 * `created_at`); a user event links to one by `request_id`. Graphs have one point per non-empty
 * bucket, oldest first; each headline figure is the same statistic over the whole filtered set.
 *
 * - `low_confidence_recommendations`: 10 a page below `threshold` (all when absent), lowest top
 *   score first; `recommendation_queries`: 10 a page, sorted, optionally only those with (or
 *   without) a linked click; ties by id. `query_details`: one by id.
 * - `recommendation_usage_graph`: `{total_requests, points}`, recommendations per bucket.
 * - `recommendations_per_user`: `{avg_recommendations_per_user, points}`, recommendations with a
 *   user per distinct user.
 * - `recommendations_ctr_rate`: `{total_ctr, points}`, fraction with a linked click.
 * - `recommendation_conversion_rate`: `{conversion_rate, points}`, fraction with a linked conversion.
 * - `event_funnel`: `{event_names: [{event_name, event_count}]}`, the user events linked to them, by name.
 */
import type { RecommendationKind, RecommendationRecord } from '../../core/domain/analytics.js';
import { clickCondition, HAS_CLICK, HAS_CONVERSION } from './linked-events.js';
import { countOverTime, linkedEventNames, perUserOverTime, shareOverTime, toPoints, type SeriesSource, type TimePoint } from './rag-series.js';
import { recommendationWhere, type RecommendationAnalyticsFilter } from './recommendation-filter.js';
import { parsed, type ReportWindow } from './report-rows.js';
import { pageAcrossTies } from './tie-pages.js';
import type { Granularity, ReportSql } from './report-sql.js';
import { recordRollupBuckets, recordRollupCounts, recordRollupEventNames, rollupShare, type RecordRollupQuery } from './record-rollup.js';
import { perUserFromRollup, recordUserQuery, userRollupServes } from './user-rollup.js';

/** Columns `sort_by` of `recommendation_queries` may name. */
export const RECOMMENDATION_SORT_COLUMNS = ['created_at', 'top_score'] as const;

/** One of {@link RECOMMENDATION_SORT_COLUMNS}. */
export type RecommendationSortColumn = (typeof RECOMMENDATION_SORT_COLUMNS)[number];

/** A filter and a bucket size: what every graph takes. */
export interface RecommendationGraphRequest {
  readonly filter: RecommendationAnalyticsFilter;
  readonly granularity: Granularity;
}

const COLUMNS = `q.id, q.dataset_id, q.recommendation_type, q.positive_ids, q.negative_ids, q.positive_tracking_ids, q.negative_tracking_ids,
  q.request_params, q.results, q.top_score, q.user_id, q.metadata, q.created_at`;

type Row = Record<string, any>;

function recordFromRow(r: Row): RecommendationRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    recommendationType: r.recommendation_type as RecommendationKind,
    positiveIds: parsed(r.positive_ids, []),
    negativeIds: parsed(r.negative_ids, []),
    positiveTrackingIds: parsed(r.positive_tracking_ids, []),
    negativeTrackingIds: parsed(r.negative_tracking_ids, []),
    requestParams: parsed(r.request_params, null),
    results: parsed(r.results, []),
    topScore: Number(r.top_score),
    userId: r.user_id,
    metadata: parsed(r.metadata, null),
    createdAt: Number(r.created_at),
  };
}

/**
 * The record rollups' query for the recommendations matching `filter` (and a graph's
 * `granularity`), or undefined when they cannot serve it: only the date range and the
 * recommendation type may narrow them.
 */
function recommendationRollup(sql: ReportSql, datasetId: string, filter: RecommendationAnalyticsFilter, granularity?: Granularity): RecordRollupQuery | undefined {
  if (filter.topScore !== undefined || filter.componentName !== undefined) return undefined;
  if (granularity !== undefined && !recordRollupBuckets(granularity)) return undefined;
  return {
    kind: 'recommendation',
    subtype: filter.recommendationType,
    dateRange: filter.dateRange,
    rated: false,
    raw: (dateRange) => source(sql, datasetId, { recommendationType: filter.recommendationType, dateRange }),
  };
}

const source = (sql: ReportSql, datasetId: string, filter: RecommendationAnalyticsFilter): SeriesSource => ({
  from: 'recommendation_queries q',
  where: recommendationWhere(sql.dialect, datasetId, filter),
});

/**
 * A page of the recommendations matching the filter and `condition` (SQL on `q`, or none), sorted
 * by `sortBy`, ties by id, read without sorting a block of ties (./tie-pages.ts).
 */
async function listRecommendations(
  sql: ReportSql,
  datasetId: string,
  filter: RecommendationAnalyticsFilter,
  page: ReportWindow,
  sort: { readonly sortBy: string; readonly sortOrder: 'asc' | 'desc' },
  condition?: readonly [string, ...unknown[]],
): Promise<RecommendationRecord[]> {
  const where = recommendationWhere(sql.dialect, datasetId, filter);
  if (condition) where.add(...condition);
  const rows = await pageAcrossTies(sql, { columns: COLUMNS, from: 'recommendation_queries q', where: { sql: where.sql(), params: where.params }, ...sort, page });
  return rows.map(recordFromRow);
}

/** `low_confidence_recommendations`: recommendations below `threshold` (all when absent), lowest top score first. */
export function lowConfidenceRecommendations(
  sql: ReportSql,
  datasetId: string,
  req: { filter: RecommendationAnalyticsFilter; page: ReportWindow; threshold?: number },
): Promise<RecommendationRecord[]> {
  const condition = req.threshold === undefined ? undefined : (['q.top_score < ?', req.threshold] as const);
  return listRecommendations(sql, datasetId, req.filter, req.page, { sortBy: 'top_score', sortOrder: 'asc' }, condition);
}

/** What `recommendation_queries` asks for. */
export interface RecommendationQueriesRequest {
  readonly filter: RecommendationAnalyticsFilter;
  readonly page: ReportWindow;
  /** true: only recommendations with a linked click; false: only those without; absent: all. */
  readonly hasClicks?: boolean;
  readonly sortBy: RecommendationSortColumn;
  readonly sortOrder: 'asc' | 'desc';
}

/** `recommendation_queries`: a sorted page of the recommendations matching the filter (and click condition). */
export function recommendationQueries(sql: ReportSql, datasetId: string, req: RecommendationQueriesRequest): Promise<RecommendationRecord[]> {
  const clicks = clickCondition(req.hasClicks);
  return listRecommendations(sql, datasetId, req.filter, req.page, req, clicks === undefined ? undefined : [clicks]);
}

/** `query_details`: one recommendation of the dataset, or undefined. */
export async function recommendationDetails(sql: ReportSql, datasetId: string, id: string): Promise<RecommendationRecord | undefined> {
  const rows = await sql.all(`SELECT ${COLUMNS} FROM recommendation_queries q WHERE q.dataset_id = ? AND q.id = ?`, [datasetId, id]);
  return rows[0] === undefined ? undefined : recordFromRow(rows[0]);
}

/** `recommendation_usage_graph`: recommendations per bucket, and their total. */
export async function recommendationUsageGraph(
  sql: ReportSql,
  datasetId: string,
  req: RecommendationGraphRequest,
): Promise<{ total_requests: number; points: TimePoint[] }> {
  const rollup = recommendationRollup(sql, datasetId, req.filter, req.granularity);
  if (rollup) {
    const buckets = await recordRollupCounts(sql, datasetId, rollup, req.granularity);
    return { total_requests: buckets.reduce((sum, b) => sum + b.records, 0), points: toPoints(buckets, (b) => b.records) };
  }
  const { total, points } = await countOverTime(sql, source(sql, datasetId, req.filter), req.granularity);
  return { total_requests: total, points };
}

/** `recommendations_per_user`: recommendations per distinct user. */
export async function recommendationsPerUser(
  sql: ReportSql,
  datasetId: string,
  req: RecommendationGraphRequest,
): Promise<{ avg_recommendations_per_user: number; points: TimePoint[] }> {
  const rollup = recommendationRollup(sql, datasetId, req.filter, req.granularity);
  const users = rollup && recordUserQuery(rollup);
  const { total, points } =
    users && userRollupServes(users)
      ? await perUserFromRollup(sql, datasetId, users, req.granularity)
      : await perUserOverTime(sql, source(sql, datasetId, req.filter), req.granularity);
  return { avg_recommendations_per_user: total, points };
}

/** `recommendations_ctr_rate`: the fraction of recommendations with a linked click. */
export async function recommendationsCtrRate(
  sql: ReportSql,
  datasetId: string,
  req: RecommendationGraphRequest,
): Promise<{ total_ctr: number; points: TimePoint[] }> {
  const rollup = recommendationRollup(sql, datasetId, req.filter, req.granularity);
  const { total, points } = rollup
    ? rollupShare(await recordRollupCounts(sql, datasetId, rollup, req.granularity), 'clicked')
    : await shareOverTime(sql, source(sql, datasetId, req.filter), req.granularity, HAS_CLICK);
  return { total_ctr: total, points };
}

/** `recommendation_conversion_rate`: the fraction of recommendations with a linked conversion. */
export async function recommendationConversionRate(
  sql: ReportSql,
  datasetId: string,
  req: RecommendationGraphRequest,
): Promise<{ conversion_rate: number; points: TimePoint[] }> {
  const rollup = recommendationRollup(sql, datasetId, req.filter, req.granularity);
  const { total, points } = rollup
    ? rollupShare(await recordRollupCounts(sql, datasetId, rollup, req.granularity), 'converted')
    : await shareOverTime(sql, source(sql, datasetId, req.filter), req.granularity, HAS_CONVERSION);
  return { conversion_rate: total, points };
}

/** `event_funnel`: the user events linked to the recommendations, counted by name. */
export async function recommendationEventFunnel(
  sql: ReportSql,
  datasetId: string,
  filter: RecommendationAnalyticsFilter,
): Promise<{ event_names: { event_name: string; event_count: number }[] }> {
  const rollup = recommendationRollup(sql, datasetId, filter);
  if (rollup) return { event_names: await recordRollupEventNames(sql, datasetId, rollup) };
  return { event_names: await linkedEventNames(sql, source(sql, datasetId, filter)) };
}
