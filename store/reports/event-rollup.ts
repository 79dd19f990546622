/**
 * The reports' read side of the user event rollups (../event-rollup-batch.ts): events counted by
 * name and purchase revenue summed per bucket over a date range (all purchases, or those linked to
 * a stored search or answer), from the hourly and daily rollup rows (whole days and hours,
 * ./rollup-range.ts) and the raw events of the partial edge hours, instead of walking every event
 * of the range. Counts are the raw path's; revenue sums are up to the order of floating-point
 * additions.
 */
import { EVENT_DAILY, EVENT_HOURLY, type EventLinkTarget } from '../event-rollup-batch.js';
import { bucketStart, Where, type Granularity, type RangeBounds, type ReportSql } from './report-sql.js';
import { planRange, rawRange, rollupSpans, spanWhere } from './rollup-range.js';

/** Whether the rollups can bucket a graph of `granularity` (whole UTC hours). */
export const eventRollupServes = (granularity: Granularity): boolean => granularity === 'hour' || granularity === 'day' || granularity === 'month';

/** An event name and how many events of the range have it. */
export interface EventNameCount {
  readonly event_name: string;
  readonly event_count: number;
}

/**
 * The dataset's user events created in `dateRange`, counted by name, most first (ties by name in
 * code-point order, as both engines' ORDER BY gives it: UTF-8 bytes, not JS's UTF-16 units).
 */
export async function rollupEventNames(sql: ReportSql, datasetId: string, dateRange: RangeBounds | undefined): Promise<EventNameCount[]> {
  const plan = planRange(dateRange, true);
  const reads: Promise<{ event_name: string; n: number }[]>[] = [];
  for (const [table, span] of rollupSpans(plan, EVENT_DAILY, EVENT_HOURLY)) {
    const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${table.column}`, span);
    reads.push(sql.all(`SELECT r.event_name AS event_name, SUM(r.events) AS n FROM ${table.table} r ${where.sql()} GROUP BY r.event_name`, where.params));
  }
  for (const span of plan.raw) {
    const where = new Where().add('e.dataset_id = ?', datasetId).range('e.created_at', rawRange(span));
    reads.push(sql.all(`SELECT e.event_name AS event_name, COUNT(*) AS n FROM user_events e ${where.sql()} GROUP BY e.event_name`, where.params));
  }
  return rankedNames(await Promise.all(reads));
}

/**
 * Per-name counts from several reads summed, most first (ties by name in code-point order, as both
 * engines' ORDER BY gives it: UTF-8 bytes, not JS's UTF-16 units), names counting none left out.
 */
export function rankedNames(reads: readonly (readonly { event_name: string; n: unknown }[])[]): EventNameCount[] {
  const counts = new Map<string, number>();
  for (const rows of reads) for (const r of rows) counts.set(r.event_name, (counts.get(r.event_name) ?? 0) + Number(r.n));
  return [...counts]
    .filter(([, n]) => n > 0)
    .map(([event_name, event_count]) => ({ event_name, event_count, bytes: Buffer.from(event_name, 'utf8') }))
    .sort((a, b) => b.event_count - a.event_count || Buffer.compare(a.bytes, b.bytes))
    .map(({ event_name, event_count }) => ({ event_name, event_count }));
}

/** The SQL condition on a raw user event `e`: it is linked to a record of `target` in its own dataset. */
export const linkedTo = (target: EventLinkTarget): string => `EXISTS (SELECT 1 FROM ${target.table} l WHERE l.id = e.request_id AND l.dataset_id = e.dataset_id)`;

/**
 * The revenue of the dataset's purchases created in `dateRange` (with `target`, only those linked
 * to one of its records), per bucket of `granularity` (hour, day or month: {@link eventRollupServes}),
 * oldest first, only buckets with such a purchase.
 */
export async function rollupRevenueBuckets(
  sql: ReportSql,
  datasetId: string,
  dateRange: RangeBounds | undefined,
  granularity: Granularity,
  target?: EventLinkTarget,
): Promise<{ bucket: number; revenue: number }[]> {
  const plan = planRange(dateRange, granularity !== 'hour');
  const [events, revenue] = target ? [target.eventsColumn, target.revenueColumn] : ['events', 'revenue'];
  const reads: Promise<{ bucket: number; n: number; revenue: number | null }[]>[] = [];
  for (const [table, span] of rollupSpans(plan, EVENT_DAILY, EVENT_HOURLY)) {
    const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${table.column}`, span).add(`r.event_type = 'purchase'`);
    const bucket = bucketStart(sql.dialect, granularity, `r.${table.column}`);
    reads.push(sql.all(`SELECT ${bucket} AS bucket, SUM(r.${events}) AS n, SUM(r.${revenue}) AS revenue FROM ${table.table} r ${where.sql()} GROUP BY 1`, where.params));
  }
  for (const span of plan.raw) reads.push(rawRevenueRows(sql, datasetId, rawRange(span), granularity, target));
  const byBucket = new Map<number, { bucket: number; n: number; revenue: number }>();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const at = Number(r.bucket);
      const b = byBucket.get(at) ?? byBucket.set(at, { bucket: at, n: 0, revenue: 0 }).get(at)!;
      b.n += Number(r.n);
      b.revenue += Number(r.revenue ?? 0);
    }
  }
  return [...byBucket.values()].filter((b) => b.n > 0).sort((a, b) => a.bucket - b.bucket).map(({ bucket, revenue }) => ({ bucket, revenue }));
}

/** Per bucket, the purchases of the raw events in `dateRange` (linked to a record of `target`, with one) and their revenue. */
function rawRevenueRows(
  sql: ReportSql,
  datasetId: string,
  dateRange: RangeBounds | undefined,
  granularity: Granularity,
  target: EventLinkTarget | undefined,
): Promise<{ bucket: number; n: number; revenue: number | null }[]> {
  const where = new Where().add('e.dataset_id = ?', datasetId).range('e.created_at', dateRange).add(`e.event_type = 'purchase'`);
  if (target) where.add(linkedTo(target));
  const bucket = bucketStart(sql.dialect, granularity, 'e.created_at');
  return sql.all(`SELECT ${bucket} AS bucket, COUNT(*) AS n, SUM(e.revenue) AS revenue FROM user_events e ${where.sql()} GROUP BY 1 ORDER BY 1`, where.params);
}

/**
 * The revenue of the dataset's purchases created in `dateRange`, per bucket of their `created_at`,
 * oldest first, only buckets with a purchase, from the raw events; with `target` only those linked
 * to one of its records.
 */
export async function rawPurchaseRevenue(
  sql: ReportSql,
  datasetId: string,
  dateRange: RangeBounds | undefined,
  granularity: Granularity,
  target?: EventLinkTarget,
): Promise<{ bucket: number; revenue: number }[]> {
  const rows = await rawRevenueRows(sql, datasetId, dateRange, granularity, target);
  return rows.map((r) => ({ bucket: Number(r.bucket), revenue: Number(r.revenue ?? 0) }));
}

/**
 * The revenue of the dataset's purchases created in `dateRange` (with `target`, only those linked
 * to one of its records), per bucket of their `created_at`, oldest first, only buckets with such a
 * purchase: from the rollups when the buckets are whole hours, else from the raw events.
 */
export async function purchaseRevenue(
  sql: ReportSql,
  datasetId: string,
  dateRange: RangeBounds | undefined,
  granularity: Granularity,
  target?: EventLinkTarget,
): Promise<{ bucket: number; revenue: number }[]> {
  if (eventRollupServes(granularity)) return rollupRevenueBuckets(sql, datasetId, dateRange, granularity, target);
  return rawPurchaseRevenue(sql, datasetId, dateRange, granularity, target);
}
