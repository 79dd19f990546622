/**
 * The RAG reports over answers (`rag_queries`), wire-shaped. The answers are those of the dataset
 * matching the `RAGAnalyticsFilter` (dates on the answer's `created_at`); a user event links to an
 * answer by `request_id`. Graphs have one point per non-empty bucket of the answers' (or, for
 * revenue, the purchases') `created_at`, oldest first; each headline figure is the same statistic
 * over the whole filtered set (not the mean of the buckets'), as the search reports give theirs.
 *
 * - `rag_usage`: `{total_queries}`; `rag_usage_graph`: `{points}` answers per bucket.
 * - `rag_query_ratings`: `{total_positive_ratings, total_negative_ratings}`, the counts of rated
 *   answers rated >= 1 and <= 0 (the reference's counts; `search_metrics` gives its as percentages).
 * - `followup_queries`: `{top_queries: [{query, count}]}`, user messages of answers that are not
 *   the first of their topic (the first taken over all the topic's answers), most asked first.
 * - `popular_chats`: `{top_queries: [{query, count}]}`, user messages of all the answers.
 * - `ctr_metrics_over_time`: `{total_ctr, points}`, fraction of answers with a linked click.
 * - `chat_conversion_rate`: `{conversion_rate, points}`, fraction of answers with a linked conversion.
 * - `messages_per_user`: `{avg_messages_per_user, points}`, answers with a user per distinct user.
 * - `chat_average_rating`: `{avg_chat_rating, points}`, mean rating of the rated answers.
 * - `event_funnel`: `{event_names: [{event_name, event_count}]}`, the user events linked to the
 *   answers, by name, most frequent first.
 * - `chat_revenue`: `{avg_revenue, points}`, purchases' revenue per bucket of the purchase's time
 *   (the filter's dates bound the purchases), and per answer matching the filter; `direct` keeps
 *   only purchases linked to a RAG answer, otherwise every purchase counts.
 *
 * Lists are ordered by count, most first, then by text in code-point order.
 */
import { MESSAGE_TOTALS } from '../record-rollup-batch.js';
import { RAG_LINK } from '../event-rollup-batch.js';
import { rankedText } from '../text-keys.js';
import { purchaseRevenue } from './event-rollup.js';
import { HAS_CLICK, HAS_CONVERSION, ragSelection, type RagAnalyticsFilter } from './rag-filter.js';
import { binaryOrder, countOverTime, linkedEventNames, perUserOverTime, ratio, shareOverTime, toPoints, type TimePoint } from './rag-series.js';
import { bucketStart, type Granularity, type ReportSql } from './report-sql.js';
import {
  recordRollupBuckets,
  recordRollupCounts,
  recordRollupEventNames,
  recordRollupTotals,
  rollupShare,
  type RecordRollupQuery,
} from './record-rollup.js';
import type { ReportWindow } from './rag-events.js';
import { perUserFromRollup, recordUserQuery, userRollupServes } from './user-rollup.js';

/** A filter and a bucket size: what every graph takes. */
export interface GraphRequest {
  readonly filter: RagAnalyticsFilter;
  readonly granularity: Granularity;
}

/** `{query, count}` of the paged text lists. */
export interface QueryCount {
  readonly query: string;
  readonly count: number;
}

/** `{event_name, event_count}` of an event funnel. */
export interface EventNameCount {
  readonly event_name: string;
  readonly event_count: number;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * The record rollups' query for the answers matching `filter` (and a graph's `granularity`), or
 * undefined when they cannot serve it: only the date range and the rag type may narrow the answers.
 */
function answerRollup(sql: ReportSql, datasetId: string, filter: RagAnalyticsFilter, granularity?: Granularity): RecordRollupQuery | undefined {
  if (filter.query !== undefined || filter.queryRating !== undefined || filter.componentName !== undefined) return undefined;
  if (granularity !== undefined && !recordRollupBuckets(granularity)) return undefined;
  return {
    kind: 'rag',
    subtype: filter.ragType,
    dateRange: filter.dateRange,
    rated: true,
    raw: (dateRange) => ragSelection(sql.dialect, datasetId, { ragType: filter.ragType, dateRange }, true),
  };
}

/** `rag_usage`: answers matching the filter. */
export async function ragUsage(sql: ReportSql, datasetId: string, filter: RagAnalyticsFilter): Promise<{ total_queries: number }> {
  const rollup = answerRollup(sql, datasetId, filter);
  if (rollup) return { total_queries: (await recordRollupTotals(sql, datasetId, rollup)).records };
  const { from, where } = ragSelection(sql.dialect, datasetId, filter);
  const [row] = await sql.all(`SELECT COUNT(*) AS n FROM ${from} ${where.sql()}`, where.params);
  return { total_queries: num(row?.n) };
}

/** `rag_usage_graph`: answers per bucket. */
export async function ragUsageGraph(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ points: TimePoint[] }> {
  const rollup = answerRollup(sql, datasetId, req.filter, req.granularity);
  if (rollup) return { points: toPoints(await recordRollupCounts(sql, datasetId, rollup, req.granularity), (b) => b.records) };
  const { points } = await countOverTime(sql, ragSelection(sql.dialect, datasetId, req.filter), req.granularity);
  return { points };
}

/** `rag_query_ratings`: how many rated answers are positive (rating >= 1) and negative (<= 0). */
export async function ragQueryRatings(
  sql: ReportSql,
  datasetId: string,
  filter: RagAnalyticsFilter,
): Promise<{ total_positive_ratings: number; total_negative_ratings: number }> {
  const rollup = answerRollup(sql, datasetId, filter);
  if (rollup) {
    const all = await recordRollupTotals(sql, datasetId, rollup);
    return { total_positive_ratings: all.positive, total_negative_ratings: all.negative };
  }
  const { from, where } = ragSelection(sql.dialect, datasetId, filter, true);
  const [row] = await sql.all(
    `SELECT SUM(CASE WHEN r.rating >= 1 THEN 1 ELSE 0 END) AS positive, SUM(CASE WHEN r.rating <= 0 THEN 1 ELSE 0 END) AS negative
     FROM ${from} ${where.sql()}`,
    where.params,
  );
  return { total_positive_ratings: num(row?.positive), total_negative_ratings: num(row?.negative) };
}

/** `popular_chats`: a page of the answers' user messages, most asked first. */
export async function popularChats(
  sql: ReportSql,
  datasetId: string,
  req: { filter: RagAnalyticsFilter; page: ReportWindow },
): Promise<{ top_queries: QueryCount[] }> {
  if (Object.values(req.filter).every((v) => v === undefined)) {
    // Nothing narrows the answers: the all-time counts kept per message, by their rank index.
    const rows = await sql.all<{ query: string; n: number }>(
      `SELECT t.user_message AS query, t.answers AS n FROM ${MESSAGE_TOTALS} t WHERE t.dataset_id = ?
       ORDER BY t.answers DESC, ${rankedText(sql.dialect, 't.user_message')} LIMIT ? OFFSET ?`,
      [datasetId, req.page.limit, req.page.offset],
    );
    return { top_queries: rows.map((r) => ({ query: r.query, count: num(r.n) })) };
  }
  const { from, where } = ragSelection(sql.dialect, datasetId, req.filter);
  const rows = await sql.all<{ query: string; n: number }>(
    `SELECT q.user_message AS query, COUNT(*) AS n FROM ${from} ${where.sql()}
     GROUP BY q.user_message ORDER BY n DESC, ${binaryOrder(sql.dialect, 'q.user_message')} LIMIT ? OFFSET ?`,
    [...where.params, req.page.limit, req.page.offset],
  );
  return { top_queries: rows.map((r) => ({ query: r.query, count: num(r.n) })) };
}

/** `followup_queries` reads the follow-up flags and totals kept with the answers. */
export { followupQueries } from './rag-followups.js';

/** `ctr_metrics_over_time`: the fraction of answers with a linked click. */
export async function ragCtrOverTime(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ total_ctr: number; points: TimePoint[] }> {
  const rollup = answerRollup(sql, datasetId, req.filter, req.granularity);
  const { total, points } = rollup
    ? rollupShare(await recordRollupCounts(sql, datasetId, rollup, req.granularity), 'clicked')
    : await shareOverTime(sql, ragSelection(sql.dialect, datasetId, req.filter), req.granularity, HAS_CLICK);
  return { total_ctr: total, points };
}

/** `chat_conversion_rate`: the fraction of answers with a linked conversion. */
export async function chatConversionRate(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ conversion_rate: number; points: TimePoint[] }> {
  const rollup = answerRollup(sql, datasetId, req.filter, req.granularity);
  const { total, points } = rollup
    ? rollupShare(await recordRollupCounts(sql, datasetId, rollup, req.granularity), 'converted')
    : await shareOverTime(sql, ragSelection(sql.dialect, datasetId, req.filter), req.granularity, HAS_CONVERSION);
  return { conversion_rate: total, points };
}

/** `messages_per_user`: answers per distinct user, per bucket and over the whole range. */
export async function messagesPerUser(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ avg_messages_per_user: number; points: TimePoint[] }> {
  const rollup = answerRollup(sql, datasetId, req.filter, req.granularity);
  const users = rollup && recordUserQuery(rollup);
  const { total, points } =
    users && userRollupServes(users)
      ? await perUserFromRollup(sql, datasetId, users, req.granularity)
      : await perUserOverTime(sql, ragSelection(sql.dialect, datasetId, req.filter), req.granularity);
  return { avg_messages_per_user: total, points };
}

/** `chat_average_rating`: the mean rating of the rated answers. */
export async function chatAverageRating(sql: ReportSql, datasetId: string, req: GraphRequest): Promise<{ avg_chat_rating: number; points: TimePoint[] }> {
  const rollup = answerRollup(sql, datasetId, req.filter, req.granularity);
  if (rollup) {
    const rated = (await recordRollupCounts(sql, datasetId, rollup, req.granularity)).filter((b) => b.rated > 0);
    const total = ratio(
      rated.reduce((sum, b) => sum + b.ratingSum, 0),
      rated.reduce((sum, b) => sum + b.rated, 0),
    );
    return { avg_chat_rating: total, points: toPoints(rated, (b) => ratio(b.ratingSum, b.rated)) };
  }
  const { from, where } = ragSelection(sql.dialect, datasetId, req.filter, true);
  where.add('r.rating IS NOT NULL');
  const rows = await sql.all<{ bucket: number; n: number; total: number }>(
    `SELECT ${bucketStart(sql.dialect, req.granularity, 'q.created_at')} AS bucket, COUNT(*) AS n, SUM(r.rating) AS total
     FROM ${from} ${where.sql()} GROUP BY bucket ORDER BY bucket`,
    where.params,
  );
  const rated = rows.reduce((sum, r) => sum + num(r.n), 0);
  const total = rows.reduce((sum, r) => sum + num(r.total), 0);
  return { avg_chat_rating: ratio(total, rated), points: toPoints(rows, (r) => ratio(num(r.total), num(r.n))) };
}

/** `event_funnel`: the user events linked to the answers, counted by name. */
export async function ragEventFunnel(sql: ReportSql, datasetId: string, filter: RagAnalyticsFilter): Promise<{ event_names: EventNameCount[] }> {
  const rollup = answerRollup(sql, datasetId, filter);
  if (rollup) return { event_names: await recordRollupEventNames(sql, datasetId, rollup) };
  return { event_names: await linkedEventNames(sql, ragSelection(sql.dialect, datasetId, filter)) };
}

/**
 * `chat_revenue`: the revenue of the purchases made in the date range, per bucket of their
 * `created_at`, and that revenue over the number of answers matching the filter (0 when none).
 */
export async function chatRevenue(
  sql: ReportSql,
  datasetId: string,
  req: GraphRequest & { direct: boolean },
): Promise<{ avg_revenue: number; points: TimePoint[] }> {
  // With `direct`, only purchases linked to one of the dataset's answers (after a search: search_revenue's).
  const rows = await purchaseRevenue(sql, datasetId, req.filter.dateRange, req.granularity, req.direct ? RAG_LINK : undefined);
  const points = toPoints(rows, (r) => r.revenue);
  const { total_queries: answers } = await ragUsage(sql, datasetId, req.filter);
  return { avg_revenue: ratio(points.reduce((sum, p) => sum + p.point, 0), answers), points };
}
