/**
 * How a report's date range is read from hourly and daily rollups (the search rollups,
 * ./search-rollup.ts, and the user event rollups, ./event-rollup.ts): a range [lo, hi) is cut at
 * hour (and day) boundaries; the whole days inside it come from the daily rollup, the whole hours
 * around them from the hourly one, and the partial hours at its edges from the raw rows (read by
 * the table's (dataset_id, created_at) index, at most two hours' worth). Rollup rows are whole
 * UTC hours and days, and the report buckets of hour, day and month are unions of UTC hours (and
 * of UTC days, for day and month), so each rollup row falls in one bucket.
 */
import { DAY_MS, HOUR_MS, type PeriodTable } from '../search-rollup-batch.js';
import type { RangeBounds, Where } from './report-sql.js';

/** A half-open interval of epoch ms, either end possibly infinite. */
export type Span = readonly [number, number];

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
export interface RangePlan {
  readonly raw: Span[];
  readonly hours: Span[];
  readonly days: Span[];
}

/** Cuts `range` into raw edges, whole hours and (with `withDays`) whole days. */
export function planRange(range: RangeBounds | undefined, withDays: boolean): RangePlan {
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

/** The rollup table and span of each rollup part of a plan: whole days from `daily`, then whole hours from `hourly`. */
export const rollupSpans = <T extends PeriodTable>(plan: RangePlan, daily: T, hourly: T): (readonly [T, Span])[] => [
  ...plan.days.map((span) => [daily, span] as const),
  ...plan.hours.map((span) => [hourly, span] as const),
];

/** Conditions on the date column `column` for `span` (none for an infinite end). */
export function spanWhere(where: Where, column: string, [lo, hi]: Span): Where {
  if (Number.isFinite(lo)) where.add(`${column} >= ?`, lo);
  if (Number.isFinite(hi)) where.add(`${column} < ?`, hi);
  return where;
}

/** A raw edge span as a report's date range. */
export const rawRange = ([lo, hi]: Span): RangeBounds => ({ ...(Number.isFinite(lo) ? { gte: lo } : {}), ...(Number.isFinite(hi) ? { lt: hi } : {}) });
