/**
 * The search reports drawn over time: one point per non-empty bucket of the searches' (or, for
 * revenue, the purchases') `created_at`, oldest first, with the figure over the whole range
 * beside it. Ratios are summed per bucket in SQL and divided here, so both engines give the same
 * figures and the whole range's ratio is the sums' ratio (not an average of the buckets').
 */
import { bucketStart, reportTimestamp, type Granularity, type ReportSql } from './report-sql.js';
import { HAS_CLICK, HAS_CONVERSION, searchSelection, type SearchAnalyticsFilter } from './search-filter.js';
import { SEARCH_LINK } from '../event-rollup-batch.js';
import { purchaseRevenue } from './event-rollup.js';
import { rollupBuckets, rollupServes, rollupTotals } from './search-rollup.js';
import { perUserFromRollup, userRollupServes, type UserRollupQuery } from './user-rollup.js';

/** A point of a graph. */
export interface ReportPoint {
  readonly time_stamp: string;
  readonly point: number;
}

/** What every graph asks for. */
export interface GraphRequest {
  readonly filter: SearchAnalyticsFilter;
  readonly granularity: Granularity;
}

/** A bucket's row: its start (epoch ms) and the sums the graph asked for. */
type BucketRow = { bucket: number } & Record<string, number | null>;

/**
 * Per-bucket aggregates (`aggregates`: SQL select items naming their columns) of the searches
 * matching the request, plus `conditions` (no placeholders) on `q`.
 */
async function searchBuckets(
  sql: ReportSql,
  datasetId: string,
  req: GraphRequest,
  aggregates: string,
  options: { conditions?: readonly string[]; withRating?: boolean } = {},
): Promise<BucketRow[]> {
  const { from, where } = searchSelection(sql.dialect, datasetId, req.filter, options.withRating);
  for (const c of options.conditions ?? []) where.add(c);
  const bucket = bucketStart(sql.dialect, req.granularity, 'q.created_at');
  return sql.all<BucketRow>(`SELECT ${bucket} AS bucket, ${aggregates} FROM ${from} ${where.sql()} GROUP BY 1 ORDER BY 1`, where.params);
}

const point = (bucket: number, value: number): ReportPoint => ({ time_stamp: reportTimestamp(Number(bucket)), point: value });

/** `a / b`, 0 when `b` is 0. */
const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);

const sum = <R extends object>(rows: readonly R[], key: keyof R & string): number => rows.reduce((s, r) => s + Number(r[key] ?? 0), 0);

/** Searches (`n`) and latency sum (`total`) per bucket: from the rollups when the request allows it (./search-rollup.ts). */
async function countBuckets(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<readonly { bucket: number; n: number | null; total: number | null }[]> {
  if (rollupServes(req.filter, req.granularity)) return rollupBuckets(sql, datasetId, req.filter, req.granularity);
  const rows = await searchBuckets(sql, datasetId, req, 'SUM(q.latency) AS total, COUNT(*) AS n');
  return rows.map((r) => ({ bucket: r.bucket, n: r.n ?? null, total: r.total ?? null }));
}

/** `latency_graph`: the average latency (ms) of each bucket's searches. */
export async function latencyGraph(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ points: ReportPoint[] }> {
  const rows = await countBuckets(sql, datasetId, req);
  return { points: rows.map((r) => point(r.bucket, ratio(Number(r.total), Number(r.n)))) };
}

/** `search_usage_graph`: searches per bucket, and in the whole range. */
export async function searchUsageGraph(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ total_searches: number; points: ReportPoint[] }> {
  const rows = await countBuckets(sql, datasetId, req);
  return { total_searches: sum(rows, 'n'), points: rows.map((r) => point(r.bucket, Number(r.n))) };
}

/** The SQL condition on a raw search `q` behind each rollup count of {@link searchShare}. */
const SHARE_CONDITION = { clicked: HAS_CLICK, converted: HAS_CONVERSION } as const;

/**
 * Share of each bucket's searches with a linked click or conversion (`measure`), and of all of
 * them: from the rollups' counts when the request allows it, else from the searches.
 */
async function searchShare(sql: ReportSql, datasetId: string, req: GraphRequest, measure: 'clicked' | 'converted'): Promise<{ total: number; points: ReportPoint[] }> {
  const rows: readonly BucketRow[] = rollupServes(req.filter, req.granularity)
    ? (await rollupBuckets(sql, datasetId, req.filter, req.granularity, [measure])).map((b) => ({ bucket: b.bucket, n: b.n, hits: b[measure] }))
    : await searchBuckets(sql, datasetId, req, `COUNT(*) AS n, SUM(CASE WHEN ${SHARE_CONDITION[measure]} THEN 1 ELSE 0 END) AS hits`);
  return { total: ratio(sum(rows, 'hits'), sum(rows, 'n')), points: rows.map((r) => point(r.bucket, ratio(Number(r.hits), Number(r.n)))) };
}

/** `ctr_metrics_over_time`: the share of searches with at least one linked click (0..1). */
export async function ctrOverTime(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ total_ctr: number; points: ReportPoint[] }> {
  const { total, points } = await searchShare(sql, datasetId, req, 'clicked');
  return { total_ctr: total, points };
}

/** `search_conversion_rate`: the share of searches with at least one linked conversion (0..1). */
export async function conversionRate(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ conversion_rate: number; points: ReportPoint[] }> {
  const { total, points } = await searchShare(sql, datasetId, req, 'converted');
  return { conversion_rate: total, points };
}

/** `searches_per_user`: searches with a user_id over their distinct user_ids, per bucket and in the range. */
export async function searchesPerUser(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ avg_searches_per_user: number; points: ReportPoint[] }> {
  const { searchType, searchMethod, dateRange } = req.filter;
  const users: UserRollupQuery = {
    source: 'search',
    type: searchType,
    method: searchMethod,
    dateRange,
    raw: (range) => searchSelection(sql.dialect, datasetId, { searchType, searchMethod, dateRange: range }),
  };
  if (rollupServes(req.filter, req.granularity) && userRollupServes(users)) {
    const { total, points } = await perUserFromRollup(sql, datasetId, users, req.granularity);
    return { avg_searches_per_user: total, points };
  }
  const rows = await searchBuckets(sql, datasetId, req, 'COUNT(*) AS n, COUNT(DISTINCT q.user_id) AS users', { conditions: ['q.user_id IS NOT NULL'] });
  // Users recur across buckets: the range's distinct count is one more statement.
  const { from, where } = searchSelection(sql.dialect, datasetId, req.filter);
  where.add('q.user_id IS NOT NULL');
  const [all] = await sql.all<{ n: number; users: number }>(`SELECT COUNT(*) AS n, COUNT(DISTINCT q.user_id) AS users FROM ${from} ${where.sql()}`, where.params);
  return {
    avg_searches_per_user: ratio(Number(all?.n ?? 0), Number(all?.users ?? 0)),
    points: rows.map((r) => point(r.bucket, ratio(Number(r.n), Number(r.users)))),
  };
}

/** `search_average_rating`: the average rating of the rated searches, per bucket and in the range (from the rollups when the request allows it). */
export async function averageRating(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ avg_search_rating: number; points: ReportPoint[] }> {
  // Only buckets with a rated search have a point, as the raw path's WHERE gives them.
  const rows: readonly BucketRow[] = rollupServes(req.filter, req.granularity)
    ? (await rollupBuckets(sql, datasetId, req.filter, req.granularity, ['ratings'])).filter((b) => b.rated > 0).map((b) => ({ bucket: b.bucket, n: b.rated, total: b.ratingSum }))
    : await searchBuckets(sql, datasetId, req, 'SUM(r.rating) AS total, COUNT(*) AS n', { conditions: ['r.rating IS NOT NULL'], withRating: true });
  return {
    avg_search_rating: ratio(sum(rows, 'total'), sum(rows, 'n')),
    points: rows.map((r) => point(r.bucket, ratio(Number(r.total), Number(r.n)))),
  };
}

/** What `search_revenue` asks for. */
export interface RevenueRequest extends GraphRequest {
  /** Only purchases linked by request_id to a search of the dataset. */
  readonly direct: boolean;
}

/**
 * `search_revenue`: the revenue of the purchases made in the date range, per bucket of their
 * `created_at`, and that revenue over the number of searches matching the filter (0 when none).
 * The filter's other members narrow the searches counted, not the purchases. Revenue from the
 * user event rollups and the count from the search rollups when the request allows them.
 */
export async function searchRevenue(sql: ReportSql, datasetId: string, req: RevenueRequest): Promise<{ avg_revenue: number; points: ReportPoint[] }> {
  // With `direct`, only purchases linked to one of the dataset's searches (after an answer: chat_revenue's).
  const rows = await purchaseRevenue(sql, datasetId, req.filter.dateRange, req.granularity, req.direct ? SEARCH_LINK : undefined);
  return {
    avg_revenue: ratio(sum(rows, 'revenue'), await searchCount(sql, datasetId, req.filter)),
    points: rows.map((r) => point(r.bucket, r.revenue)),
  };
}

/** How many searches match `filter`: from the rollups when the filter allows it. */
async function searchCount(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter): Promise<number> {
  if (rollupServes(filter)) return (await rollupTotals(sql, datasetId, filter, false)).groups.reduce((n, g) => n + g.n, 0);
  const searches = searchSelection(sql.dialect, datasetId, filter);
  const [count] = await sql.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${searches.from} ${searches.where.sql()}`, searches.where.params);
  return Number(count?.n ?? 0);
}
