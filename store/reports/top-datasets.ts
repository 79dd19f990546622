/**
 * The organization's busiest datasets (`POST /api/analytics/top`): its live datasets with the
 * most searches, RAG answers or recommendations recorded in the date range, most first (ties by
 * dataset id), at most {@link TOP_DATASETS}. A dataset with none in the range is not listed.
 * The organization's datasets are read in the same statement, so an organization with many
 * datasets costs no list of ids and a dataset flagged deleted drops out at once.
 */
import type { RequestType } from '../../core/domain/user-events.js';
import { RECORD_DAILY, RECORD_HOURLY } from '../record-rollup-batch.js';
import { DAILY, HOURLY, type PeriodTable } from '../search-rollup-batch.js';
import { Where, type RangeBounds, type ReportSql } from './report-sql.js';
import { planRange, rollupSpans, spanWhere } from './rollup-range.js';

/** How many datasets the report lists (the reference's). */
export const TOP_DATASETS = 10;

/** Which records each type counts, and the rollups that count them (the column summed, and a condition on the row). */
const SOURCE_OF: Record<RequestType, { table: string; daily: PeriodTable; hourly: PeriodTable; count: string; rows?: string }> = {
  search: { table: 'search_queries', daily: DAILY, hourly: HOURLY, count: 'searches' },
  rag: { table: 'rag_queries', daily: RECORD_DAILY, hourly: RECORD_HOURLY, count: 'records', rows: "r.kind = 'rag'" },
  recommendation: { table: 'recommendation_queries', daily: RECORD_DAILY, hourly: RECORD_HOURLY, count: 'records', rows: "r.kind = 'recommendation'" },
};

/**
 * The records of dataset `d` in `range`, as an SQL sum and its parameters: whole days and hours
 * from the rollups (../search-rollup-batch.ts, ../record-rollup-batch.ts), the partial edge hours
 * counted in the records (./rollup-range.ts), so an all-time count reads a few thousand rollup
 * rows per dataset, not its millions of records.
 */
function countOf(type: RequestType, range: RangeBounds | undefined): { sql: string; params: unknown[] } {
  const source = SOURCE_OF[type];
  const plan = planRange(range, true);
  const terms: string[] = [];
  const params: unknown[] = [];
  for (const [table, span] of rollupSpans(plan, source.daily, source.hourly)) {
    const where = spanWhere(new Where().add('r.dataset_id = d.id'), `r.${table.column}`, span);
    if (source.rows !== undefined) where.add(source.rows);
    terms.push(`(SELECT COALESCE(SUM(r.${source.count}), 0) FROM ${table.table} r ${where.sql()})`);
    params.push(...where.params);
  }
  for (const span of plan.raw) {
    const where = spanWhere(new Where().add('q.dataset_id = d.id'), 'q.created_at', span);
    terms.push(`(SELECT COUNT(*) FROM ${source.table} q ${where.sql()})`);
    params.push(...where.params);
  }
  return { sql: terms.length === 0 ? '0' : terms.join(' + '), params };
}

/** A validated `POST /api/analytics/top`. */
export interface TopDatasetsRequest {
  readonly type: RequestType;
  /** Bounds on the records' `created_at` (epoch ms). */
  readonly dateRange?: RangeBounds;
}

/** One dataset of the answer, as the wire has it. */
export interface TopDataset {
  readonly dataset_id: string;
  readonly dataset_tracking_id: string | null;
  readonly total_queries: number;
}

/** The organization's top datasets by records of the asked type. */
export async function topDatasets(sql: ReportSql, organizationId: string, request: TopDatasetsRequest): Promise<TopDataset[]> {
  // A count per dataset, not one GROUP BY over every record of the organization, which sorts
  // them all to group them.
  const count = countOf(request.type, request.dateRange);
  const rows = await sql.all<{ dataset_id: string; dataset_tracking_id: string | null; total_queries: number }>(
    `SELECT d.id AS dataset_id, d.tracking_id AS dataset_tracking_id, ${count.sql} AS total_queries
     FROM datasets d WHERE d.organization_id = ? AND d.deleted = 0
     ORDER BY total_queries DESC, d.id
     LIMIT ${TOP_DATASETS}`,
    [...count.params, organizationId],
  );
  // Datasets without records sort last: dropping them after the LIMIT leaves the same list.
  return rows.filter((r) => Number(r.total_queries) > 0).map((r) => ({ dataset_id: r.dataset_id, dataset_tracking_id: r.dataset_tracking_id ?? null, total_queries: Number(r.total_queries) }));
}
