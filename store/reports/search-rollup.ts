/**
 * The search reports' read side of the rollups (../search-rollup-batch.ts): searches counted,
 * latencies summed and their histogram merged over a date range from the hourly and daily rollup
 * rows, instead of walking every search of the range.
 *
 * The range is cut into whole days, whole hours and raw edge hours (./rollup-range.ts). Counts
 * and sums are those of the raw path (sums up to the order of floating-point additions); percentiles come from the histogram, within LATENCY_RELATIVE_ERROR of the exact
 * nearest-rank latency (../latency-histogram.ts).
 */
import { latencyBucket, type LatencyHistogram, addHistogram } from '../latency-histogram.js';
import { DAILY, HOURLY, type RollupTable } from '../search-rollup-batch.js';
import { bucketStart, Where, type Granularity, type ReportSql } from './report-sql.js';
import { planRange, rawRange, rollupSpans, spanWhere, type Span } from './rollup-range.js';
import { EVENT_LINK } from './linked-events.js';
import { HAS_CLICK, HAS_CONVERSION, searchSelection, type SearchAnalyticsFilter } from './search-filter.js';

/**
 * Whether the rollups can answer for `filter` (and a graph's `granularity`): only the date range,
 * search type and method may narrow it, and buckets must be whole hours.
 */
export function rollupServes(filter: SearchAnalyticsFilter, granularity?: Granularity): boolean {
  const narrowsRows = filter.query !== undefined || filter.queryRating !== undefined || filter.topScore !== undefined || filter.componentName !== undefined;
  return !narrowsRows && (granularity === undefined || granularity === 'hour' || granularity === 'day' || granularity === 'month');
}

/** The rollup rows `r` of `table` for the dataset, span, type and method. */
function rollupWhere(table: RollupTable, datasetId: string, filter: SearchAnalyticsFilter, span: Span): Where {
  const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${table.column}`, span);
  if (filter.searchType !== undefined) where.add('r.search_type = ?', filter.searchType);
  if (filter.searchMethod !== undefined) where.add('r.search_method = ?', filter.searchMethod);
  return where;
}

/** The raw searches `q` of the dataset in `span`, of the filter's type and method (with their rating `r`). */
function rawSelection(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter, span: Span, withRating = false) {
  return searchSelection(sql.dialect, datasetId, { searchType: filter.searchType, searchMethod: filter.searchMethod, dateRange: rawRange(span) }, withRating);
}

/** What a graph may ask of the rollups besides searches and latency: linked clicks, conversions, ratings, click positions. */
export type RollupMeasure = 'clicked' | 'converted' | 'ratings' | 'positions';

/** Searches, latency sum (and the measures asked for, else 0) of one graph bucket. */
export interface RollupBucket {
  readonly bucket: number;
  n: number;
  total: number;
  /** Searches with a linked click, and with a linked conversion. */
  clicked: number;
  converted: number;
  /** Rated searches and the sum of their ratings. */
  rated: number;
  ratingSum: number;
  /** Linked clicks with a position, and the sum of those positions. */
  positioned: number;
  positionSum: number;
}

/** An SQL value: `aggregate` over the linked clicks of the raw search `q`. */
const overClicks = (aggregate: string): string => `(SELECT ${aggregate} FROM user_events e WHERE ${EVENT_LINK} AND e.event_type = 'click')`;

/** Select items of the measures, over a rollup row `r` and over a raw search `q` (rating `r`). */
const MEASURE_SQL: Record<RollupMeasure, { rollup: string; raw: string }> = {
  clicked: { rollup: 'SUM(r.clicked) AS clicked', raw: `SUM(CASE WHEN ${HAS_CLICK} THEN 1 ELSE 0 END) AS clicked` },
  converted: { rollup: 'SUM(r.converted) AS converted', raw: `SUM(CASE WHEN ${HAS_CONVERSION} THEN 1 ELSE 0 END) AS converted` },
  ratings: { rollup: 'SUM(r.rated) AS rated, SUM(r.rating_sum) AS rating_sum', raw: 'COUNT(r.rating) AS rated, SUM(r.rating) AS rating_sum' },
  positions: {
    rollup: 'SUM(r.positioned) AS positioned, SUM(r.position_sum) AS position_sum',
    raw: `SUM(${overClicks('COUNT(e.position)')}) AS positioned, SUM(${overClicks('SUM(e.position)')}) AS position_sum`,
  },
};

/**
 * Searches and their latency sum (and `measures`) per bucket of `granularity` (hour, day or
 * month) over the filter's range, oldest first, only non-empty buckets: what the raw path's
 * GROUP BY gives.
 */
export async function rollupBuckets(
  sql: ReportSql,
  datasetId: string,
  filter: SearchAnalyticsFilter,
  granularity: Granularity,
  measures: readonly RollupMeasure[] = [],
): Promise<RollupBucket[]> {
  const plan = planRange(filter.dateRange, granularity !== 'hour');
  const extra = (side: 'rollup' | 'raw'): string => measures.map((m) => `, ${MEASURE_SQL[m][side]}`).join('');
  type Row = {
    bucket: number;
    n: number;
    total: number;
    clicked?: number;
    converted?: number;
    rated?: number;
    rating_sum?: number | null;
    positioned?: number;
    position_sum?: number | null;
  };
  const reads: Promise<Row[]>[] = [];
  for (const [table, span] of rollupSpans(plan, DAILY, HOURLY)) {
    const where = rollupWhere(table, datasetId, filter, span);
    const bucket = bucketStart(sql.dialect, granularity, `r.${table.column}`);
    reads.push(
      sql.all(`SELECT ${bucket} AS bucket, SUM(r.searches) AS n, SUM(r.latency_sum) AS total${extra('rollup')} FROM ${table.table} r ${where.sql()} GROUP BY 1`, where.params),
    );
  }
  for (const span of plan.raw) {
    const { from, where } = rawSelection(sql, datasetId, filter, span, measures.includes('ratings'));
    const bucket = bucketStart(sql.dialect, granularity, 'q.created_at');
    reads.push(sql.all(`SELECT ${bucket} AS bucket, COUNT(*) AS n, SUM(q.latency) AS total${extra('raw')} FROM ${from} ${where.sql()} GROUP BY 1`, where.params));
  }
  const byBucket = new Map<number, RollupBucket>();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const at = Number(r.bucket);
      const b =
        byBucket.get(at) ?? byBucket.set(at, { bucket: at, n: 0, total: 0, clicked: 0, converted: 0, rated: 0, ratingSum: 0, positioned: 0, positionSum: 0 }).get(at)!;
      b.n += Number(r.n);
      b.total += Number(r.total ?? 0);
      b.clicked += Number(r.clicked ?? 0);
      b.converted += Number(r.converted ?? 0);
      b.rated += Number(r.rated ?? 0);
      b.ratingSum += Number(r.rating_sum ?? 0);
      b.positioned += Number(r.positioned ?? 0);
      b.positionSum += Number(r.position_sum ?? 0);
    }
  }
  return [...byBucket.values()].filter((b) => b.n > 0).sort((a, b) => a.bucket - b.bucket);
}

/** Searches, latency sum and rated searches of one (search type, search method). */
export interface RollupGroup {
  readonly searchType: string;
  readonly searchMethod: string;
  n: number;
  total: number;
  /** Rated searches, and those rated >= 1 and <= 0 (only when the histogram was asked for). */
  rated: number;
  positive: number;
  negative: number;
}

/** What {@link rollupTotals} gives. */
export interface RollupTotals {
  /** Per (type, method), those with searches only. */
  readonly groups: RollupGroup[];
  /** The latency histogram of all of them (only when asked for). */
  readonly histogram: LatencyHistogram;
}

/**
 * Searches and latency sums per (search type, search method) over the filter's range, and with
 * `withHistogram` the range's latency histogram and rating counts.
 */
export async function rollupTotals(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter, withHistogram: boolean): Promise<RollupTotals> {
  const plan = planRange(filter.dateRange, true);
  type Row = {
    search_type: string;
    search_method: string;
    n: number;
    total: number;
    latency_histogram?: string;
    latency?: number;
    rated?: number;
    positive?: number;
    negative?: number;
    rating?: number | null;
  };
  const reads: Promise<Row[]>[] = [];
  for (const [table, span] of rollupSpans(plan, DAILY, HOURLY)) {
    const where = rollupWhere(table, datasetId, filter, span);
    // With the histogram, every row (a few thousand at most: whole days, then the edge hours);
    // without, summed in SQL.
    reads.push(
      sql.all<Row>(
        withHistogram
          ? `SELECT r.search_type AS search_type, r.search_method AS search_method, r.searches AS n, r.latency_sum AS total, r.latency_histogram AS latency_histogram,
               r.rated AS rated, r.positive AS positive, r.negative AS negative FROM ${table.table} r ${where.sql()}`
          : `SELECT r.search_type AS search_type, r.search_method AS search_method, SUM(r.searches) AS n, SUM(r.latency_sum) AS total FROM ${table.table} r ${where.sql()} GROUP BY r.search_type, r.search_method`,
        where.params,
      ),
    );
  }
  for (const span of plan.raw) {
    const { from, where } = rawSelection(sql, datasetId, filter, span, withHistogram);
    reads.push(
      sql.all<Row>(
        withHistogram
          ? `SELECT q.search_type AS search_type, q.search_method AS search_method, 1 AS n, q.latency AS total, q.latency AS latency, r.rating AS rating FROM ${from} ${where.sql()}`
          : `SELECT q.search_type AS search_type, q.search_method AS search_method, COUNT(*) AS n, SUM(q.latency) AS total FROM ${from} ${where.sql()} GROUP BY q.search_type, q.search_method`,
        where.params,
      ),
    );
  }
  const groups = new Map<string, RollupGroup>();
  const histogram: LatencyHistogram = new Map();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const key = `${r.search_type}\u0000${r.search_method}`;
      const g =
        groups.get(key) ?? groups.set(key, { searchType: r.search_type, searchMethod: r.search_method, n: 0, total: 0, rated: 0, positive: 0, negative: 0 }).get(key)!;
      g.n += Number(r.n);
      g.total += Number(r.total ?? 0);
      if (r.latency_histogram !== undefined) {
        addHistogram(histogram, r.latency_histogram);
        g.rated += Number(r.rated);
        g.positive += Number(r.positive);
        g.negative += Number(r.negative);
      } else if (r.latency !== undefined) {
        const b = latencyBucket(Number(r.latency));
        histogram.set(b, (histogram.get(b) ?? 0) + 1);
        if (r.rating !== null && r.rating !== undefined) {
          g.rated += 1;
          if (Number(r.rating) >= 1) g.positive += 1;
          if (Number(r.rating) <= 0) g.negative += 1;
        }
      }
    }
  }
  return { groups: [...groups.values()].filter((g) => g.n > 0), histogram };
}
