/**
 * The RAG and recommendation reports' read side of the record rollups (../record-rollup-batch.ts):
 * records counted, rated, clicked and converted per bucket, and the user events linked to them
 * counted by name, over a date range from the hourly and daily rollup rows (whole days and hours,
 * ./rollup-range.ts) and the raw records of the partial edge hours, instead of walking every
 * record of the range. Every figure is the raw path's (rating sums up to the order of additions).
 *
 * They serve a report when its filter narrows the records by nothing but the date range and the
 * subtype (`rag_type`, `recommendation_type`), and a graph's buckets are whole hours.
 */
import { RECORD_DAILY, RECORD_EVENT_DAILY, RECORD_EVENT_HOURLY, RECORD_HOURLY, type RecordCounts, type RecordKind } from '../record-rollup-batch.js';
import { rankedNames, type EventNameCount } from './event-rollup.js';
import { EVENT_LINK, HAS_CLICK, HAS_CONVERSION } from './linked-events.js';
import { bucketStart, Where, type Granularity, type RangeBounds, type ReportSql } from './report-sql.js';
import { ratio, toPoints, type TimePoint } from './rag-series.js';
import { planRange, rawRange, rollupSpans, spanWhere, type Span } from './rollup-range.js';

/** Whether the rollups can bucket a graph of `granularity` (whole UTC hours). */
export const recordRollupBuckets = (granularity: Granularity): boolean => granularity === 'hour' || granularity === 'day' || granularity === 'month';

/** The records a rollup read is about. */
export interface RecordRollupQuery {
  readonly kind: RecordKind;
  /** The subtype the filter asks for, or all. */
  readonly subtype: string | undefined;
  readonly dateRange: RangeBounds | undefined;
  /** The raw records `q` of the dataset (with their rating joined as `r` when they are rated) in one edge span, narrowed as the rollups are. */
  readonly raw: (dateRange: RangeBounds) => { readonly from: string; readonly where: Where };
  /** Whether the raw records are rated (`r.rating` joined). */
  readonly rated: boolean;
}

/** The counts of one graph bucket. */
export type RecordBucket = { readonly bucket: number } & RecordCounts;

/** The rollup rows `r` of `column` for the dataset, span, kind and subtype. */
function rollupWhere(column: string, datasetId: string, query: RecordRollupQuery, span: Span): Where {
  const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${column}`, span).add('r.kind = ?', query.kind);
  if (query.subtype !== undefined) where.add('r.subtype = ?', query.subtype);
  return where;
}

/**
 * The counts per bucket of `granularity` (or, without one, one bucket 0 for the whole range),
 * oldest first, only buckets holding a record: what the raw path's GROUP BY gives.
 */
export async function recordRollupCounts(sql: ReportSql, datasetId: string, query: RecordRollupQuery, granularity?: Granularity): Promise<RecordBucket[]> {
  const plan = planRange(query.dateRange, granularity !== 'hour');
  type Row = {
    bucket: number;
    n: number;
    rated?: number;
    positive?: number;
    negative?: number;
    rating_sum?: number | null;
    clicked?: number;
    converted?: number;
    positioned?: number;
    position_sum?: number | null;
  };
  const reads: Promise<Row[]>[] = [];
  for (const [table, span] of rollupSpans(plan, RECORD_DAILY, RECORD_HOURLY)) {
    const where = rollupWhere(table.column, datasetId, query, span);
    const bucket = granularity === undefined ? '0' : bucketStart(sql.dialect, granularity, `r.${table.column}`);
    reads.push(
      sql.all(
        `SELECT ${bucket} AS bucket, SUM(r.records) AS n, SUM(r.rated) AS rated, SUM(r.positive) AS positive, SUM(r.negative) AS negative,
           SUM(r.rating_sum) AS rating_sum, SUM(r.clicked) AS clicked, SUM(r.converted) AS converted, SUM(r.positioned) AS positioned,
           SUM(r.position_sum) AS position_sum FROM ${table.table} r ${where.sql()} GROUP BY 1`,
        where.params,
      ),
    );
  }
  for (const span of plan.raw) {
    const { from, where } = query.raw(rawRange(span));
    const bucket = granularity === undefined ? '0' : bucketStart(sql.dialect, granularity, 'q.created_at');
    const rating = query.rated ? 'r.rating' : 'CAST(NULL AS INTEGER)';
    reads.push(
      sql.all(
        `SELECT ${bucket} AS bucket, COUNT(*) AS n, COUNT(${rating}) AS rated, SUM(CASE WHEN ${rating} >= 1 THEN 1 ELSE 0 END) AS positive,
           SUM(CASE WHEN ${rating} <= 0 THEN 1 ELSE 0 END) AS negative, SUM(${rating}) AS rating_sum,
           SUM(CASE WHEN ${HAS_CLICK} THEN 1 ELSE 0 END) AS clicked, SUM(CASE WHEN ${HAS_CONVERSION} THEN 1 ELSE 0 END) AS converted
         FROM ${from} ${where.sql()} GROUP BY 1`,
        where.params,
      ),
    );
    // The positions of the records' clicks: a join of its own (n 0: it adds no record).
    reads.push(
      sql.all(
        `SELECT ${bucket} AS bucket, 0 AS n, COUNT(e.position) AS positioned, SUM(e.position) AS position_sum
         FROM ${from} JOIN user_events e ON ${EVENT_LINK} AND e.event_type = 'click' ${where.sql()} GROUP BY 1`,
        where.params,
      ),
    );
  }
  const byBucket = new Map<number, RecordBucket>();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const at = Number(r.bucket);
      const b =
        byBucket.get(at) ??
        byBucket.set(at, { bucket: at, records: 0, rated: 0, positive: 0, negative: 0, ratingSum: 0, clicked: 0, converted: 0, positioned: 0, positionSum: 0 }).get(at)!;
      b.records += Number(r.n);
      b.rated += Number(r.rated ?? 0);
      b.positive += Number(r.positive ?? 0);
      b.negative += Number(r.negative ?? 0);
      b.ratingSum += Number(r.rating_sum ?? 0);
      b.clicked += Number(r.clicked ?? 0);
      b.converted += Number(r.converted ?? 0);
      b.positioned += Number(r.positioned ?? 0);
      b.positionSum += Number(r.position_sum ?? 0);
    }
  }
  return [...byBucket.values()].filter((b) => b.records > 0).sort((a, b) => a.bucket - b.bucket);
}

/** The counts over the whole range (all zero when no record). */
export async function recordRollupTotals(sql: ReportSql, datasetId: string, query: RecordRollupQuery): Promise<RecordCounts> {
  const [all] = await recordRollupCounts(sql, datasetId, query);
  return all ?? { records: 0, rated: 0, positive: 0, negative: 0, ratingSum: 0, clicked: 0, converted: 0, positioned: 0, positionSum: 0 };
}

/** The user events linked to the records, counted by name, most first (ties by name in code-point order). */
export async function recordRollupEventNames(sql: ReportSql, datasetId: string, query: RecordRollupQuery): Promise<EventNameCount[]> {
  const plan = planRange(query.dateRange, true);
  const reads: Promise<{ event_name: string; n: number }[]>[] = [];
  for (const [table, span] of rollupSpans(plan, RECORD_EVENT_DAILY, RECORD_EVENT_HOURLY)) {
    const where = rollupWhere(table.column, datasetId, query, span);
    reads.push(sql.all(`SELECT r.event_name AS event_name, SUM(r.events) AS n FROM ${table.table} r ${where.sql()} GROUP BY r.event_name`, where.params));
  }
  for (const span of plan.raw) {
    const { from, where } = query.raw(rawRange(span));
    reads.push(sql.all(`SELECT e.event_name AS event_name, COUNT(*) AS n FROM ${from} JOIN user_events e ON ${EVENT_LINK} ${where.sql()} GROUP BY e.event_name`, where.params));
  }
  return rankedNames(await Promise.all(reads));
}

/** The share of records with a linked click (or conversion) per bucket, and over all of them, as the raw path's shareOverTime gives it. */
export function rollupShare(buckets: readonly RecordBucket[], measure: 'clicked' | 'converted'): { total: number; points: TimePoint[] } {
  const records = buckets.reduce((sum, b) => sum + b.records, 0);
  const hits = buckets.reduce((sum, b) => sum + b[measure], 0);
  return { total: ratio(hits, records), points: toPoints(buckets, (b) => ratio(b[measure], b.records)) };
}
