/**
 * Graphs and counts shared by the RAG and recommendation reports, over records aliased `q` (an
 * answer or a recommendation): one point per non-empty bucket of `q.created_at`, oldest first,
 * stamped as the reference prints ClickHouse's times; a user event links to `q` by `request_id`
 * in the same dataset. Also an ORDER BY on text that both engines sort the same way.
 */
import { EVENT_LINK } from './linked-events.js';
import { bucketStart, reportTimestamp, type Dialect, type Granularity, type ReportSql, type Where } from './report-sql.js';

/** One point of a graph. */
export interface TimePoint {
  readonly time_stamp: string;
  readonly point: number;
}

/** A row of a bucketed statement: the bucket start (epoch ms) and its figures. */
export type BucketRow = { readonly bucket: number | string };

/** The points of bucketed rows (already oldest first), each valued by `value`. */
export function toPoints<R extends BucketRow>(rows: readonly R[], value: (row: R) => number): TimePoint[] {
  return rows.map((row) => ({ time_stamp: reportTimestamp(Number(row.bucket)), point: value(row) }));
}

/** `part / whole`, 0 when nothing was counted. */
export const ratio = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);

/**
 * `expr` (text) for ORDER BY in code-point order on both engines: PostgreSQL would otherwise sort
 * by the database's locale (case and punctuation folded), SQLite bytewise.
 */
export const binaryOrder = (dialect: Dialect, expr: string): string => (dialect === 'sqlite' ? `${expr} COLLATE BINARY` : `${expr} COLLATE "C"`);

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** Records `q` a graph reads: FROM and WHERE (with its parameters). */
export interface SeriesSource {
  readonly from: string;
  readonly where: Where;
}

/** Records per bucket of `q.created_at`, and their total. */
export async function countOverTime(sql: ReportSql, source: SeriesSource, granularity: Granularity): Promise<{ total: number; points: TimePoint[] }> {
  const rows = await sql.all<{ bucket: number; n: number }>(
    `SELECT ${bucketStart(sql.dialect, granularity, 'q.created_at')} AS bucket, COUNT(*) AS n FROM ${source.from} ${source.where.sql()}
     GROUP BY bucket ORDER BY bucket`,
    source.where.params,
  );
  return { total: rows.reduce((sum, r) => sum + num(r.n), 0), points: toPoints(rows, (r) => num(r.n)) };
}

/**
 * The fraction of records meeting `condition` (SQL on `q`) per bucket of `q.created_at`, and over
 * all of them (not the mean of the buckets: a bucket of one record weighs as one record).
 */
export async function shareOverTime(
  sql: ReportSql,
  source: SeriesSource,
  granularity: Granularity,
  condition: string,
): Promise<{ total: number; points: TimePoint[] }> {
  const rows = await sql.all<{ bucket: number; n: number; hits: number }>(
    `SELECT ${bucketStart(sql.dialect, granularity, 'q.created_at')} AS bucket, COUNT(*) AS n, SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END) AS hits
     FROM ${source.from} ${source.where.sql()} GROUP BY bucket ORDER BY bucket`,
    source.where.params,
  );
  const records = rows.reduce((sum, r) => sum + num(r.n), 0);
  const hits = rows.reduce((sum, r) => sum + num(r.hits), 0);
  return { total: ratio(hits, records), points: toPoints(rows, (r) => ratio(num(r.hits), num(r.n))) };
}

/**
 * Records with a user per distinct `q.user_id`, per bucket of `q.created_at` and over the whole
 * range (users recur across buckets: the range's count is a statement of its own). Records
 * without a user are left out, as `searches_per_user` leaves them out.
 */
export async function perUserOverTime(sql: ReportSql, source: SeriesSource, granularity: Granularity): Promise<{ total: number; points: TimePoint[] }> {
  const where = `${source.where.sql()} AND q.user_id IS NOT NULL`;
  const rows = await sql.all<{ bucket: number; n: number; users: number }>(
    `SELECT ${bucketStart(sql.dialect, granularity, 'q.created_at')} AS bucket, COUNT(*) AS n, COUNT(DISTINCT q.user_id) AS users
     FROM ${source.from} ${where} GROUP BY bucket ORDER BY bucket`,
    source.where.params,
  );
  const [all] = await sql.all(`SELECT COUNT(*) AS n, COUNT(DISTINCT q.user_id) AS users FROM ${source.from} ${where}`, source.where.params);
  return { total: ratio(num(all?.n), num(all?.users)), points: toPoints(rows, (r) => ratio(num(r.n), num(r.users))) };
}

/** The user events linked to the records, counted by name, most frequent first (ties by name in code-point order). */
export async function linkedEventNames(sql: ReportSql, source: SeriesSource): Promise<{ event_name: string; event_count: number }[]> {
  const rows = await sql.all<{ name: string; n: number }>(
    `SELECT e.event_name AS name, COUNT(*) AS n FROM ${source.from} JOIN user_events e ON ${EVENT_LINK}
     ${source.where.sql()} GROUP BY e.event_name ORDER BY n DESC, ${binaryOrder(sql.dialect, 'e.event_name')}`,
    source.where.params,
  );
  return rows.map((r) => ({ event_name: r.name, event_count: num(r.n) }));
}
