/**
 * The search reports' read side of the rollups (../search-rollup-batch.ts): searches counted,
 * latencies summed and their histogram merged over a date range from the hourly and daily rollup
 * rows, instead of walking every search of the range.
 *
 * A range [lo, hi) is cut at hour (and day) boundaries: the whole days inside it come from the
 * daily rollup, the whole hours around them from the hourly one, and the partial hours at its
 * edges from the raw rows (read by the (dataset_id, created_at) index, at most two hours'
 * worth). Rollup rows are whole UTC hours and days, and the report buckets of hour, day and month
 * are unions of UTC hours (and of UTC days, for day and month), so each rollup row falls in one
 * bucket. Counts and sums are those of the raw path (sums up to the order of floating-point
 * additions); percentiles come from the histogram, within LATENCY_RELATIVE_ERROR of the exact
 * nearest-rank latency (../latency-histogram.ts).
 */
import { latencyBucket, type LatencyHistogram, addHistogram } from '../latency-histogram.js';
import { DAILY, DAY_MS, HOUR_MS, HOURLY, type RollupTable } from '../search-rollup-batch.js';
import { bucketStart, Where, type Granularity, type RangeBounds, type ReportSql } from './report-sql.js';
import { HAS_CLICK, HAS_CONVERSION, searchSelection, type SearchAnalyticsFilter } from './search-filter.js';

/**
 * Whether the rollups can answer for `filter` (and a graph's `granularity`): only the date range,
 * search type and method may narrow it, and buckets must be whole hours.
 */
export function rollupServes(filter: SearchAnalyticsFilter, granularity?: Granularity): boolean {
  const narrowsRows = filter.query !== undefined || filter.queryRating !== undefined || filter.topScore !== undefined || filter.componentName !== undefined;
  return !narrowsRows && (granularity === undefined || granularity === 'hour' || granularity === 'day' || granularity === 'month');
}

/** A half-open interval of epoch ms, either end possibly infinite. */
type Span = readonly [number, number];

/** The range's bounds as [lo, hi) over integer ms (created_at is an integer). */
function rangeSpan(range: RangeBounds | undefined): Span {
  let lo = -Infinity;
  let hi = Infinity;
  if (range?.gte !== undefined) lo = Math.max(lo, Math.ceil(range.gte));
  if (range?.gt !== undefined) lo = Math.max(lo, Math.floor(range.gt) + 1);
  if (range?.lt !== undefined) hi = Math.min(hi, Math.ceil(range.lt));
  if (range?.lte !== undefined) hi = Math.min(hi, Math.floor(range.lte) + 1);
  return [lo, hi];
}

const ceilTo = (ms: number, p: number): number => (Number.isFinite(ms) ? Math.ceil(ms / p) * p : ms);
const floorTo = (ms: number, p: number): number => (Number.isFinite(ms) ? Math.floor(ms / p) * p : ms);

/** Where each part of a range is read from. */
interface RangePlan {
  readonly raw: Span[];
  readonly hours: Span[];
  readonly days: Span[];
}

/** Cuts `range` into raw edges, whole hours and (with `withDays`) whole days. */
function planRange(range: RangeBounds | undefined, withDays: boolean): RangePlan {
  const [lo, hi] = rangeSpan(range);
  if (!(lo < hi)) return { raw: [], hours: [], days: [] };
  const h0 = ceilTo(lo, HOUR_MS);
  const h1 = floorTo(hi, HOUR_MS);
  if (!(h0 < h1)) return { raw: [[lo, hi]], hours: [], days: [] };
  const raw: Span[] = [];
  if (lo < h0) raw.push([lo, h0]);
  if (h1 < hi) raw.push([h1, hi]);
  const d0 = ceilTo(h0, DAY_MS);
  const d1 = floorTo(h1, DAY_MS);
  if (!withDays || !(d0 < d1)) return { raw, hours: [[h0, h1]], days: [] };
  const hours: Span[] = [];
  if (h0 < d0) hours.push([h0, d0]);
  if (d1 < h1) hours.push([d1, h1]);
  return { raw, hours, days: [[d0, d1]] };
}

/** The rollup table and span of each rollup part of a plan: whole days, then whole hours. */
const rollupSpans = (plan: RangePlan): (readonly [RollupTable, Span])[] => [
  ...plan.days.map((span) => [DAILY, span] as const),
  ...plan.hours.map((span) => [HOURLY, span] as const),
];

/** Conditions on the date column `column` for `span` (none for an infinite end). */
function spanWhere(where: Where, column: string, [lo, hi]: Span): Where {
  if (Number.isFinite(lo)) where.add(`${column} >= ?`, lo);
  if (Number.isFinite(hi)) where.add(`${column} < ?`, hi);
  return where;
}

/** The rollup rows `r` of `table` for the dataset, span, type and method. */
function rollupWhere(table: RollupTable, datasetId: string, filter: SearchAnalyticsFilter, span: Span): Where {
  const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${table.column}`, span);
  if (filter.searchType !== undefined) where.add('r.search_type = ?', filter.searchType);
  if (filter.searchMethod !== undefined) where.add('r.search_method = ?', filter.searchMethod);
  return where;
}

/** The raw searches `q` of the dataset in `span`, of the filter's type and method (with their rating `r`). */
function rawSelection(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter, [lo, hi]: Span, withRating = false) {
  const dateRange = { ...(Number.isFinite(lo) ? { gte: lo } : {}), ...(Number.isFinite(hi) ? { lt: hi } : {}) };
  return searchSelection(sql.dialect, datasetId, { searchType: filter.searchType, searchMethod: filter.searchMethod, dateRange }, withRating);
}

/** What a graph may ask of the rollups besides searches and latency: linked clicks, conversions, ratings. */
export type RollupMeasure = 'clicked' | 'converted' | 'ratings';

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
}

/** Select items of the measures, over a rollup row `r` and over a raw search `q` (rating `r`). */
const MEASURE_SQL: Record<RollupMeasure, { rollup: string; raw: string }> = {
  clicked: { rollup: 'SUM(r.clicked) AS clicked', raw: `SUM(CASE WHEN ${HAS_CLICK} THEN 1 ELSE 0 END) AS clicked` },
  converted: { rollup: 'SUM(r.converted) AS converted', raw: `SUM(CASE WHEN ${HAS_CONVERSION} THEN 1 ELSE 0 END) AS converted` },
  ratings: { rollup: 'SUM(r.rated) AS rated, SUM(r.rating_sum) AS rating_sum', raw: 'COUNT(r.rating) AS rated, SUM(r.rating) AS rating_sum' },
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
  type Row = { bucket: number; n: number; total: number; clicked?: number; converted?: number; rated?: number; rating_sum?: number | null };
  const reads: Promise<Row[]>[] = [];
  for (const [table, span] of rollupSpans(plan)) {
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
      const b = byBucket.get(at) ?? byBucket.set(at, { bucket: at, n: 0, total: 0, clicked: 0, converted: 0, rated: 0, ratingSum: 0 }).get(at)!;
      b.n += Number(r.n);
      b.total += Number(r.total ?? 0);
      b.clicked += Number(r.clicked ?? 0);
      b.converted += Number(r.converted ?? 0);
      b.rated += Number(r.rated ?? 0);
      b.ratingSum += Number(r.rating_sum ?? 0);
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
  for (const [table, span] of rollupSpans(plan)) {
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
