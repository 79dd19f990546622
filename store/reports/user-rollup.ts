/**
 * The per-user reports' read side of the per-user rollups (../user-rollup-batch.ts):
 * `searches_per_user`, `messages_per_user` and `recommendations_per_user` from the hourly and
 * daily sets of users (whole days and hours, ./rollup-range.ts) and the raw records of the partial
 * edge hours, instead of a distinct count over every record of the range.
 *
 * A bucket whose records all sit in one rollup row (one hour's or one day's row of one type and
 * method, or of {@link ANY}) takes that row's `users`; any other is the union of its rows' sets and
 * its raw records' users (their ordinals), as is the range's total. Every figure is the raw
 * path's: the sets are exact.
 */
import { ANY, USER_DAILY, USER_HOURLY, USER_ORDINALS, type UserRollupTable, type UserSource } from '../user-rollup-batch.js';
import { UserBits } from '../user-set.js';
import { bucketStart, Where, type Granularity, type RangeBounds, type ReportSql } from './report-sql.js';
import { planRange, rawRange, rollupSpans, spanWhere, type RangePlan, type Span } from './rollup-range.js';
import { ratio, toPoints, type TimePoint } from './rag-series.js';
import type { RecordRollupQuery } from './record-rollup.js';

/** The records a per-user report counts. */
export interface UserRollupQuery {
  readonly source: UserSource;
  /** The type the filter asks for (search type, rag type, recommendation type), or all. */
  readonly type: string | undefined;
  /** The search method the filter asks for, or all (records have none). */
  readonly method: string | undefined;
  readonly dateRange: RangeBounds | undefined;
  /** The raw records `q` of the dataset in one edge span, narrowed as the rollups are (by type and method). */
  readonly raw: (dateRange: RangeBounds) => { readonly from: string; readonly where: Where };
}

/** Records with a user and their distinct users: of one bucket (`bucket`, epoch ms) or of the range. */
export interface UserCount {
  readonly bucket: number;
  readonly records: number;
  readonly users: number;
}

/** Whether the rollups can answer `query`: no filter value is the {@link ANY} marker. */
export const userRollupServes = (query: Pick<UserRollupQuery, 'type' | 'method'>): boolean => query.type !== ANY && query.method !== ANY;

/** The rollup rows `r` of `table` for the dataset, span, source, type and method. */
function rollupWhere(table: UserRollupTable, datasetId: string, query: UserRollupQuery, span: Span): Where {
  const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${table.column}`, span).add('r.source = ?', query.source);
  if (query.type === undefined && query.method === undefined) return where.add('r.type = ?', ANY).add('r.method = ?', ANY);
  if (query.type !== undefined) where.add('r.type = ?', query.type);
  else where.add('r.type <> ?', ANY);
  if (query.method !== undefined) where.add('r.method = ?', query.method);
  return where;
}

/** The raw records with a user of one edge span. */
function rawWhere(query: UserRollupQuery, span: Span): { from: string; where: Where } {
  const { from, where } = query.raw(rawRange(span));
  return { from, where: where.add('q.user_id IS NOT NULL') };
}

/** Adds each rollup set and raw user of `plan` to the bits of its bucket (`granularity`; none: one bucket, 0). */
async function unionBuckets(sql: ReportSql, datasetId: string, query: UserRollupQuery, plan: RangePlan, granularity: Granularity | undefined, into: Map<number, UserBits>): Promise<void> {
  const bitsOf = (bucket: number): UserBits => into.get(bucket) ?? into.set(bucket, new UserBits()).get(bucket)!;
  const reads: Promise<void>[] = [];
  for (const [table, span] of rollupSpans(plan, USER_DAILY, USER_HOURLY)) {
    const where = rollupWhere(table, datasetId, query, span);
    const bucket = granularity === undefined ? '0' : bucketStart(sql.dialect, granularity, `r.${table.column}`);
    reads.push(
      sql.all<{ bucket: number; members: Uint8Array }>(`SELECT ${bucket} AS bucket, r.members AS members FROM ${table.table} r ${where.sql()}`, where.params).then((rows) => {
        for (const r of rows) bitsOf(Number(r.bucket)).addEncoded(r.members);
      }),
    );
  }
  for (const span of plan.raw) {
    const { from, where } = rawWhere(query, span);
    const bucket = granularity === undefined ? '0' : bucketStart(sql.dialect, granularity, 'q.created_at');
    reads.push(
      sql
        .all<{ bucket: number; ordinal: number }>(
          `SELECT DISTINCT ${bucket} AS bucket, u.ordinal AS ordinal FROM ${from} JOIN ${USER_ORDINALS} u ON u.dataset_id = q.dataset_id AND u.user_id = q.user_id ${where.sql()}`,
          where.params,
        )
        .then((rows) => {
          for (const r of rows) bitsOf(Number(r.bucket)).add(Number(r.ordinal));
        }),
    );
  }
  await Promise.all(reads);
}

/**
 * The records with a user and their distinct users per bucket of `granularity` (only buckets with
 * such a record, oldest first), and over the whole range.
 */
export async function userRollupCounts(
  sql: ReportSql,
  datasetId: string,
  query: UserRollupQuery,
  granularity: Granularity,
): Promise<{ total: Omit<UserCount, 'bucket'>; points: UserCount[] }> {
  const plan = planRange(query.dateRange, granularity !== 'hour');
  type Part = { bucket: number; parts: number; records: number; users: number | null };
  const reads: Promise<Part[]>[] = [];
  for (const [table, span] of rollupSpans(plan, USER_DAILY, USER_HOURLY)) {
    const where = rollupWhere(table, datasetId, query, span);
    reads.push(
      sql.all(
        `SELECT ${bucketStart(sql.dialect, granularity, `r.${table.column}`)} AS bucket, COUNT(*) AS parts, SUM(r.records) AS records, MAX(r.users) AS users
         FROM ${table.table} r ${where.sql()} GROUP BY 1`,
        where.params,
      ),
    );
  }
  for (const span of plan.raw) {
    const { from, where } = rawWhere(query, span);
    reads.push(
      sql.all(
        `SELECT ${bucketStart(sql.dialect, granularity, 'q.created_at')} AS bucket, 1 AS parts, COUNT(*) AS records, COUNT(DISTINCT q.user_id) AS users
         FROM ${from} ${where.sql()} GROUP BY 1`,
        where.params,
      ),
    );
  }
  const byBucket = new Map<number, Part>();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const at = Number(r.bucket);
      const b = byBucket.get(at);
      if (b) {
        b.parts += Number(r.parts);
        b.records += Number(r.records);
        b.users = null;
      } else byBucket.set(at, { bucket: at, parts: Number(r.parts), records: Number(r.records), users: Number(r.parts) === 1 ? Number(r.users) : null });
    }
  }
  // Buckets made of several rows (or rows and raw records) count the union of their sets.
  if ([...byBucket.values()].some((b) => b.users === null)) {
    const bits = new Map<number, UserBits>();
    await unionBuckets(sql, datasetId, query, plan, granularity, bits);
    for (const b of byBucket.values()) if (b.users === null) b.users = bits.get(b.bucket)?.count() ?? 0;
  }
  const points = [...byBucket.values()].filter((b) => b.records > 0).sort((a, b) => a.bucket - b.bucket);
  const all = new Map<number, UserBits>();
  await unionBuckets(sql, datasetId, query, planRange(query.dateRange, true), undefined, all);
  return {
    total: { records: points.reduce((sum, b) => sum + b.records, 0), users: all.get(0)?.count() ?? 0 },
    points: points.map((b) => ({ bucket: b.bucket, records: b.records, users: b.users! })),
  };
}

/** The per-user query of the records a record rollup query reads (answers or recommendations, by subtype). */
export const recordUserQuery = (q: RecordRollupQuery): UserRollupQuery => ({ source: q.kind, type: q.subtype, method: undefined, dateRange: q.dateRange, raw: q.raw });

/**
 * Records with a user per distinct user, per bucket and over the range, from the rollups: what
 * ./rag-series.ts `perUserOverTime` gives from the raw records.
 */
export async function perUserFromRollup(sql: ReportSql, datasetId: string, query: UserRollupQuery, granularity: Granularity): Promise<{ total: number; points: TimePoint[] }> {
  const { total, points } = await userRollupCounts(sql, datasetId, query, granularity);
  return { total: ratio(total.records, total.users), points: toPoints(points, (b) => ratio(b.records, b.users)) };
}
