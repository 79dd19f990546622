/**
 * What the report oracles of the store contract tests compute the same way: whether a time is in
 * a report's date range, and the UTC bucket of a time at a granularity.
 */
import type { Granularity, RangeBounds } from '../../store/reports/report-sql.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';

/** Whether `ms` is inside `range` (none: everything is). */
export const inRange = (ms: number, range: RangeBounds | undefined): boolean =>
  (range?.gte === undefined || ms >= range.gte) &&
  (range?.gt === undefined || ms > range.gt) &&
  (range?.lt === undefined || ms < range.lt) &&
  (range?.lte === undefined || ms <= range.lte);

/** The start (epoch ms) of the UTC hour, day or month holding `ms`. */
export const bucketOf = (ms: number, g: Granularity): number => {
  if (g === 'hour') return Math.floor(ms / HOUR_MS) * HOUR_MS;
  if (g === 'day') return Math.floor(ms / DAY_MS) * DAY_MS;
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
