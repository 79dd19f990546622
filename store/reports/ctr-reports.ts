/**
 * Click-through reports (`POST /api/analytics/events/ctr`) over searches (`search_queries`) and
 * recommendations (`recommendation_queries`). A click links to a record when its `request_id` is
 * the record's id in the same dataset (whatever its `request_type` says: ids are uuids); a record
 * "has clicks" when at least one click links to it. Dates filter the record's `created_at`, not
 * the click's: a click the next day still counts for the search it came from.
 *
 * Answers, wire-shaped (times as {@link reportTimestamp}):
 * - `search_ctr_metrics`: `{searches_with_clicks, percent_searches_with_clicks,
 *   percent_searches_without_clicks, avg_position_of_click}`; percentages 0..100 of the searches
 *   matching the filter; the average position over their clicks (0 when none, as when no search).
 * - `searches_with_clicks`: `{queries: [{request_id, query, created_at, results, clicked_chunk:
 *   {chunk_id, position}}]}`, the reference's rows: one per linked click, the newest click first
 *   (ties by event id), 10 a page; `request_id` is the search's id, `created_at` the click's time,
 *   `results` the search's recorded `[{id, score}]` in rank order. The route replaces `chunk_id`
 *   with the clicked chunk itself (`chunk`), as the reference answers.
 * - `searches_without_clicks`: `{queries: [{request_id, query, created_at}]}`, the searches
 *   without a linked click, newest first (ties by id), 10 a page.
 * - `recommendation_ctr_metrics`, `recommendations_with_clicks`,
 *   `recommendations_without_clicks`: the same over recommendations, under `recommendations`,
 *   each `{positive_ids, negative_ids, positive_tracking_ids, negative_tracking_ids, request_id,
 *   created_at[, results, clicked_chunk]}`, an empty id list shown as null (the reference's).
 */
import type { RecommendationKind, SearchKind } from '../../core/domain/analytics.js';
import { jsonText, reportTimestamp, Where, type Dialect, type RangeBounds, type ReportSql } from './report-sql.js';
import { exists } from './linked-events.js';
import { recordRollupTotals, type RecordRollupQuery } from './record-rollup.js';
import type { SearchAnalyticsFilter } from './search-filter.js';
import { rollupBuckets, type RollupBucket } from './search-rollup.js';

/** Filter of the search variants (the reference's `SearchAnalyticsFilter`). */
export interface SearchCtrFilter {
  /** Bounds on the search's `created_at` (epoch ms). */
  readonly dateRange?: RangeBounds;
  /** The recorded kind (`search_type` column). */
  readonly searchType?: SearchKind;
  /** semantic, fulltext, hybrid or bm25 (`search_method` column). */
  readonly searchMethod?: string;
  /** The exact query text. */
  readonly query?: string;
  /** Bounds on the search's latest rating; an unrated search never matches one. */
  readonly queryRating?: RangeBounds;
  readonly topScore?: RangeBounds;
  /** `metadata.component_name` of the search. */
  readonly componentName?: string;
}

/** Filter of the recommendation variants (the reference's `RecommendationAnalyticsFilter`). */
export interface RecommendationCtrFilter {
  /** Bounds on the recommendation's `created_at` (epoch ms). */
  readonly dateRange?: RangeBounds;
  readonly recommendationType?: RecommendationKind;
  readonly topScore?: RangeBounds;
  /** `metadata.component_name` of the recommendation. */
  readonly componentName?: string;
}

/** A page of a listing: LIMIT and OFFSET. */
export interface ReportWindow {
  readonly limit: number;
  readonly offset: number;
}

/** One click-through report, validated. */
export type CtrReportRequest =
  | { readonly type: 'search_ctr_metrics'; readonly filter: SearchCtrFilter }
  | { readonly type: 'searches_with_clicks' | 'searches_without_clicks'; readonly filter: SearchCtrFilter; readonly window: ReportWindow }
  | { readonly type: 'recommendation_ctr_metrics'; readonly filter: RecommendationCtrFilter }
  | {
      readonly type: 'recommendations_with_clicks' | 'recommendations_without_clicks';
      readonly filter: RecommendationCtrFilter;
      readonly window: ReportWindow;
    };

/** The clicked chunk of a `*_with_clicks` row, before the route puts the chunk in. */
export interface ClickedChunkRef {
  readonly chunk_id: string | null;
  readonly position: number | null;
}

/** The rows a report is about: the table (aliased `q`), the joins its filter needs, its WHERE. */
interface Source {
  readonly table: 'search_queries' | 'recommendation_queries';
  readonly joins: string;
  readonly where: Where;
}

/** The records a click links to, as SQL on `q` and `e` (user_events). */
const LINKED_CLICK = "e.request_id = q.id AND e.dataset_id = q.dataset_id AND e.event_type = 'click'";

function searchSource(dialect: Dialect, datasetId: string, f: SearchCtrFilter): Source {
  const where = new Where().add('q.dataset_id = ?', datasetId).range('q.created_at', f.dateRange);
  if (f.searchType !== undefined) where.add('q.search_type = ?', f.searchType);
  if (f.searchMethod !== undefined) where.add('q.search_method = ?', f.searchMethod);
  if (f.query !== undefined) where.add('q.query = ?', f.query);
  where.range('q.top_score', f.topScore);
  if (f.componentName !== undefined) where.add(`${jsonText(dialect, 'q.metadata', 'component_name')} = ?`, f.componentName);
  let joins = '';
  if (f.queryRating) {
    // Only a rating's bounds need the join: an inner one, since an unrated search has no rating to be in them.
    joins = "JOIN query_ratings r ON r.query_id = q.id AND r.dataset_id = q.dataset_id AND r.kind = 'search'";
    where.range('r.rating', f.queryRating);
  }
  return { table: 'search_queries', joins, where };
}

function recommendationSource(dialect: Dialect, datasetId: string, f: RecommendationCtrFilter): Source {
  const where = new Where().add('q.dataset_id = ?', datasetId).range('q.created_at', f.dateRange);
  if (f.recommendationType !== undefined) where.add('q.recommendation_type = ?', f.recommendationType);
  where.range('q.top_score', f.topScore);
  if (f.componentName !== undefined) where.add(`${jsonText(dialect, 'q.metadata', 'component_name')} = ?`, f.componentName);
  return { table: 'recommendation_queries', joins: '', where };
}

/** Counts of a set of records and of their clicks. */
interface Totals {
  readonly records: number;
  readonly withClicks: number;
  readonly avgPosition: number;
}

/**
 * How long before its record's time a click is still looked for. A click comes after the search
 * it follows (both stamped by the service as they arrive), so a report over records from T on
 * reads only the clicks from T on; the margin covers clocks of different machines disagreeing.
 */
const CLICK_CLOCK_MARGIN_MS = 86_400_000;

/**
 * Records matching the source, how many have clicks, and the average position of their clicks.
 * Two statements: the records counted on their own (an index count when only dates filter), and
 * the clicks walked from the click side, each joined to its record by primary key, the records
 * with clicks counted once each (DISTINCT). Walking every record to probe for its clicks costs
 * one probe per record; the clicks are far fewer.
 */
async function totals(sql: ReportSql, datasetId: string, source: Source, range: RangeBounds | undefined): Promise<Totals> {
  const [count] = await sql.all<{ records: number }>(`SELECT COUNT(*) AS records FROM ${source.table} q ${source.joins} ${source.where.sql()}`, source.where.params);
  const lowest = range?.gt ?? range?.gte;
  const clickFloor = lowest === undefined ? '' : ' AND e.created_at >= ?';
  const [clicks] = await sql.all<{ with_clicks: number; positioned: number; position_sum: number | null }>(
    `SELECT COUNT(DISTINCT q.id) AS with_clicks, COUNT(e.position) AS positioned, SUM(e.position) AS position_sum
     FROM user_events e JOIN ${source.table} q ON q.id = e.request_id AND q.dataset_id = e.dataset_id ${source.joins}
     ${source.where.sql()} AND e.dataset_id = ? AND e.event_type = 'click'${clickFloor}`,
    [...source.where.params, datasetId, ...(lowest === undefined ? [] : [lowest - CLICK_CLOCK_MARGIN_MS])],
  );
  const positioned = Number(clicks?.positioned ?? 0);
  return {
    records: Number(count?.records ?? 0),
    withClicks: Number(clicks?.with_clicks ?? 0),
    avgPosition: positioned === 0 ? 0 : Number(clicks!.position_sum) / positioned,
  };
}

/** {@link totals} of searches narrowed by dates, type and method only, from the search rollups (store/reports/search-rollup.ts). */
async function searchRollupTotals(sql: ReportSql, datasetId: string, f: SearchCtrFilter): Promise<Totals> {
  // The rollup rows compare the type and method as stored, whatever names the route accepts.
  const filter = { dateRange: f.dateRange, searchType: f.searchType, searchMethod: f.searchMethod } as SearchAnalyticsFilter;
  const buckets = await rollupBuckets(sql, datasetId, filter, 'month', ['clicked', 'positions']);
  const sum = (of: (b: RollupBucket) => number): number => buckets.reduce((s, b) => s + of(b), 0);
  const positioned = sum((b) => b.positioned);
  return { records: sum((b) => b.n), withClicks: sum((b) => b.clicked), avgPosition: positioned === 0 ? 0 : sum((b) => b.positionSum) / positioned };
}

/** {@link totals} from the record rollups (store/reports/record-rollup.ts). */
async function rollupTotals(sql: ReportSql, datasetId: string, query: RecordRollupQuery): Promise<Totals> {
  const c = await recordRollupTotals(sql, datasetId, query);
  return { records: c.records, withClicks: c.clicked, avgPosition: c.positioned === 0 ? 0 : c.positionSum / c.positioned };
}

const percent = (part: number, whole: number): number => (whole === 0 ? 0 : (part * 100) / whole);

/** A page of the source's records without a linked click, newest first (ties by id). */
function unclickedPage<R extends Record<string, unknown>>(sql: ReportSql, columns: string, source: Source, window: ReportWindow): Promise<R[]> {
  return sql.all<R>(
    `SELECT ${columns} FROM ${source.table} q ${source.joins}
     ${source.where.sql()} AND NOT ${exists(`SELECT 1 FROM user_events e WHERE ${LINKED_CLICK}`)}
     ORDER BY q.created_at DESC, q.id LIMIT ? OFFSET ?`,
    [...source.where.params, window.limit, window.offset],
  );
}

/**
 * A page of the clicks linked to the source's records, newest first (ties by event id), each with
 * its record's columns (`columns`, on `q`) and the click's own as `click_*`.
 */
function clickPage<R extends Record<string, unknown>>(sql: ReportSql, datasetId: string, columns: string, source: Source, window: ReportWindow): Promise<R[]> {
  return sql.all<R>(
    `SELECT ${columns}, e.id AS click_id, e.clicked_chunk_id AS click_chunk_id, e.position AS click_position, e.created_at AS click_created_at
     FROM user_events e JOIN ${source.table} q ON q.id = e.request_id AND q.dataset_id = e.dataset_id ${source.joins}
     ${source.where.sql()} AND e.dataset_id = ? AND e.event_type = 'click'
     ORDER BY e.created_at DESC, e.id LIMIT ? OFFSET ?`,
    [...source.where.params, datasetId, window.limit, window.offset],
  );
}

/** The click columns {@link clickPage} adds to a row. */
type ClickColumns = { click_chunk_id: string | null; click_position: number | null; click_created_at: number };

/** A click row's clicked chunk. */
const clickedChunk = (r: ClickColumns): ClickedChunkRef => ({
  chunk_id: r.click_chunk_id,
  position: r.click_position === null ? null : Number(r.click_position),
});

/** JSON text of a NOT NULL JSON column, parsed (a damaged value shows as null, not a 500). */
function parsed(text: unknown): unknown {
  if (typeof text !== 'string') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

type SearchRow = { id: string; query: string; created_at: number; results: string };
type RecommendationRow = Omit<SearchRow, 'query'> & {
  positive_ids: string;
  negative_ids: string;
  positive_tracking_ids: string;
  negative_tracking_ids: string;
};

const SEARCH_COLUMNS = 'q.id, q.query, q.created_at, q.results';
const RECOMMENDATION_COLUMNS = 'q.id, q.positive_ids, q.negative_ids, q.positive_tracking_ids, q.negative_tracking_ids, q.created_at, q.results';

/** An id list as the reference shows it: null when empty. */
const idList = (text: unknown): unknown => {
  const list = parsed(text);
  return Array.isArray(list) && list.length === 0 ? null : list;
};

const recommendationIds = (r: RecommendationRow) => ({
  positive_ids: idList(r.positive_ids),
  negative_ids: idList(r.negative_ids),
  positive_tracking_ids: idList(r.positive_tracking_ids),
  negative_tracking_ids: idList(r.negative_tracking_ids),
});

/** Runs one click-through report on the dataset's records; the answer is the wire's. */
export async function ctrReport(sql: ReportSql, datasetId: string, request: CtrReportRequest): Promise<Record<string, unknown>> {
  switch (request.type) {
    case 'search_ctr_metrics': {
      const f = request.filter;
      // Only dates, type and method narrow the searches: the search rollups hold the figures.
      const t =
        f.query === undefined && f.queryRating === undefined && f.topScore === undefined && f.componentName === undefined
          ? await searchRollupTotals(sql, datasetId, f)
          : await totals(sql, datasetId, searchSource(sql.dialect, datasetId, f), f.dateRange);
      const withPercent = percent(t.withClicks, t.records);
      return {
        searches_with_clicks: t.withClicks,
        percent_searches_with_clicks: withPercent,
        percent_searches_without_clicks: t.records === 0 ? 0 : 100 - withPercent,
        avg_position_of_click: t.avgPosition,
      };
    }
    case 'recommendation_ctr_metrics': {
      const f = request.filter;
      // Only dates and the type narrow the recommendations: the record rollups hold the figures.
      const t =
        f.topScore === undefined && f.componentName === undefined
          ? await rollupTotals(sql, datasetId, {
              kind: 'recommendation',
              subtype: f.recommendationType,
              dateRange: f.dateRange,
              rated: false,
              raw: (dateRange) => ({ from: 'recommendation_queries q', where: recommendationSource(sql.dialect, datasetId, { ...f, dateRange }).where }),
            })
          : await totals(sql, datasetId, recommendationSource(sql.dialect, datasetId, f), f.dateRange);
      const withPercent = percent(t.withClicks, t.records);
      return {
        recommendations_with_clicks: t.withClicks,
        percent_recommendations_with_clicks: withPercent,
        percent_recommendations_without_clicks: t.records === 0 ? 0 : 100 - withPercent,
        avg_position_of_click: t.avgPosition,
      };
    }
    case 'searches_with_clicks': {
      const rows = await clickPage<SearchRow & ClickColumns>(sql, datasetId, SEARCH_COLUMNS, searchSource(sql.dialect, datasetId, request.filter), request.window);
      return {
        queries: rows.map((r) => ({
          request_id: r.id,
          query: r.query,
          created_at: reportTimestamp(Number(r.click_created_at)),
          results: parsed(r.results),
          clicked_chunk: clickedChunk(r),
        })),
      };
    }
    case 'searches_without_clicks': {
      const rows = await unclickedPage<SearchRow>(sql, SEARCH_COLUMNS, searchSource(sql.dialect, datasetId, request.filter), request.window);
      return { queries: rows.map((r) => ({ request_id: r.id, query: r.query, created_at: reportTimestamp(Number(r.created_at)) })) };
    }
    case 'recommendations_with_clicks': {
      const source = recommendationSource(sql.dialect, datasetId, request.filter);
      const rows = await clickPage<RecommendationRow & ClickColumns>(sql, datasetId, RECOMMENDATION_COLUMNS, source, request.window);
      return {
        recommendations: rows.map((r) => ({
          ...recommendationIds(r),
          results: parsed(r.results),
          request_id: r.id,
          clicked_chunk: clickedChunk(r),
          created_at: reportTimestamp(Number(r.click_created_at)),
        })),
      };
    }
    case 'recommendations_without_clicks': {
      const source = recommendationSource(sql.dialect, datasetId, request.filter);
      const rows = await unclickedPage<RecommendationRow>(sql, RECOMMENDATION_COLUMNS, source, request.window);
      return { recommendations: rows.map((r) => ({ ...recommendationIds(r), request_id: r.id, created_at: reportTimestamp(Number(r.created_at)) })) };
    }
  }
}
